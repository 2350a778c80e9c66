import ChildProcess from 'node:child_process';
import Crypto from 'node:crypto';
import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { mintToken } from '../lib';
import { binPath, spawnServer, type SpawnedServer } from './helpers/processes';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


// The Python package users import: clients/python/localgate_testing, its pytest plugin and its own tests.
const packageDir = Path.join(__dirname, '..', 'clients', 'python');

// Debian's python3-pytest serves /usr/bin/python3; a python3 earlier on PATH may have pytest of its own.
const interpreters = ['python3', '/usr/bin/python3'];
const python = interpreters.find((candidate) => ChildProcess.spawnSync(candidate, ['-c', 'import pytest'], { stdio: 'ignore' }).status === 0);

// Under CI=true .ci/run installs python3-pytest, so a missing one fails the test instead of skipping it.
const ci = process.env.CI === 'true';
const skip = python === undefined && !ci;

if (skip) {
    console.log('Skipping the pytest plugin tests: no python3 with pytest (apt-get install python3-pytest).');
}


interface Run {
    code: number | null;
    output: string;
}


/** Runs the package's pytest suite with the environment given; resolves to its exit code and output. */
function runPytest(env: NodeJS.ProcessEnv, tests = 'tests'): Promise<Run> {

    expect(python, 'CI=true needs python3 with pytest: .ci/run installs python3-pytest').to.exist();
    return new Promise((resolve) => {

        const child = ChildProcess.spawn(python!, ['-m', 'pytest', '-p', 'no:cacheprovider', '-v', tests], {
            cwd: packageDir,
            env: { PATH: process.env.PATH, HOME: process.env.HOME, PYTHONPATH: packageDir, PYTHONDONTWRITEBYTECODE: '1', ...env },
            stdio: ['ignore', 'pipe', 'pipe']
        });
        let output = '';
        const collect = (chunk: Buffer) => {

            output += chunk.toString();
        };

        child.stdout.on('data', collect);
        child.stderr.on('data', collect);
        child.once('close', (code) => resolve({ code, output }));
    });
}


const passingTests = [
    'tests/test_client.py::test_the_instance_url_answers_plain_http_clients PASSED',
    'tests/test_client.py::test_snapshot_restore_and_reset PASSED',
    'tests/test_client.py::test_the_clock_freezes_and_moves PASSED',
    'tests/test_client.py::test_a_refused_admin_call_raises_with_the_error_code PASSED',
    'tests/test_client.py::test_tokens_need_a_future_expiry PASSED',
    'tests/test_client.py::test_a_fork_copies_the_instance_as_it_is_now PASSED',
    'tests/test_client.py::test_the_default_data_set_exports_as_a_fixture_an_instance_loads PASSED',
    'tests/test_client.py::test_an_export_loads_back_into_a_new_instance PASSED',
    'tests/test_example.py::test_a_booking_is_private_to_its_customer PASSED',
    'tests/test_example.py::test_each_test_starts_from_the_demo_data_again PASSED',
    'tests/test_example.py::test_an_empty_world_with_a_frozen_clock PASSED',
    'tests/test_faults_journal.py::test_an_instance_fault_fires_as_set_counts_its_hits_and_clears PASSED',
    'tests/test_faults_journal.py::test_an_instance_journal_lists_counts_finds_and_clears PASSED',
    'tests/test_faults_journal.py::test_the_default_data_set_has_its_own_faults_and_journal PASSED'
];


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

            expect(output).to.match(/^=+ 14 passed in /m);

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
        expect(output).to.match(/^=+ 14 passed in /m);
    });

    it('says what went wrong where the server cannot start', { timeout: 180_000 }, async () => {

        const { code, output } = await runPytest({ LOCALGATE_COMMAND: `${process.execPath} ${binPath} --no-such-flag` });
        expect(code).to.equal(1);
        expect(output).to.contain('RuntimeError: localgate exited with 2 before listening');
    });
});

