import ChildProcess from 'node:child_process';
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Os from 'node:os';
import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { mintToken } from '../../lib/auth';
import { passingTests, python, runPytest } from '../../test/helpers/pytest';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


// The container lane: builds the real Containerfile on a base made from Debian's packages and this machine's node,
// runs the image with podman and checks it over HTTP. `npm run test:container` runs it; `npm test` does not.

const root = Path.join(__dirname, '..', '..');
const ci = process.env.CI === 'true';

// Under CI=true .ci/run installs podman, so one that does not run fails the lane instead of skipping it.
const probe = ChildProcess.spawnSync('podman', ['info', '--format', '{{.Host.OCIRuntime.Name}}'], { encoding: 'utf8' });
const missing = probe.error !== undefined || probe.status !== 0;
const skip = missing && !ci;

// The Python suite needs python3 with pytest, which .ci/run installs under CI=true.
const skipPython = python === undefined && !ci;

if (skip) {
    console.log('Container lane skipped: podman does not run here. To run it: apt-get install podman buildah debootstrap runc, then npm run test:container (CI=true requires it).');
}
else if (skipPython) {
    console.log('Container lane: skipping the Python suite against the image, no python3 with pytest (apt-get install python3-pytest).');
}

// The made base is kept between runs, one per Node version; everything else the lane makes carries this run's mark.
const base = `localhost/localgate-base:bookworm-node-${process.version}`;
const mark = `lglane-${process.pid}-${Crypto.randomBytes(3).toString('hex')}`;
const image = `localhost/localgate-lane:${mark}`;
const containers: string[] = [];
const volumes: string[] = [];

const demo = JSON.parse(Fs.readFileSync(Path.join(root, 'data', 'demo', 'commerce.json'), 'utf8')) as { products: unknown[]; businesses: { id: string }[] };


interface Run {
    code: number;
    stdout: string;
    stderr: string;
}


