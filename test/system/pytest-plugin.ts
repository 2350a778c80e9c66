import ChildProcess from 'node:child_process';
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Os from 'node:os';
import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { mintToken } from '../../lib';
import { binPath, spawnServer, type SpawnedServer } from '../helpers/processes';
import { interpreters, packageDir, passingTests, python, run, runPytest } from '../helpers/pytest';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


// Under CI=true .ci/run installs python3-pytest, so a missing one fails the test instead of skipping it.
const ci = process.env.CI === 'true';
const skip = python === undefined && !ci;

if (skip) {
    console.log('Skipping the pytest plugin tests: no python3 with pytest (apt-get install python3-pytest).');
}


// Installing the package as a user does needs a venv with pip (Debian's python3-venv) and, to run a suite in it, pytest
// from the system (python3-pytest). Its build backend is its own: nothing else is installed or fetched.
const installer = interpreters.find((candidate) => ChildProcess.spawnSync(candidate, ['-c', 'import ensurepip, pytest, venv; ensurepip.version()'], { stdio: 'ignore' }).status === 0);
const skipInstall = installer === undefined && !ci;

// The backend's reading of pyproject.toml is held to tomllib's, which Python has from 3.11 on.
const tomlReader = installer !== undefined && ChildProcess.spawnSync(installer, ['-c', 'import tomllib'], { stdio: 'ignore' }).status === 0;

if (skipInstall) {
    console.log('Skipping the installed pytest plugin test: no python3 with venv and pytest (apt-get install python3-venv python3-pytest).');
}


/** Every file and folder under a folder, as paths relative to it, sorted. */
function entriesUnder(dir: string): string[] {

    return Fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}


// A user's project: the conftest.py line the testing guide shows, and two tests of its own.
const userProject = {
    'conftest.py': 'pytest_plugins = ["localgate_testing.pytest_plugin"]\n',
    'test_shop.py': [
        'import pytest',
        '',
        '',
        'def test_the_demo_catalogue_answers(localgate_instance):',
        '    assert localgate_instance.get("/v1/commerce/products?limit=1").status == 200',
        '',
        '',
        '@pytest.mark.localgate(seed="none")',
        'def test_an_empty_world_has_no_products(localgate_instance):',
        '    assert localgate_instance.get("/v1/commerce/products").body["total"] == 0',
        ''
    ].join('\n')
};


describe('the pytest plugin of clients/python', { skip }, () => {

    describe('against a server named by LOCALGATE_URL', () => {

        const secret = Crypto.randomBytes(32).toString('hex');
        let server: SpawnedServer;

        before(async () => {

            server = await spawnServer({ AUTH_JWT_SECRET: secret }, ['--memory']);
        });

        after(async () => {

            await server.stop();
        });

        it('passes its suite, each test in an instance of its own, deleted after', { timeout: 180_000 }, async () => {

            const { code, output } = await runPytest({ LOCALGATE_URL: server.url, AUTH_JWT_SECRET: secret });
            expect(code, output).to.equal(0);
            for (const line of passingTests) {
                expect(output).to.contain(line);
            }

            expect(output).to.match(/^=+ 35 passed in /m);

            // Every instance the suite made is gone.
            const listed = await fetch(`${server.url}/_instances`, { headers: { authorization: `Bearer ${mintToken(secret, 'admin', 600, { admin: true })}` } });
            expect(listed.status).to.equal(200);
            expect((await listed.json() as { total: number }).total).to.equal(0);
        });

        it('skips the test that changes the default data set in an xdist worker sharing the server', { timeout: 180_000 }, async () => {

            const { code, output } = await runPytest({ LOCALGATE_URL: server.url, AUTH_JWT_SECRET: secret, PYTEST_XDIST_WORKER: 'gw1' }, 'tests/test_faults_journal.py');
            expect(code, output).to.equal(0);
            expect(output).to.contain('tests/test_faults_journal.py::test_the_default_data_set_has_its_own_faults_and_journal SKIPPED');
            expect(output).to.match(/^=+ 2 passed, 1 skipped in /m);
        });

        it('fails its suite where the secret is not the server\'s', { timeout: 180_000 }, async () => {

            const { code, output } = await runPytest({ LOCALGATE_URL: server.url, AUTH_JWT_SECRET: Crypto.randomBytes(32).toString('hex') });
            expect(code).to.equal(1);
            expect(output).to.contain('LocalgateError: 401 unauthorized');
        });
    });

    it('starts a server for the session where no LOCALGATE_URL is set, and stops it after', { timeout: 300_000 }, async () => {

        const { code, output } = await runPytest({ LOCALGATE_COMMAND: `${process.execPath} ${binPath}` });
        expect(code, output).to.equal(0);
        expect(output).to.match(/^=+ 35 passed in /m);
    });

    it('says what went wrong where the server cannot start', { timeout: 180_000 }, async () => {

        const { code, output } = await runPytest({ LOCALGATE_COMMAND: `${process.execPath} ${binPath} --no-such-flag` });
        expect(code).to.equal(1);
        expect(output).to.contain('RuntimeError: localgate exited with 2 before listening');
        // The command was the user's own: no advice about npx.
        expect(output).to.not.contain('LOCALGATE_COMMAND is not set');
    });
});



