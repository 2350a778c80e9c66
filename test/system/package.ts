import ChildProcess from 'node:child_process';
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { type Finished, runProcess, spawnListening } from '../helpers/processes';
import { tempDir } from '../helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


// Slow lane, about 30 s: packs this package, installs the tarball into an empty project with no network, and uses it
// there the way a user does (npx localgate, import from localgate/testing).

const root = Path.join(__dirname, '..', '..');

interface LockEntry {
    version: string;
    integrity?: string;
    dev?: boolean;
    dependencies?: Record<string, string>;
}

interface Manifest {
    name: string;
    private?: boolean;
    version: string;
    license: string;
    bin: Record<string, string>;
    engines: Record<string, string>;
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
}

const manifest = JSON.parse(Fs.readFileSync(Path.join(root, 'package.json'), 'utf8')) as Manifest;
const lock = JSON.parse(Fs.readFileSync(Path.join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };

// Under CI=true .ci/run has just filled the npm cache with npm ci, so an install that cannot run fails the test.
const ci = process.env.CI === 'true';

const cacheProbe = ChildProcess.spawnSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' });
const cacheDir = cacheProbe.status === 0 ? cacheProbe.stdout.trim() : null;

// npm as a user runs it: without the npm_* variables of the `npm test` around this test, which point at this repo.
const npmEnv: NodeJS.ProcessEnv = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name))),
    ...(cacheDir ? { npm_config_cache: cacheDir } : {})
};

const consumerEntries = installedEntries();
const uncached = cacheDir ? Object.entries(consumerEntries).filter(([, entry]) => !cached(cacheDir, entry.integrity!)).map(([path]) => path) : ['npm'];
const skip = uncached.length > 0 && !ci;

if (skip) {
    console.log(`Skipping the package install test: the npm cache lacks ${uncached.length} of the packages it installs offline (${uncached[0]}, …): run npm ci first.`);
}


/** The lock entries the consumer project installs besides localgate: its runtime dependencies, and @types/node for tsc. */
function installedEntries(): Record<string, LockEntry> {

    const entries: Record<string, LockEntry> = {};
    for (const [path, entry] of Object.entries(lock.packages)) {
        if (path && !entry.dev) {
            entries[path] = entry;
        }
    }

    const addWithDependencies = (path: string) => {

        entries[path] = lock.packages[path]!;
        for (const name of Object.keys(lock.packages[path]!.dependencies ?? {})) {
            addWithDependencies(`node_modules/${name}`);
        }
    };

    addWithDependencies('node_modules/@types/node');
    return entries;
}


// npm's cache (cacache) files every tarball under its integrity digest; `npm ci --offline` reads it from there.
function cached(cache: string, integrity: string): boolean {

    const [algorithm, digest] = integrity.split('-') as [string, string];
    const hex = Buffer.from(digest, 'base64').toString('hex');
    return Fs.existsSync(Path.join(cache, '_cacache', 'content-v2', algorithm, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4)));
}


/** Runs a command to completion in the consumer project. */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = npmEnv): Promise<Finished> {

    return runProcess(command, args, { cwd, env });
}


const kitSource = `import { createServer, mintToken } from 'localgate';
import { createTestKit, startReceiver, type Event, type ReceivedWebhook, type TestInstanceOptions, type WebhookEndpointSet } from 'localgate/testing';

// @ts-expect-error: the kit's types know the seeds, so a misspelt one is an error here
export const misspelt: TestInstanceOptions = { seed: 'demos' };

async function main(): Promise<void> {

    const kit = await createTestKit();
    const t = await kit.instance({ clock: '2030-01-01T00:00:00Z', ids: 'sequential' });
    const products = await t.inject('/v1/commerce/products?limit=1');
    const total: number = (JSON.parse(products.payload) as { total: number }).total;
    console.log(\`products \${products.statusCode} \${total} at \${t.clock.now().toISOString()}\`);
    const receiver = await startReceiver();
    const endpoints: WebhookEndpointSet[] = await t.webhooks.set([{ url: receiver.url, secret: receiver.secret, types: ['commerce.*'] }]);
    const events: Event[] = await t.events.list({ limit: 1 });
    const deliveries: ReceivedWebhook[] = receiver.deliveries;
    console.log(\`webhooks \${endpoints.map(({ types }) => types?.join()).join()} \${events.length} \${deliveries.length}\`);
    await receiver.close();
    t.close();
    await kit.close();

    const server = await createServer({ dataDir: ':memory:', logLevel: 'silent' });
    const bookings = await server.inject({ url: '/v1/logistics/bookings', headers: { authorization: \`Bearer \${mintToken(server.app.localgate.secret, 'alice')}\` } });
    console.log(\`bookings \${bookings.statusCode}\`);
    await server.stop();
}

main().catch((err: unknown) => {

    console.error(err);
    process.exitCode = 1;
});
`;