/** Runs a command to its end; never rejects, so that a test asserts on the code and output. */
function run(command: string, args: string[]): Promise<Run> {

    return new Promise((resolve) => {

        ChildProcess.execFile(command, args, { cwd: root, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {

            const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
            resolve({ code, stdout, stderr: stderr + (err && typeof err.code !== 'number' ? err.message : '') });
        });
    });
}


/** Runs podman and returns its standard output, failing the test with its error output when it fails. */
async function podman(...args: string[]): Promise<string> {

    const result = await run('podman', args);
    expect(result.code, `podman ${args.join(' ')}: ${result.stderr}`).to.equal(0);
    return result.stdout.trim();
}


/** Fails the test where podman does not run: reached only under CI=true, where a skip would hide it. */
function expectPodman(): void {

    expect(missing, `CI=true needs podman: .ci/run installs it (${probe.error?.message ?? probe.stderr})`).to.be.false();
}


/** A named volume of this run, removed after the lane. */
async function volume(name: string): Promise<string> {

    const full = `${mark}-${name}`;
    volumes.push(full);
    await podman('volume', 'create', full);
    return full;
}


/** Where a volume of this run lives on the host, to see which files the server left in it. */
async function filesOf(name: string): Promise<string[]> {

    const mountpoint = await podman('volume', 'inspect', '--format', '{{.Mountpoint}}', name);
    return Fs.readdirSync(mountpoint).sort();
}


interface Started {
    name: string;
    url: string;
    msToHealthy: number;
}


/** Starts a container of the image published on a free loopback port; resolves at its first 200 on /health. */
async function start(name: string, args: string[] = []): Promise<Started> {

    const full = `${mark}-${name}`;
    containers.push(full);
    const began = process.hrtime.bigint();
    await podman('run', '-d', '--name', full, '-p', '127.0.0.1::3000', ...args, image);
    return { name: full, ...await healthy(full, began) };
}


/** Waits for a running container's first 200 on /health, on the port podman published for it. */
async function healthy(name: string, began = process.hrtime.bigint()): Promise<{ url: string; msToHealthy: number }> {

    const url = 'http://' + (await podman('port', name, '3000/tcp')).split('\n')[0];
    // Bounded only so that a server that never answers fails the lane with its log instead of hanging it.
    for (let i = 0; i < 6000; ++i) {
        const status = await fetch(`${url}/health`).then((res) => res.status, () => 0);
        if (status === 200) {
            return { url, msToHealthy: Number(process.hrtime.bigint() - began) / 1e6 };
        }

        // A container that exited will never answer: asked now and then, since podman itself takes a while to ask.
        if (i % 50 === 49 && await podman('inspect', '--format', '{{.State.Running}}', name) !== 'true') {
            break;
        }

        await new Promise((resolve) => setTimeout(resolve, 10));
    }

    throw new Error(`${name} never answered 200 on /health: ${(await run('podman', ['logs', name])).stderr}`);
}


/** Sends SIGTERM the way `podman stop -t 1` does (SIGKILL after one second) and returns the exit code. */
async function stop(name: string): Promise<number> {

    await podman('stop', '-t', '1', name);
    return Number(await podman('inspect', '--format', '{{.State.ExitCode}}', name));
}


/** The subject of a token, read from its payload. */
function subjectOf(token: string): string {

    return (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { sub: string }).sub;
}


describe('the image built from the Containerfile', { skip }, () => {

    const secret = Crypto.randomBytes(32).toString('hex');
    let demoServer: Started;

    before(async () => {

        if (missing) {
            return;
        }

        let began = Date.now();
        const made = await run('bash', [Path.join(root, 'container', 'base.sh'), base]);
        expect(made.code, made.stderr).to.equal(0);
        const baseSeconds = (Date.now() - began) / 1000;

        // npm run image's own script, with the made base instead of the official one.
        began = Date.now();
        const built = await run('bash', [Path.join(root, 'container', 'image.sh'), '--layers=false', '--build-arg', `BASE=${base}`, '-t', image]);
        expect(built.code, built.stdout + built.stderr).to.equal(0);
        const buildSeconds = (Date.now() - began) / 1000;

        demoServer = await start('demo');

        const size = (tag: string) => podman('image', 'inspect', '--format', '{{.Size}}', tag).then(Number);
        const added = (await size(image) - await size(base)) / 1e6;
        console.log(`Container lane: base ${baseSeconds.toFixed(1)} s, image built in ${buildSeconds.toFixed(1)} s, ${added.toFixed(1)} MB above its base, first 200 on /health ${demoServer.msToHealthy.toFixed(0)} ms after podman run`);
    });

    after(async () => {

        // Everything this run made goes, whatever failed; the made base stays as the cache of the next run.
        for (const name of containers) {
            await run('podman', ['rm', '-f', '-v', name]);
        }

        for (const name of volumes) {
            await run('podman', ['volume', 'rm', '-f', name]);
        }

        await run('podman', ['rmi', '-f', image]);
    });

    it('serves the demo data on the published port', async () => {

        expectPodman();
        const res = await fetch(`${demoServer.url}/v1/commerce/products?limit=2`);
        expect(res.status).to.equal(200);
        const body = await res.json() as { count: number; total: number };
        expect(body.count).to.equal(2);
        expect(body.total).to.equal(demo.products.length);
    });

    it('answers /health as its HEALTHCHECK does, and the HEALTHCHECK fails where nothing answers', async () => {

        expectPodman();
        const res = await fetch(`${demoServer.url}/health`);
        expect(res.status).to.equal(200);
        const health = await res.json() as { status: string; namespaces: Record<string, { storage: string }> };
        expect(health.status).to.equal('ok');
        expect(health.namespaces.commerce!.storage).to.equal('file');

        // podman prints the systemd timers it cannot make here on stderr; the exit code is the check's answer.
        const check = await run('podman', ['healthcheck', 'run', demoServer.name]);
        expect(check.code, check.stderr).to.equal(0);

        const config = JSON.parse(await podman('image', 'inspect', '--format', '{{json .Config.Healthcheck}}', image)) as { Test: string[] };
        expect(config.Test[0]).to.equal('CMD');
        expect(config.Test.slice(1, 3)).to.equal(['node', '-e']);
        const elsewhere = await run('podman', ['exec', '-e', 'PORT=1', demoServer.name, ...config.Test.slice(1)]);
        expect(elsewhere.code).to.equal(1);
    });

    it('runs its server as PID 1 under a user other than root', async () => {

        expectPodman();
        const status = await podman('exec', demoServer.name, 'cat', '/proc/1/status');
        expect(/^Uid:\s+(\d+)\s+(\d+)/m.exec(status)!.slice(1)).to.equal(['10001', '10001']);
        expect(await podman('exec', demoServer.name, 'cat', '/proc/1/comm')).to.equal('node');
    });

    it('mints a token inside with localgate token alice that the server accepts', async () => {

        expectPodman();
        const token = await podman('exec', demoServer.name, 'localgate', 'token', 'alice');
        expect(token.split('\n')).to.have.length(1);
        expect(subjectOf(token)).to.equal('alice');

        const res = await fetch(`${demoServer.url}/v1/logistics/bookings`, { headers: { authorization: `Bearer ${token}` } });
        expect(res.status).to.equal(200);
        expect(await res.json()).to.equal({ data: [], count: 0, total: 0 });
    });

    it('accepts tokens minted outside with AUTH_JWT_SECRET, admin ones included, and refuses others', async () => {

        expectPodman();
        const server = await start('secret', ['-e', `AUTH_JWT_SECRET=${secret}`, '-e', 'DATA_DIR=:memory:']);

        const mine = await fetch(`${server.url}/v1/logistics/bookings`, { headers: { authorization: `Bearer ${mintToken(secret, 'alice')}` } });
        expect(mine.status).to.equal(200);
        expect(await mine.json()).to.equal({ data: [], count: 0, total: 0 });

        const made = await fetch(`${server.url}/_instances`, {
            method: 'POST',
            headers: { authorization: `Bearer ${mintToken(secret, 'suite', 3600, { admin: true })}`, 'content-type': 'application/json' },
            body: JSON.stringify({ clock: '2030-01-01T09:00:00Z', ids: 'sequential' })
        });
        expect(made.status).to.equal(201);
        const instance = await made.json() as { base_path: string; clock: string };
        expect(instance.clock).to.equal('2030-01-01T09:00:00.000Z');
        const inInstance = await fetch(`${server.url}${instance.base_path}/v1/commerce/products?limit=1`);
        expect(inInstance.status).to.equal(200);
        expect((await inInstance.json() as { total: number }).total).to.equal(demo.products.length);

        // The scenarios the image ships: one per event type, and the examples the console presents.
        const listed = await fetch(`${server.url}/_scenarios`, { headers: { authorization: `Bearer ${mintToken(secret, 'suite', 3600, { admin: true })}` } });
        expect(listed.status).to.equal(200);
        const ids = (await listed.json() as { data: { id: string; error: string | null }[] }).data.filter((entry) => entry.error === null).map((entry) => entry.id);
        expect(ids).to.include(['builtin/pay.transaction.completed.yaml', 'example/demo.yaml']);

        const other = await fetch(`${server.url}/v1/logistics/bookings`, { headers: { authorization: `Bearer ${mintToken(Crypto.randomBytes(32).toString('hex'), 'alice')}` } });
        expect(other.status).to.equal(401);
        expect(other.headers.get('www-authenticate')!).to.startWith('Bearer');
    });

    it('keeps what was written through a stop and into a new container on the same volume', async () => {

        expectPodman();
        const data = await volume('kept');
        const first = await start('kept-1', ['-v', `${data}:/data`]);
        const token = await podman('exec', first.name, 'localgate', 'token', 'alice');

        const created = await fetch(`${first.url}/v1/commerce/products`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ name: 'Harbour bun box', price: 12.5, currency: 'EUR', business_id: demo.businesses[0]!.id })
        });
        expect(created.status).to.equal(201);
        const product = await created.json() as { id: string };

        expect(await stop(first.name)).to.equal(0);

        // A new container on the volume: the record, and the token secret kept beside the databases.
        const second = await start('kept-2', ['-v', `${data}:/data`]);
        const read = await fetch(`${second.url}/v1/commerce/products/${product.id}`);
        expect(read.status).to.equal(200);
        expect(await read.json()).to.equal(product);
        const bookings = await fetch(`${second.url}/v1/logistics/bookings`, { headers: { authorization: `Bearer ${token}` } });
        expect(bookings.status).to.equal(200);
    });

    it('keeps nothing with DATA_DIR=:memory:, on the volume or across a restart', async () => {

        expectPodman();
        const data = await volume('memory');
        const server = await start('memory', ['-v', `${data}:/data`, '-e', 'DATA_DIR=:memory:']);

        const health = await (await fetch(`${server.url}/health`)).json() as { namespaces: Record<string, { storage: string }> };
        expect(health.namespaces.commerce!.storage).to.equal('memory');
        expect(health.namespaces.logistics!.storage).to.equal('memory');

        const token = await podman('exec', server.name, 'localgate', 'token', 'alice');
        const created = await fetch(`${server.url}/v1/commerce/products`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ name: 'Throw-away bun', price: 1, currency: 'EUR', business_id: demo.businesses[0]!.id })
        });
        expect(created.status).to.equal(201);
        const product = await created.json() as { id: string };

        expect(await stop(server.name)).to.equal(0);
        expect(await filesOf(data)).to.equal([]);

        await podman('start', server.name);
        const again = await healthy(server.name);
        const read = await fetch(`${again.url}/v1/commerce/products/${product.id}`);
        expect(read.status).to.equal(404);
        const list = await (await fetch(`${again.url}/v1/commerce/products?limit=1`)).json() as { total: number };
        expect(list.total).to.equal(demo.products.length);
    });

    it('exits 0 within a second of SIGTERM, with its databases closed and checkpointed', async () => {

        expectPodman();
        const data = await volume('stopped');
        const server = await start('stopped', ['-v', `${data}:/data`]);
        const token = await podman('exec', server.name, 'localgate', 'token', 'bob');
        const created = await fetch(`${server.url}/v1/commerce/inquiries`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ business_id: demo.businesses[0]!.id, message: 'Open on Sunday?' })
        });
        expect(created.status).to.equal(201);

        // podman stop -t 1 kills what has not exited a second after SIGTERM: a kill would be 137, not 0.
        expect(await stop(server.name)).to.equal(0);
        const logs = await run('podman', ['logs', server.name]);
        expect(logs.stderr).to.contain('localgate: SIGTERM received');
        // The write drew an event position, so the turn and counter of the data set's positions are there too.
        expect(await filesOf(data)).to.equal(['.jwt-secret', 'commerce.db', 'event-positions-turn.db', 'event-positions.db', 'logistics.db', 'weather.db']);
    });

    it('passes the Python package\'s pytest suite with LOCALGATE_URL and AUTH_JWT_SECRET naming it, as a CI service', { skip: skipPython }, async () => {

        expectPodman();
        const server = await start('python', ['-e', `AUTH_JWT_SECRET=${secret}`, '-e', 'DATA_DIR=:memory:']);
        const { code, output } = await runPytest({ LOCALGATE_URL: server.url, AUTH_JWT_SECRET: secret, LOCALGATE_RECEIVER_UNREACHABLE: '1' });
        expect(code, output).to.equal(0);
        for (const line of passingTests.filter((passing) => !passing.startsWith('tests/test_webhooks.py'))) {
            expect(output).to.contain(line);
        }

        expect(output).to.match(/^=+ 31 passed, 4 skipped in /m);
    });

    it('runs the Testcontainers recipe of docs/container.md through podman\'s Docker-compatible socket', async () => {

        expectPodman();
        const socket = Path.join(Os.tmpdir(), `${mark}.sock`);
        const service = ChildProcess.spawn('podman', ['system', 'service', '--time=0', `unix://${socket}`], { stdio: 'ignore' });
        try {
            for (let i = 0; i < 1000 && !Fs.existsSync(socket); ++i) {
                await new Promise((resolve) => setTimeout(resolve, 10));
            }

            // Testcontainers reads both when it first looks for a container runtime; the reaper's image cannot be pulled.
            process.env.DOCKER_HOST = `unix://${socket}`;
            process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
            const volumesBefore = await podman('volume', 'ls', '--quiet');

            // The recipe, as the docs give it.
            const { GenericContainer, Wait } = await import('testcontainers');
            const container = await new GenericContainer(image)
                .withEnvironment({ AUTH_JWT_SECRET: secret, DATA_DIR: ':memory:' })
                .withExposedPorts(3000)
                .withWaitStrategy(Wait.forHttp('/health', 3000).forStatusCode(200))
                .start();
            // With no reaper, the lane's own cleanup removes it should a check below fail.
            containers.push(container.getId());
            const url = `http://${container.getHost()}:${container.getMappedPort(3000)}`;

            const made = await fetch(`${url}/_instances`, {
                method: 'POST',
                headers: { authorization: `Bearer ${mintToken(secret, 'suite', 3600, { admin: true })}`, 'content-type': 'application/json' },
                body: JSON.stringify({ clock: '2030-01-01T09:00:00Z', ids: 'sequential' })
            });
            expect(made.status).to.equal(201);
            const { base_path: basePath } = await made.json() as { base_path: string };
            const bookings = await fetch(`${url}${basePath}/v1/logistics/bookings`, { headers: { authorization: `Bearer ${mintToken(secret, 'alice')}` } });
            expect(bookings.status).to.equal(200);
            expect(await bookings.json()).to.equal({ data: [], count: 0, total: 0 });

            await container.stop();
            expect((await run('podman', ['container', 'exists', container.getId()])).code).to.equal(1);
            expect(await podman('volume', 'ls', '--quiet')).to.equal(volumesBefore);
        }
        finally {
            service.kill('SIGTERM');
        }
    });
});