describe('the pytest plugin installed into a virtual environment', { skip: skipInstall }, () => {

    const secret = Crypto.randomBytes(32).toString('hex');
    let server: SpawnedServer;
    let scratch: string;
    let venvPython: string;
    let project: string;

    // Python as a user's project runs it: only the venv's interpreter, nothing of this repository on its path.
    const projectEnv = (env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, HOME: process.env.HOME, PYTHONDONTWRITEBYTECODE: '1', ...env });

    before(async () => {

        server = await spawnServer({ AUTH_JWT_SECRET: secret }, ['--memory']);
        scratch = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'localgate-venv-'));
        venvPython = Path.join(scratch, 'venv', 'bin', 'python');
        project = Path.join(scratch, 'project');
        Fs.mkdirSync(project);
        for (const [name, text] of Object.entries(userProject)) {
            Fs.writeFileSync(Path.join(project, name), text);
        }
    });

    after(async () => {

        await server.stop();
        Fs.rmSync(scratch, { recursive: true, force: true });
    });

    it('installs offline with pip, leaving the package folder as it was', { timeout: 180_000 }, async () => {

        expect(installer, 'CI=true needs python3 with venv and pytest: .ci/run installs python3-venv and python3-pytest').to.exist();
        const made = await run(installer!, ['-m', 'venv', '--system-site-packages', Path.join(scratch, 'venv')], scratch, projectEnv());
        expect(made.code, made.output).to.equal(0);

        const listed = entriesUnder(packageDir);
        // The documented command, with pip's own build isolation; --no-index makes any fetch fail, as offline. The
        // machine's own pip settings (indexes, caches) stay out, and bytecode may be written, as a user's pip writes it.
        const installed = await run(venvPython, ['-m', 'pip', 'install', '--no-index', packageDir], scratch, { PATH: process.env.PATH, HOME: process.env.HOME, PIP_CONFIG_FILE: Os.devNull, PIP_DISABLE_PIP_VERSION_CHECK: '1' });
        expect(installed.code, installed.output).to.equal(0);
        expect(installed.output).to.contain('Successfully installed localgate-testing-0.1.0');
        expect(entriesUnder(packageDir)).to.equal(listed);
    });

    it('installs into a venv that has nothing but pip, with no build backend to fetch', { timeout: 180_000 }, async () => {

        expect(installer, 'CI=true needs python3 with venv and pytest: .ci/run installs python3-venv and python3-pytest').to.exist();
        const bare = Path.join(scratch, 'bare');
        const made = await run(installer!, ['-m', 'venv', bare], scratch, projectEnv());
        expect(made.code, made.output).to.equal(0);

        const barePython = Path.join(bare, 'bin', 'python');
        const noFlit = await run(barePython, ['-c', 'import flit_core'], scratch, projectEnv());
        expect(noFlit.code).to.equal(1);
        const installed = await run(barePython, ['-m', 'pip', 'install', '--no-index', packageDir], scratch, projectEnv({ PIP_CONFIG_FILE: Os.devNull, PIP_DISABLE_PIP_VERSION_CHECK: '1' }));
        expect(installed.code, installed.output).to.equal(0);
        const loaded = await run(barePython, ['-c', 'import importlib.metadata as m, localgate_testing.client; print(m.version("localgate-testing"), [e.value for e in m.entry_points(group="pytest11") if e.name.startswith("localgate")])'], scratch, projectEnv());
        expect(loaded.code, loaded.output).to.equal(0);
        expect(loaded.output.trim()).to.equal('0.1.0 [\'localgate_testing.pytest_plugin\']');
    });

    it('reads pyproject.toml as the standard TOML reader does', { timeout: 60_000, skip: !tomlReader && !ci }, async () => {

        expect(tomlReader, 'CI=true needs a python3 of 3.11 or later with venv and pytest').to.be.true();
        // The backend reads the subset of TOML the file uses; tomllib (Python 3.11 on) reads all of it.
        const compare = [
            'import sys, json',
            `sys.path.insert(0, ${JSON.stringify(Path.join(packageDir, 'backend'))})`,
            'import localgate_backend',
            'import tomllib',
            `path = ${JSON.stringify(Path.join(packageDir, 'pyproject.toml'))}`,
            'with open(path, "rb") as handle: full = tomllib.load(handle)',
            'mine = localgate_backend.read_pyproject(path)',
            'project = dict((k, v) for k, v in full["project"].items() if k != "entry-points")',
            'points = dict(("project.entry-points." + group, entries) for group, entries in full["project"]["entry-points"].items())',
            'print(json.dumps(mine == dict([("build-system", full["build-system"]), ("project", project)] + list(points.items()))))'
        ].join('\n');
        const { code, output } = await run(installer!, ['-c', compare], scratch, projectEnv());
        expect(code, output).to.equal(0);
        expect(output.trim()).to.equal('true');
    });

    it('runs a project\'s suite with the documented conftest.py, the plugin loaded once', { timeout: 180_000 }, async () => {

        const { code, output } = await run(venvPython, ['-m', 'pytest', '-p', 'no:cacheprovider', '-v'], project, projectEnv({ LOCALGATE_URL: server.url, AUTH_JWT_SECRET: secret }));
        expect(code, output).to.equal(0);
        expect(output).to.contain('test_shop.py::test_the_demo_catalogue_answers PASSED');
        expect(output).to.contain('test_shop.py::test_an_empty_world_has_no_products PASSED');
        expect(output).to.match(/^=+ 2 passed in /m);
    });

    it('loads the plugin once however it is named: entry point, conftest.py and -p together', { timeout: 180_000 }, async () => {

        const { code, output } = await run(venvPython, ['-m', 'pytest', '-p', 'no:cacheprovider', '-p', 'localgate_testing.pytest_plugin', '-v'], project, projectEnv({ LOCALGATE_URL: server.url, AUTH_JWT_SECRET: secret }));
        expect(code, output).to.equal(0);
        expect(output).to.match(/^=+ 2 passed in /m);
    });

    it('loads the plugin from conftest.py alone where entry points are turned off', { timeout: 180_000 }, async () => {

        const { code, output } = await run(venvPython, ['-m', 'pytest', '-p', 'no:cacheprovider', '-v'], project, projectEnv({ LOCALGATE_URL: server.url, AUTH_JWT_SECRET: secret, PYTEST_DISABLE_PLUGIN_AUTOLOAD: '1' }));
        expect(code, output).to.equal(0);
        expect(output).to.match(/^=+ 2 passed in /m);
    });

    it('says what to set where the project has no localgate to start', { timeout: 180_000 }, async () => {

        // npm offline: the lookup fails at once, as a registry 404 does, without the network.
        const { code, output } = await run(venvPython, ['-m', 'pytest', '-p', 'no:cacheprovider'], project, projectEnv({ npm_config_offline: 'true' }));
        expect(code).to.equal(1);
        expect(output).to.contain('RuntimeError: localgate exited with 1 before listening (npx --no-install localgate start --memory --port 0)');
        expect(output).to.contain(`LOCALGATE_COMMAND is not set, so the plugin ran \`npx --no-install localgate\` in ${project}, and npm found no localgate to start there.`);
        expect(output).to.contain('set LOCALGATE_URL and AUTH_JWT_SECRET to use a server that is running.');
        expect(output).to.match(/^=+ 2 errors in /m);
    });
});
