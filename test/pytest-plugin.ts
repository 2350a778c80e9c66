import Crypto from 'node:crypto';

import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { mintToken } from '../lib';
import { binPath, spawnServer, type SpawnedServer } from './helpers/processes';
import { passingTests, python, runPytest } from './helpers/pytest';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


// Under CI=true .ci/run installs python3-pytest, so a missing one fails the test instead of skipping it.
const ci = process.env.CI === 'true';
const skip = python === undefined && !ci;

if (skip) {
    console.log('Skipping the pytest plugin tests: no python3 with pytest (apt-get install python3-pytest).');
}


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