const strict = { strict: true, target: 'ES2022', types: ['node'], noEmit: true };

// node16 is what TypeScript advises for Node and reads the exports map; node10 (this repo's own setting) reads
// typesVersions instead, and needs esModuleInterop, as tsc --init sets it, for the default imports of our declarations.
const tsconfigs = {
    'tsconfig.node16.json': { ...strict, module: 'node16', moduleResolution: 'node16', noEmit: false, outDir: 'out' },
    'tsconfig.node10.json': { ...strict, module: 'commonjs', moduleResolution: 'node10', esModuleInterop: true }
};


describe('the package, packed and installed into an empty project (slow)', { skip, timeout: 120_000 }, () => {

    let dir: string | undefined;
    let app: string;
    let files: string[] = [];

    before({ timeout: 180_000 }, async () => {

        expect(uncached, `CI=true needs every package in the npm cache (${cacheDir ?? cacheProbe.stderr}): .ci/run fills it with npm ci`).to.equal([]);
        dir = tempDir('localgate-package-');
        app = Path.join(dir, 'app');

        // npm test has just built dist/; packing must not rebuild it under the tests that are running it.
        const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], root);
        expect(packed.code, packed.stderr).to.equal(0);
        const [tarball] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
        files = tarball!.files.map((file) => file.path);

        // npm 11 resolves a version range only from the registry's full package document, and a cache filled by
        // npm ci holds the tarballs but not those documents, so `npm install --offline <tarball>` cannot run. A lock
        // file made from this repo's pins the dependencies to the versions this repo tests with, and
        // `npm ci --offline` takes every tarball from the cache, checked against its integrity.
        const spec = `file:../${tarball!.filename}`;
        const consumer = { name: 'consumer', version: '1.0.0', dependencies: { localgate: spec }, devDependencies: { '@types/node': manifest.devDependencies['@types/node']! } };
        const integrity = 'sha512-' + Crypto.createHash('sha512').update(Fs.readFileSync(Path.join(dir, tarball!.filename))).digest('base64');
        const localgate = { version: manifest.version, resolved: spec, integrity, license: manifest.license, dependencies: manifest.dependencies, bin: manifest.bin, engines: manifest.engines };
        Fs.mkdirSync(app);
        Fs.writeFileSync(Path.join(app, 'package.json'), JSON.stringify({ ...consumer, private: true }, null, 2));
        Fs.writeFileSync(Path.join(app, 'package-lock.json'), JSON.stringify({
            name: consumer.name,
            version: consumer.version,
            lockfileVersion: 3,
            requires: true,
            packages: { '': consumer, 'node_modules/localgate': localgate, ...consumerEntries }
        }, null, 2));

        // better-sqlite3's install script downloads a prebuilt binary or else compiles SQLite, minutes on two cores:
        // the install skips it, and the binary this repo built from the same version for this Node is copied in.
        const installed = await run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], app);
        expect(installed.code, installed.stderr).to.equal(0);
        const sqlite = (base: string) => Path.join(base, 'node_modules', 'better-sqlite3');
        const version = (base: string) => (JSON.parse(Fs.readFileSync(Path.join(sqlite(base), 'package.json'), 'utf8')) as { version: string }).version;
        expect(version(app)).to.equal(version(root));
        Fs.cpSync(Path.join(sqlite(root), 'build', 'Release', 'better_sqlite3.node'), Path.join(sqlite(app), 'build', 'Release', 'better_sqlite3.node'));
    });

    after(() => {

        if (dir) {
            Fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    it('ships the command, the build, the migrations and the demo data, and nothing of the tests', () => {

        expect(files).to.include(['package.json', 'README.md', 'bin/localgate.js', 'dist/index.js', 'dist/index.d.ts', 'dist/testing.js', 'dist/testing.d.ts', 'dist/cli/index.js', 'data/demo/commerce.json', 'data/demo/logistics.json', 'clients/python/localgate_testing/__init__.py', 'clients/python/localgate_testing/client.py', 'clients/python/localgate_testing/pytest_plugin.py', 'clients/python/pyproject.toml']);
        expect(files.filter((path) => path.startsWith('clients/python/tests/'))).to.equal([]);
        const migrations = Fs.readdirSync(Path.join(root, 'migrations'), { recursive: true, encoding: 'utf8' }).filter((path) => path.endsWith('.sql'));
        expect(files.filter((path) => path.startsWith('migrations/')).sort()).to.equal(migrations.map((path) => `migrations/${path}`).sort());
        const shipped = JSON.parse(Fs.readFileSync(Path.join(app, 'node_modules', 'localgate', 'package.json'), 'utf8')) as Manifest;
        expect(shipped.private).to.not.exist();
        // What files leaves out: tests, benches, sources, CI, and local databases and secrets.
        expect(files.filter((path) => /^(?:test|bench|lib|\.ci)\/|^data\/(?!demo\/|scenarios\/)|\.db$/.test(path))).to.equal([]);
        // localgate trigger reads its built-in scenarios from the package.
        expect(files.filter((path) => path.startsWith('data/scenarios/')).sort()).to.equal(Fs.readdirSync(Path.join(root, 'data', 'scenarios')).map((name) => `data/scenarios/${name}`).sort());
        // The console presents the examples (GET /_scenarios), the README's demo among them.
        expect(files.filter((path) => path.startsWith('examples/')).sort()).to.equal(Fs.readdirSync(Path.join(root, 'examples', 'scenarios')).map((name) => `examples/scenarios/${name}`).sort());
    });

    it('starts with npx localgate start --memory, answers /health and takes a token from npx localgate token', async () => {

        const server = await spawnListening('npx', ['--no', 'localgate', 'start', '--port', '0', '--memory'], { cwd: app, env: { ...npmEnv, LOG_LEVEL: 'silent' }, group: true });
        try {
            const health = await fetch(`${server.url}/health`);
            expect(health.status).to.equal(200);
            expect(await health.json()).to.include({ status: 'ok' });

            // The second shell: the secret the server keeps in ./data is the one the token command signs with.
            const minted = await run('npx', ['--no', 'localgate', 'token', 'alice'], app);
            expect(minted.code, minted.stderr).to.equal(0);
            const bookings = await fetch(`${server.url}/v1/logistics/bookings`, { headers: { authorization: `Bearer ${minted.stdout.trim()}` } });
            expect(bookings.status).to.equal(200);
            expect(await bookings.json()).to.equal({ data: [], count: 0, total: 0 });
        }
        finally {
            await server.stop();
        }
    });

    it('type-checks a TypeScript file importing localgate/testing under strict settings, and runs it', async () => {

        Fs.writeFileSync(Path.join(app, 'kit.ts'), kitSource);
        const tsc = Path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
        for (const [name, compilerOptions] of Object.entries(tsconfigs)) {
            Fs.writeFileSync(Path.join(app, name), JSON.stringify({ compilerOptions, files: ['kit.ts'] }));
            const checked = await run(process.execPath, [tsc, '-p', name], app);
            expect(checked.code, `${name}: ${checked.stdout}`).to.equal(0);
        }

        const ran = await run(process.execPath, [Path.join('out', 'kit.js')], app);
        expect(ran.code, ran.stderr).to.equal(0);
        expect(ran.stdout).to.equal('products 200 35 at 2030-01-01T00:00:00.000Z\nwebhooks commerce.* 0 0\nbookings 200\n');
    });
});


describe('the repository', () => {

    it('allows no install script but better-sqlite3\'s, and ignores the tarballs npm pack leaves', () => {

        const own = JSON.parse(Fs.readFileSync(Path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { allowScripts: Record<string, boolean> };
        // The refused ones: swagger-ui-dist's tracking script, and testcontainers' optional native parts for SSH and gRPC.
        expect(own.allowScripts).to.equal({ 'better-sqlite3': true, '@scarf/scarf': false, 'cpu-features': false, protobufjs: false, ssh2: false });
        expect(Fs.existsSync(Path.join(__dirname, '..', '..', '.npmrc'))).to.be.false();
        expect(Fs.readFileSync(Path.join(__dirname, '..', '..', '.gitignore'), 'utf8').split('\n')).to.include('*.tgz');
    });
});
