import ChildProcess from 'node:child_process';
import Fs from 'node:fs';
import Net from 'node:net';
import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { runCli, spawnServer } from '../helpers/processes';
import { tempDir } from '../helpers/server';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


describe('the localgate process', { timeout: 30_000 }, () => {

    it('starts on the SQLite default without requiring pg', () => {

        const script = `
            const { createServer } = require(${JSON.stringify(Path.resolve(__dirname, '..', '..', 'dist'))});
            createServer({ storage: 'memory', logLevel: 'silent', memoryPay: true }).then(async (server) => {

                const loaded = Object.keys(require.cache).some((file) => file.includes('/node_modules/pg/'));
                await server.stop();
                process.stdout.write(String(loaded));
            });`;
        const res = ChildProcess.spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60_000 });
        expect(res.stderr).to.equal('');
        expect(res.stdout).to.equal('false');
    });

    it('serves tokens minted by `localgate token` and stops cleanly on SIGINT', async () => {

        const dir = tempDir();
        const server = await spawnServer({ DATA_DIR: dir });
        const minted = await runCli(['token', 'alice'], { DATA_DIR: dir });
        expect(minted.code).to.equal(0);
        expect(minted.stdout.trim().split('\n')).to.have.length(1);

        const res = await fetch(`${server.url}/v1/pay/status`, { headers: { authorization: `Bearer ${minted.stdout.trim()}` } });
        expect(res.status).to.equal(200);
        const unauthorized = await fetch(`${server.url}/health`, { headers: { authorization: 'Bearer nope' } });
        expect(unauthorized.status).to.equal(200);

        expect(await server.stop('SIGINT')).to.equal(0);
        expect(server.output()).to.contain('SIGINT received');
        expect(Fs.existsSync(Path.join(dir, 'commerce.db'))).to.be.true();
        expect(Fs.existsSync(Path.join(dir, 'commerce.db-wal'))).to.be.false();
    });

    it('refuses a port in use with its one line only, no log line of a server that never served', async () => {

        const blocker = Net.createServer();
        await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
        const { port } = blocker.address() as Net.AddressInfo;
        const res = await runCli(['start', '--memory', '--port', String(port)], { LOG_LEVEL: 'info', LOG_FORMAT: 'json', DATA_DIR: tempDir() });
        blocker.close();
        const refusal = `localgate: port ${port} on 127.0.0.1 is in use by another program: stop it, or set PORT=0 (or --port 0) to take a free port\n`;
        expect(res).to.equal({ code: 1, stdout: '', stderr: refusal, output: refusal });
    });

    it('logs one pretty line per request with LOG_FORMAT=pretty', async () => {

        const server = await spawnServer({ DATA_DIR: tempDir(), LOG_LEVEL: 'info', LOG_FORMAT: 'pretty' }, ['--memory']);
        await fetch(`${server.url}/health`, { headers: { 'x-request-id': 'demo-1' } });
        expect(await server.stop('SIGINT')).to.equal(0);
        expect(server.output()).to.match(/^\d\d:\d\d:\d\d get \/health 200 \(\d+ms\)  demo-1$/m);
        expect(server.output()).to.not.contain('{"level"');
    });

    it('lets several processes start on one fresh data directory at once', async () => {

        const dir = tempDir();
        const runs = await Promise.all([1, 2, 3, 4].map(() => runCli(['migrate'], { DATA_DIR: dir })));
        expect(runs.map((result) => result.code)).to.equal([0, 0, 0, 0]);
        for (const result of runs) {
            expect(result.stdout).to.contain('weather: schema version 1');
        }
    });

    it('exits non-zero with one line for an invalid setting', async () => {

        const res = await runCli(['start'], { PORT: 'abc', DATA_DIR: tempDir() });
        expect(res.code).to.equal(1);
        expect(res.stderr).to.equal('localgate: PORT must be a number\n');
    });

    it('exits non-zero naming the file when a migration was edited after it was applied', async () => {

        const dir = tempDir();
        expect((await runCli(['migrate'], { DATA_DIR: dir })).code).to.equal(0);
        const Sqlite = (await import('better-sqlite3')).default;
        const db = new Sqlite(Path.join(dir, 'weather.db'));
        db.prepare(`UPDATE schema_migrations SET checksum = 'x' WHERE version = 1`).run();
        db.close();
        const res = await runCli(['start'], { DATA_DIR: dir });
        expect(res.code).to.equal(1);
        expect(res.stderr).to.match(/^localgate: Migration .*migrations\/sqlite\/weather\/001_forecasts\.sql was edited after it was applied to .*weather\.db/);
    });
});
