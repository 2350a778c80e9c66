import Fs from 'node:fs';
import Net from 'node:net';
import Path from 'node:path';

import Code from '@hapi/code';
import Jwt from '@hapi/jwt';
import Lab from '@hapi/lab';

import { resolveSecret } from '../lib/auth';
import { main, type Io } from '../lib/cli';
import { logFormat, tokenCommand } from '../lib/cli/start';
import { ttlSeconds } from '../lib/cli/token';
import { settingsFromEnvironment } from '../lib';
import { packageRoot } from '../lib/paths';
import { databasesWhere } from '../lib/storage';
import { mintPayKeys } from '../lib/storage/pay-keys';
import { absentDatabaseFiles } from '../lib/storage';
import { removeDatabaseFiles } from '../lib/storage/sqlite/files';
import { followPayFile, statusOf } from './helpers/pay-file';
import { freshDatabase, skipWithoutPostgres } from './helpers/postgres';
import { bearer, body, breakIntegrity, damagePages, tempDir, testServer } from './helpers/server';
import { until } from './helpers/until';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


function capture(): Io & { stdout: string[]; stderr: string[] } {

    const stdout: string[] = [];
    const stderr: string[] = [];
    return { stdout, stderr, out: (line) => stdout.push(line), err: (line) => stderr.push(line) };
}


async function run(argv: string[], env: NodeJS.ProcessEnv = {}) {

    const io = capture();
    const code = await main(argv, { LOG_LEVEL: 'silent', ...env }, io);
    return { code, stdout: io.stdout.join('\n'), stderr: io.stderr.join('\n') };
}


describe('the command line', () => {

    it('prints its usage with --help, naming the PostgreSQL and snapshot settings', async () => {

        const res = await run(['--help']);
        expect(res.code).to.equal(0);
        expect(res.stdout).to.contain('Usage: localgate <command> [options]');
        for (const setting of ['DATABASE_URL', 'COMMERCE_DB_URL', 'LOGISTICS_DB_URL', 'WEATHER_DB_URL', 'DB_POOL_MAX', 'DB_CONNECT_TIMEOUT_MS', 'DB_STATEMENT_TIMEOUT_MS', 'MAX_SNAPSHOT_MIB', 'LOG_FORMAT', 'VALIDATE_RESPONSES']) {
            expect(res.stdout, setting).to.contain(setting);
        }
    });

    it('logs pretty lines on a terminal unless LOG_FORMAT says otherwise, JSON elsewhere', () => {

        expect([logFormat('auto', true), logFormat('auto', false), logFormat('auto', undefined)]).to.equal(['pretty', 'json', 'json']);
        expect([logFormat('json', true), logFormat('pretty', false)]).to.equal(['json', 'pretty']);
    });

    it('names the --memory-pay flag when it is given without --memory', async () => {

        const res = await run(['start', '--memory-pay']);
        expect(res).to.equal({ code: 1, stdout: '', stderr: 'localgate: --memory-pay needs storage in memory (--memory or DATA_DIR=:memory:); for files run `npx localgate provision pay`' });
    });

    it('exits 2 with the usage on an unknown command or flag', async () => {

        const command = await run(['serve']);
        expect(command.code).to.equal(2);
        expect(command.stderr).to.startWith('localgate: unknown command "serve"\nUsage:');
        const flag = await run(['start', '--colour']);
        expect(flag.code).to.equal(2);
        expect(flag.stderr).to.contain(`Unknown option '--colour'`);
    });

    it('stops with one line naming an invalid setting', async () => {

        const res = await run(['start'], { PORT: 'eighty' });
        expect(res).to.equal({ code: 1, stdout: '', stderr: 'localgate: PORT must be a number' });
        const short = await run(['start', '--memory'], { AUTH_JWT_SECRET: 'too short' });
        expect(short.stderr).to.equal('localgate: AUTH_JWT_SECRET must be at least 32 bytes long');
    });

    it('starts, prints where it listens, and stops on SIGTERM', async () => {

        const io = capture();
        const dir = tempDir();
        const stopped = main(['start', '--memory', '--memory-pay', '--port', '0', '--data-dir', dir], { LOG_LEVEL: 'silent' }, io);
        await until('the three lines the start prints', () => io.stdout.length >= 3);

        expect(io.stdout[0]).to.match(/^localgate listening on http:\/\/127\.0\.0\.1:\d+ with databases in memory$/);
        expect(io.stdout[1]).to.equal('Mint a token: node bin/localgate.js token <subject>');
        expect(io.stdout[2]).to.equal(`Console: ${/listening on (\S+)/.exec(io.stdout[0]!)![1]}/console`);
        const url = /listening on (\S+)/.exec(io.stdout[0]!)![1]!;
        expect((await fetch(`${url}/health`)).status).to.equal(200);
        expect(await (await fetch(`${url}/v1/pay/status`)).json()).to.include({ configured: true, schema_ready: true });

        // A second shell mints with the secret the in-memory server keeps in the data directory; nothing else is written.
        const minted = await run(['token', 'alice', '--data-dir', dir]);
        expect((await fetch(`${url}/v1/logistics/bookings`, { headers: { authorization: `Bearer ${minted.stdout}` } })).status).to.equal(200);
        expect(Fs.readdirSync(dir)).to.equal(['.jwt-secret']);

        process.emit('SIGTERM', 'SIGTERM');
        expect(await stopped).to.equal(0);
        expect(io.stderr[0]).to.equal('localgate: SIGTERM received, finishing requests in flight (at most 10000 ms)');
    });

    it('reports a port that is taken and closes its databases', async () => {

        const dir = tempDir();
        const blocker = Net.createServer();
        await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
        const { port } = blocker.address() as Net.AddressInfo;
        const res = await run(['start', '--data-dir', dir, '--port', String(port)]);
        blocker.close();
        expect(res.code).to.equal(1);
        expect(res.stderr).to.equal(`localgate: port ${port} on 127.0.0.1 is in use by another program: stop it, or set PORT=0 (or --port 0) to take a free port`);
        expect(Fs.existsSync(Path.join(dir, 'commerce.db-wal'))).to.be.false();
    });

    it('reports other listen failures as they are', async () => {

        // An address of a documentation network, which no interface of this machine has.
        const res = await run(['start', '--memory', '--host', '203.0.113.1', '--port', '0']);
        expect(res.code).to.equal(1);
        expect(res.stderr).to.startWith('localgate: listen EADDRNOTAVAIL');
    });

    it('tells how to mint a token when the secret is known', async () => {

        const io = capture();
        const stopped = main(['start', '--data-dir', tempDir(), '--port', '0', '--no-seed'], { LOG_LEVEL: 'silent' }, io);
        await until('the three lines the start prints', () => io.stdout.length >= 3);

        expect(io.stdout[1]).to.equal('Mint a token: node bin/localgate.js token <subject>');
        expect(io.stdout[2]).to.equal(`Console: ${/listening on (\S+)/.exec(io.stdout[0]!)![1]}/console`);
        process.emit('SIGINT', 'SIGINT');
        expect(await stopped).to.equal(0);
    });

    it('refuses a listen without --forward-to, or with a flag it cannot use, with exit 2', async () => {

        const secret = { AUTH_JWT_SECRET: 'a'.repeat(32) };
        const cases: [string[], string][] = [
            [[], 'listen needs --forward-to URL, the handler to post events to, for example: npx localgate listen --forward-to http://localhost:4000/hooks'],
            [['--forward-to', 'localhost:4000'], '--forward-to must be an http: or https: URL, such as http://localhost:4000/hooks, not "localhost:4000"'],
            [['--forward-to', 'http://localhost:4000/', '--url', 'ftp://localhost'], '--url must be an http: or https: URL, such as http://localhost:4000/hooks, not "ftp://localhost"'],
            [['--forward-to', 'http://localhost:4000/', '--instance', ' '], '--instance must name an instance id, such as the id POST /_instances answered'],
            [['--forward-to', 'http://localhost:4000/', '--types', 'pay.*,pay.refund'], '--types must be an event type (such as pay.transaction.completed) or a prefix ending with * that matches one (pay.*, *): pay.refund'],
            [['--forward-to', 'http://localhost:4000/', '--secret', 'whsec_short'], '--secret must be whsec_ followed by the base64 of 24 to 64 bytes, as Standard Webhooks reads it (leave it out for a new one)'],
            [['--forward-to', 'http://localhost:4000/', '--ttl', '1h'], 'listen does not take --ttl: localgate listen --forward-to URL [--url URL] [--instance ID] [--types pay.*,...] [--secret whsec_...] [--data-dir D | --memory]']
        ];

        for (const [flags, message] of cases) {
            const res = await run(['listen', ...flags], secret);
            expect(res.code, flags.join(' ')).to.equal(2);
            expect(res.stderr.split('\n')[0], flags.join(' ')).to.equal(`localgate: ${message}`);
        }

        const nosecret = await run(['listen', '--forward-to', 'http://localhost:4000/', '--data-dir', Path.join(tempDir(), 'none')]);
        expect(nosecret.code).to.equal(1);
        expect(nosecret.stderr).to.startWith('localgate: found no token secret at ');
    });

    it('listens on the server PORT and HOST name, reached on the loopback when it listens everywhere, until SIGINT or SIGTERM', async () => {

        const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
        const runs = [
            ['0.0.0.0', 'SIGINT', 'http://127.0.0.1:1/_events/stream', ['--types', 'pay.*']],
            ['::1', 'SIGTERM', 'http://[::1]:1/_events/stream', []],
            ['127.0.0.1', 'SIGINT', 'https://127.0.0.1:1/_instances/i1/events/stream', ['--url', 'https://127.0.0.1:1', '--instance', 'i1', '--secret', secret]]
        ] as const;
        for (const [host, signal, url, flags] of runs) {
            const io = capture();
            const stopped = main(['listen', '--forward-to', 'http://localhost:4000/hooks', ...flags], { AUTH_JWT_SECRET: 'a'.repeat(32), HOST: host, PORT: '1' }, io);
            await until('the listener to say it is connecting again', () => io.stderr.some((line) => line.includes('connecting again')));

            process.emit(signal, signal);
            expect(await stopped).to.equal(0);
            expect(io.stderr[0]).to.equal(`localgate listen: reading ${url}`);
            expect(io.stderr[1]).to.match(/^Signing secret: whsec_[\w+/]{43}= \(Standard Webhooks, webhook-timestamp on the wall clock\)$/);
            expect(io.stderr[1]!.includes(secret)).to.equal(flags.length === 6);
            expect(io.stderr.at(-1)).to.equal(`localgate listen: ${signal} received, stopped`);
            expect(process.listenerCount(signal)).to.equal(0);
        }
    });

    it('mints a token alone on one line, signed with the data directory secret', async () => {

        const dir = tempDir();
        resolveSecret(undefined, dir, true);
        const res = await run(['token', 'alice', '--ttl', '2h', '--data-dir', dir]);
        expect(res.code).to.equal(0);
        expect(res.stdout).to.match(/^[\w-]+\.[\w-]+\.[\w-]+$/);
        const secret = Fs.readFileSync(Path.join(dir, '.jwt-secret'), 'utf8').trim();
        const artifacts = Jwt.token.decode(res.stdout);
        Jwt.token.verify(artifacts, { key: secret, algorithm: 'HS256' });
        expect(artifacts.decoded.payload.sub).to.equal('alice');
        expect(artifacts.decoded.payload.exp - artifacts.decoded.payload.iat).to.equal(7200);
    });

    it('never creates a secret: with none kept it says where it looked in one line, and exits 1', async () => {

        const dir = tempDir();
        const res = await run(['token', 'alice', '--data-dir', dir]);
        expect(res).to.equal({ code: 1, stdout: '', stderr: `localgate: found no token secret at ${Path.join(dir, '.jwt-secret')} (ENOENT): start the server with this DATA_DIR first (it keeps its secret there), or set AUTH_JWT_SECRET` });
        expect(Fs.readdirSync(dir)).to.equal([]);
    });

    it('mints with AUTH_JWT_SECRET when it is set', async () => {

        const secret = 'q'.repeat(40);
        const res = await run(['token', ' bob ', '--memory'], { AUTH_JWT_SECRET: secret });
        expect(res.code).to.equal(0);
        Jwt.token.verify(Jwt.token.decode(res.stdout), { key: secret, algorithm: 'HS256' });
        expect(Jwt.token.decode(res.stdout).decoded.payload.sub).to.equal('bob');
    });

    it('mints an admin token with the role claim, for the subject admin unless one is named', async () => {

        const secret = 'q'.repeat(40);
        const res = await run(['token', '--admin'], { AUTH_JWT_SECRET: secret });
        expect(res.code).to.equal(0);
        expect(Jwt.token.decode(res.stdout).decoded.payload).to.include({ sub: 'admin', role: 'admin' });
        const named = await run(['token', '--admin', 'ci'], { AUTH_JWT_SECRET: secret });
        expect(Jwt.token.decode(named.stdout).decoded.payload).to.include({ sub: 'ci', role: 'admin' });
        expect(Jwt.token.decode((await run(['token', 'ci'], { AUTH_JWT_SECRET: secret })).stdout).decoded.payload.role).to.be.undefined();
    });

    it('refuses a token command without exactly one subject or with a bad ttl', async () => {

        const none = await run(['token']);
        expect(none.code).to.equal(2);
        expect(none.stderr.split('\n')[0]).to.equal('localgate: token takes exactly one subject, for example: npx localgate token alice');
        expect((await run(['token', 'a', 'b'])).code).to.equal(2);
        expect((await run(['token', ' '])).code).to.equal(2);
        const ttl = await run(['token', 'alice', '--ttl', 'forever', '--memory'], { AUTH_JWT_SECRET: 'q'.repeat(40) });
        expect(ttl.code).to.equal(2);
        expect(ttl.stderr).to.startWith('localgate: --ttl must be a positive duration such as 3600, 30m, 2h or 7d, not "forever"');
    });

    it('reads durations in seconds, minutes, hours and days', () => {

        expect([ttlSeconds('90'), ttlSeconds('90s'), ttlSeconds('30m'), ttlSeconds('2h'), ttlSeconds('7d'), ttlSeconds('365d')]).to.equal([90, 90, 1800, 7200, 604800, 31536000]);
        expect(() => ttlSeconds('0')).to.throw();
    });

    const badTtls: [string, string][] = [
        ['0', '--ttl must be a positive duration such as 3600, 30m, 2h or 7d, not "0"'],
        ['-5m', '--ttl must be a positive duration such as 3600, 30m, 2h or 7d, not "-5m"'],
        ['366d', '--ttl must be at most 365 days (365d), not "366d"'],
        ['99999999999', '--ttl must be at most 365 days (365d), not "99999999999"']
    ];
    for (const [ttl, message] of badTtls) {
        it(`refuses --ttl ${ttl} as a usage error naming --ttl`, async () => {

            const res = await run(['token', 'alice', `--ttl=${ttl}`, '--memory'], { AUTH_JWT_SECRET: 'q'.repeat(40) });
            expect(res.code).to.equal(2);
            expect(res.stderr.split('\n')[0]).to.equal(`localgate: ${message}`);
        });
    }

    it('prints its version with --version or -v', async () => {

        const pack = JSON.parse(Fs.readFileSync(Path.join(__dirname, '..', 'package.json'), 'utf8')) as { version: string };
        expect(await run(['--version'])).to.equal({ code: 0, stdout: pack.version, stderr: '' });
        expect((await run(['-v'])).stdout).to.equal(pack.version);
    });

    it('prints the usage with help, and what a command takes with help <command> or <command> --help', async () => {

        const general = await run(['help']);
        expect(general.code).to.equal(0);
        expect(general.stdout).to.contain('rotate-keys pay');
        const token = await run(['token', '--help']);
        expect(token).to.equal({ code: 0, stdout: (await run(['help', 'token'])).stdout, stderr: '' });
        expect(token.stdout).to.startWith('Usage: localgate token [--admin] <subject> [--ttl T]');
        expect((await run(['help', 'nothing'])).stdout).to.startWith('Usage: localgate <command> [options]');
    });

    it('refuses a flag the command does not take as a usage error', async () => {

        const res = await run(['start', '--ttl', '1h']);
        expect(res.code).to.equal(2);
        expect(res.stderr.split('\n')[0]).to.equal('localgate: start does not take --ttl: localgate start [--port N] [--host H] [--data-dir D | --memory [--memory-pay]] [--seed demo|none|F.json | --no-seed] [--log-level L] [--clock INSTANT]');
        const several = await run(['token', 'alice', '--port', '1', '--no-seed']);
        expect(several.stderr.split('\n')[0]!).to.startWith('localgate: token does not take --port, --no-seed:');
    });

    it('names the flag when a flag is invalid, the variable when the environment is', async () => {

        expect((await run(['start', '--port', 'eighty'])).stderr).to.equal('localgate: --port must be a number');
        expect((await run(['start'], { PORT: 'eighty' })).stderr).to.equal('localgate: PORT must be a number');
    });

    it('stops with one line for a corrupted database', async () => {

        const dir = tempDir();
        expect((await run(['migrate', '--data-dir', dir])).code).to.equal(0);
        breakIntegrity(Path.join(dir, 'commerce.db'));
        const res = await run(['start', '--data-dir', dir, '--port', '0']);
        expect(res.code).to.equal(1);
        expect(res.stderr.split('\n')).to.have.length(1);
        expect(res.stderr).to.startWith('localgate: ');
        expect(res.stderr).to.contain('NULL value in t.a');
    });

    it('names a damaged database file and what to do, in one line', async () => {

        const dir = tempDir();
        expect((await run(['migrate', '--data-dir', dir])).code).to.equal(0);
        const file = Path.join(dir, 'commerce.db');
        damagePages(file);
        expect(await run(['start', '--data-dir', dir, '--port', '0'])).to.equal({ code: 1, stdout: '', stderr: `localgate: ${file}: database disk image is malformed: stop every localgate that uses this file, then put back a copy of it, or move it away (with any -wal and -shm file beside it) so that the namespace starts anew` });
    });

    it('names the file of a database that is not one, and the token secret\'s folder that cannot be written in memory', async () => {

        const dir = tempDir();
        Fs.writeFileSync(Path.join(dir, 'commerce.db'), 'not a database'.repeat(600));
        expect(await run(['start', '--data-dir', dir, '--port', '0'])).to.equal({ code: 1, stdout: '', stderr: `localgate: ${Path.join(dir, 'commerce.db')}: file is not a database: stop every localgate that uses this file, then put back a copy of it, or move it away (with any -wal and -shm file beside it) so that the namespace starts anew` });

        const file = Path.join(tempDir(), 'plain-file');
        Fs.writeFileSync(file, '');
        const memory = await run(['start', '--memory', '--data-dir', Path.join(file, 'data'), '--port', '0']);
        expect(memory).to.equal({
            code: 1,
            stdout: '',
            stderr: `localgate: the token secret's folder ${file}/data cannot be created or written (ENOTDIR): --memory keeps the databases in memory and the generated token secret there, so that \`npx localgate token\` in another shell works; run where ./data can be written, name a writable folder with --data-dir, or set AUTH_JWT_SECRET`
        });
    });

    it('refuses a PAY_DB_URL that names no file, for start and provision, creating nothing', async () => {

        const dir = tempDir();
        for (const command of [['start'], ['provision', 'pay']]) {
            const res = await run([...command, '--data-dir', dir], { PAY_DB_URL: 'http://example.com/pay.db' });
            expect(res).to.equal({ code: 1, stdout: '', stderr: 'localgate: PAY_DB_URL must be a postgres:// URL, a path, a file: URL on this machine, or :memory:' });
        }

        expect(Fs.readdirSync(dir)).to.equal([]);
    });

    it('provisions pay into the data directory and prints three settings to export', async () => {

        const dir = tempDir();
        const res = await run(['provision', 'pay', '--data-dir', dir]);
        expect(res.code).to.equal(0);
        const lines = res.stdout.split('\n');
        expect(lines).to.have.length(3);
        expect(lines[0]).to.equal(`PAY_DB_URL=${Path.join(dir, 'pay.db')}`);
        expect(lines[1]).to.match(/^PAY_DB_PUBLISHABLE_KEY=pk_local_[0-9a-f]{32}$/);
        expect(res.stderr).to.equal('localgate: a server serves pay once it has these three settings; a running one needs a restart with them: save the three lines (`> pay.env`), then start the server with them: `set -a; . ./pay.env; set +a; npm start`');
        expect(lines[2]).to.match(/^PAY_DB_SECRET_KEY=sk_local_[0-9a-f]{48}$/);
    });

    it('provisions pay with the keys a running server has, which is ready on its next request', async () => {

        const dir = tempDir();
        const file = Path.join(dir, 'pay.db');
        const pair = mintPayKeys();
        const server = await testServer({ pay: { url: file, ...pair } });
        expect(body(await server.inject('/v1/pay/status'))).to.equal({ configured: false, schema_ready: false, sections: ['wallet', 'tokens', 'gateway'] });

        const env = { PAY_DB_URL: file, PAY_DB_PUBLISHABLE_KEY: pair.publishableKey, PAY_DB_SECRET_KEY: pair.secretKey };
        const res = await run(['provision', 'pay'], env);
        expect(res).to.equal({ code: 0, stdout: `PAY_DB_URL=${file}\nPAY_DB_PUBLISHABLE_KEY=${pair.publishableKey}\nPAY_DB_SECRET_KEY=${pair.secretKey}`, stderr: 'localgate: recorded the keys of this environment: a server running with these three settings serves pay from its next request, without a restart' });
        expect(body(await server.inject('/v1/pay/status'))).to.equal({ configured: true, schema_ready: true, sections: ['wallet', 'tokens', 'gateway'] });
        expect((await server.inject({ url: '/v1/pay/tokens/MIT', headers: bearer(server, 'alice') })).statusCode).to.equal(200);
        await server.stop();
    });

    it('refuses keys that are half set, empty, too short, too long or not printable, naming the setting and printing no key', async () => {

        const dir = tempDir();
        const pair = mintPayKeys();
        const refusals: [NodeJS.ProcessEnv, string][] = [
            [{ PAY_DB_SECRET_KEY: pair.secretKey }, 'localgate: PAY_DB_PUBLISHABLE_KEY must be set together with PAY_DB_SECRET_KEY: set both to record that pair, or neither for a fresh one'],
            [{ PAY_DB_PUBLISHABLE_KEY: '', PAY_DB_SECRET_KEY: pair.secretKey }, 'localgate: PAY_DB_PUBLISHABLE_KEY is empty: set it to the key to record, or unset both keys for a fresh pair'],
            [{ PAY_DB_PUBLISHABLE_KEY: pair.publishableKey, PAY_DB_SECRET_KEY: ' \t ' }, 'localgate: PAY_DB_SECRET_KEY is empty: set it to the key to record, or unset both keys for a fresh pair'],
            [{ PAY_DB_PUBLISHABLE_KEY: 'pk_1234', PAY_DB_SECRET_KEY: pair.secretKey }, 'localgate: PAY_DB_PUBLISHABLE_KEY is 7 characters long: a key to record has 8 to 1024'],
            [{ PAY_DB_PUBLISHABLE_KEY: pair.publishableKey, PAY_DB_SECRET_KEY: `sk_${'x'.repeat(1022)}` }, 'localgate: PAY_DB_SECRET_KEY is 1025 characters long: a key to record has 8 to 1024'],
            [{ PAY_DB_PUBLISHABLE_KEY: 'pk_live_first\nsecond', PAY_DB_SECRET_KEY: pair.secretKey }, 'localgate: PAY_DB_PUBLISHABLE_KEY holds a control character (a line break, a tab): a key must be printable text']
        ];

        for (const [env, stderr] of refusals) {
            expect(await run(['provision', 'pay', '--data-dir', dir], env)).to.equal({ code: 1, stdout: '', stderr });
        }

        expect(Fs.readdirSync(dir)).to.equal([]);
    });

    it('records keys as a hosted project has them, and a server with other keys answers configured false and a 501 that says they do not match', async () => {

        const file = Path.join(tempDir(), 'pay.db');
        const hosted = { publishableKey: 'sb_publishable_5kPq0-xZ_r9Ln3', secretKey: 'eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoic2VydmljZV9yb2xlIn0.k3y$it works' };
        const env = { PAY_DB_URL: file, PAY_DB_PUBLISHABLE_KEY: hosted.publishableKey, PAY_DB_SECRET_KEY: hosted.secretKey };
        expect(await run(['provision', 'pay'], env)).to.equal({
            code: 0,
            stdout: `PAY_DB_URL=${file}\nPAY_DB_PUBLISHABLE_KEY=${hosted.publishableKey}\nPAY_DB_SECRET_KEY='eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoic2VydmljZV9yb2xlIn0.k3y$it works'`,
            stderr: 'localgate: recorded the keys of this environment: a server running with these three settings serves pay from its next request, without a restart'
        });

        const ready = await testServer({ pay: { url: file, ...hosted } });
        expect(body(await ready.inject('/v1/pay/status'))).to.equal({ configured: true, schema_ready: true, sections: ['wallet', 'tokens', 'gateway'] });
        await ready.stop();

        const other = await testServer({ pay: { url: file, ...mintPayKeys() } });
        expect(body(await other.inject('/v1/pay/status'))).to.equal({ configured: false, schema_ready: false, sections: ['wallet', 'tokens', 'gateway'] });
        const res = await other.inject('/v1/pay/tokens');
        expect(res.statusCode).to.equal(501);
        expect(body(res)).to.equal({
            statusCode: 501,
            error: 'Not Implemented',
            message: 'Pay is not configured: PAY_DB_PUBLISHABLE_KEY and PAY_DB_SECRET_KEY do not match the keys recorded in the pay database; set the pair it was provisioned with, or record these with `npx localgate provision pay`',
            code: 'pay_not_provisioned',
            configured: false,
            schema_ready: false
        });
        await other.stop();
    });

    it('refuses to provision pay into a database that holds other tables, naming it in one line', async () => {

        const file = Path.join(tempDir(), 'ledger.db');
        const Sqlite = (await import('better-sqlite3')).default;
        const other = new Sqlite(file);
        other.exec('CREATE TABLE entries (amount INTEGER)');
        other.close();
        expect(await run(['provision', 'pay'], { PAY_DB_URL: file })).to.equal({
            code: 1,
            stdout: '',
            stderr: `localgate: The database at ${file} holds tables but no pay migrations: it belongs to something else, so pay is not provisioned there; point PAY_DB_URL at a new or empty database`
        });
    });

    it('provisions pay at PAY_DB_URL, quoting a path a shell would split', async () => {

        const file = Path.join(tempDir(), 'my pay', 'pay.db');
        const res = await run(['provision', 'pay', '--memory'], { PAY_DB_URL: file });
        expect(res.code).to.equal(0);
        expect(res.stdout.split('\n')[0]).to.equal(`PAY_DB_URL='${file}'`);
        expect(Fs.existsSync(file)).to.be.true();
    });

    it('refuses to provision anything but pay, or pay in memory', async () => {

        expect((await run(['provision'])).code).to.equal(2);
        expect((await run(['provision', 'commerce'])).code).to.equal(2);
        expect((await run(['rotate-keys', 'commerce'])).stderr).to.startWith('localgate: provision and rotate-keys take one namespace: pay');
        const memory = await run(['provision', 'pay', '--memory']);
        expect(memory.code).to.equal(1);
        expect(memory.stderr).to.contain('in-memory pay database would vanish');
    });

    it('rotates the pay keys: the new pair is printed and recorded, the old one retired', async () => {

        const dir = tempDir();
        const settings = (res: { stdout: string }) => Object.fromEntries(res.stdout.split('\n').map((line) => line.split('=')));
        const first = settings(await run(['provision', 'pay', '--data-dir', dir]));
        const rotated = await run(['rotate-keys', 'pay', '--data-dir', dir]);
        expect(rotated.code).to.equal(0);
        expect(rotated.stderr).to.equal('localgate: the old keys stopped working: a running server needs the new ones; save the three lines (`> pay.env`), then start the server with them: `set -a; . ./pay.env; set +a; npm start`');
        const second = settings(rotated);
        expect(second.PAY_DB_URL).to.equal(first.PAY_DB_URL);
        expect(second.PAY_DB_SECRET_KEY).to.match(/^sk_local_[0-9a-f]{48}$/);
        expect(second.PAY_DB_SECRET_KEY).to.not.equal(first.PAY_DB_SECRET_KEY);
        const status = (keys: Record<string, string>) => followPayFile(keys.PAY_DB_URL!, { publishableKey: keys.PAY_DB_PUBLISHABLE_KEY, secretKey: keys.PAY_DB_SECRET_KEY });
        for (const [keys, configured] of [[first, false], [second, true]] as const) {
            const readiness = status(keys);
            expect((await statusOf(readiness)).configured).to.equal(configured);
            await readiness.close();
        }

        const missing = await run(['rotate-keys', 'pay', '--data-dir', tempDir()]);
        expect(missing.code).to.equal(1);
        expect(missing.stderr).to.match(/^localgate: There is no pay database at .*pay\.db: run `npx localgate provision pay` first$/);
    });

    it('leaves the pay.env the README writes out of git', () => {

        const ignored = Fs.readFileSync(Path.join(__dirname, '..', '.gitignore'), 'utf8').split('\n');
        expect(ignored).to.include('*.env');
    });

    it('migrates every namespace and reports pay when provisioned', async () => {

        const dir = tempDir();
        const before = await run(['migrate', '--data-dir', dir]);
        expect(before.code).to.equal(0);
        expect(before.stdout).to.match(/^commerce: schema version \d+\nlogistics: schema version \d+\nweather: schema version 1\npay: not provisioned/);
        expect(Fs.existsSync(Path.join(dir, 'weather.db'))).to.be.true();

        const provisioned = await run(['provision', 'pay', '--data-dir', dir]);
        const env = Object.fromEntries(provisioned.stdout.split('\n').map((line) => line.split('=')));
        const after = await run(['migrate', '--data-dir', dir], env);
        expect(after.stdout).to.match(/\npay: schema version \d+$/);
    });

    it('seeds a fixture file and reports what it added', async () => {

        const dir = tempDir();
        const file = Path.join(dir, 'fixture.json');
        const business = { id: 'b-pier', name: 'Pier Kiosk', category: 'Kiosk', city: 'Harbourside', phone: '+1 207 555 0199' };
        const product = { name: 'Ice cream', price: 3.5, currency: 'USD', business_id: 'b-pier', id: 'p-ice' };
        const van = { id: 'v-van', make: 'Ford', model: 'Transit', year: 2021, seats: 3, daily_rate: 70, currency: 'GBP' };
        Fs.writeFileSync(file, JSON.stringify({ commerce: { businesses: [business], products: [product] }, logistics: { vehicles: [van] } }));
        const res = await run(['seed', '--file', file, '--data-dir', dir, '--no-seed']);
        expect(res).to.equal({ code: 0, stdout: 'commerce: 2 records added\nlogistics: 1 records added', stderr: '' });
        expect((await run(['seed', '--file', file, '--data-dir', dir])).stdout).to.equal('commerce: 0 records added\nlogistics: 0 records added');

        Fs.writeFileSync(file, JSON.stringify({ commerce: { products: [{ ...product, id: 'p-2', price: 3.555 }] } }));
        const bad = await run(['seed', '--file', file, '--data-dir', dir]);
        expect(bad).to.equal({ code: 1, stdout: '', stderr: `localgate: ${file}: commerce.products[0].price: price has more decimals than USD allows (at most 2)` });
        expect((await run(['seed', '--data-dir', dir])).code).to.equal(2);
        const memory = await run(['seed', '--file', file], { DATA_DIR: ':memory:' });
        expect(memory).to.equal({ code: 1, stdout: '', stderr: 'localgate: seed loads into the databases in DATA_DIR: in memory they would vanish when this command exits (give a running server a fixture with POST /_instances)' });
        const missing = await run(['seed', '--file', Path.join(dir, 'none.json'), '--data-dir', dir]);
        expect(missing.code).to.equal(1);
        expect(missing.stderr).to.contain('Cannot read fixture');
    });

    it('refuses pay records without pay by saying to provision it or to pass --without-pay, leaving no new database file behind', async () => {

        const dir = tempDir();
        const file = Path.join(dir, 'with pay.json');
        const business = { id: 'b-pier', name: 'Pier Kiosk', category: 'Kiosk', city: 'Harbourside', phone: '+1 207 555 0199' };
        Fs.writeFileSync(file, JSON.stringify({ commerce: { businesses: [business] }, pay: { wallets: [{ owner_id: 'alice' }] } }));
        const data = Path.join(dir, 'data');
        const refused = await run(['seed', '--file', file, '--data-dir', data]);
        expect(refused).to.equal({
            code: 1,
            stdout: '',
            stderr: `localgate: ${file}: pay: this data set has no pay database ready to load wallets into: run \`npx localgate provision pay\` first and set the PAY_DB_URL, PAY_DB_PUBLISHABLE_KEY and PAY_DB_SECRET_KEY it prints, or load the rest without pay: \`npx localgate seed --file '${file}' --without-pay\``
        });
        expect(Fs.existsSync(data)).to.be.false();

        // A data directory that was there keeps what it held; only the databases the refused seed made go.
        Fs.mkdirSync(data);
        Fs.writeFileSync(Path.join(data, 'notes.txt'), 'kept');
        expect((await run(['seed', '--file', file, '--data-dir', data])).code).to.equal(1);
        expect(Fs.readdirSync(data)).to.equal(['notes.txt']);

        const loaded = await run(['seed', '--file', file, '--data-dir', data, '--without-pay']);
        expect(loaded).to.equal({ code: 0, stdout: 'commerce: 1 records added\npay: skipped (--without-pay)', stderr: '' });
        expect(Fs.readdirSync(data).sort()).to.equal(['commerce.db', 'logistics.db', 'notes.txt', 'weather.db']);

        // Without pay records the flag changes nothing; a file that is not an object is the load's to refuse.
        Fs.writeFileSync(file, JSON.stringify({ commerce: { businesses: [{ ...business, id: 'b-two' }] } }));
        expect(await run(['seed', '--file', file, '--data-dir', data, '--without-pay'])).to.equal({ code: 0, stdout: 'commerce: 1 records added', stderr: '' });
        for (const text of ['null', '"pay"', '[]']) {
            Fs.writeFileSync(file, text);
            expect(await run(['seed', '--file', file, '--data-dir', data, '--without-pay']), text).to.equal({ code: 1, stdout: '', stderr: `localgate: ${file} must hold an object keyed by namespace` });
        }
    });

    it('removes only the database files a refused seed made, and a data directory it made only once empty', () => {

        const dir = tempDir();
        const data = Path.join(dir, 'data');
        const elsewhere = Path.join(dir, 'elsewhere.db');
        // A namespace on PostgreSQL makes no file.
        const settings = settingsFromEnvironment({ DATA_DIR: data, COMMERCE_DB_URL: elsewhere, WEATHER_DB_URL: 'postgres://127.0.0.1:1/none', AUTH_JWT_SECRET: 'a secret of at least thirty-two bytes' });
        const absent = absentDatabaseFiles(settings);
        expect(absent).to.equal([elsewhere, Path.join(data, 'logistics.db'), data]);

        // Another program wrote into the directory meanwhile: it stays, and so does what it wrote.
        Fs.mkdirSync(data);
        Fs.writeFileSync(Path.join(data, 'logistics.db-wal'), '');
        Fs.writeFileSync(Path.join(data, 'other.txt'), '');
        Fs.writeFileSync(elsewhere, '');
        removeDatabaseFiles(absent);
        expect(Fs.readdirSync(data)).to.equal(['other.txt']);
        expect(Fs.existsSync(elsewhere)).to.be.false();

        // A directory never made is nothing to remove.
        Fs.rmSync(data, { recursive: true });
        removeDatabaseFiles(absent);
        expect(Fs.readdirSync(dir)).to.equal([]);
    });

    it('exports the databases as a fixture file that seed, SEED and --seed load back', { timeout: 20_000 }, async () => {

        const dir = tempDir();
        const fixture = Path.join(dir, 'fixture.json');
        const quay = { id: 'quay', name: 'Quay', address: '1 Quay Street', city: 'Harbourside', latitude: 50.6, longitude: -3.4, created_at: '2030-01-01T00:00:00Z' };
        const van = { id: 'v-van', make: 'Ford', model: 'Transit', year: 2021, seats: 3, daily_rate: 70, currency: 'GBP', created_at: '2030-01-01T00:00:00Z' };
        const booking = { id: 'b-1', vehicle_id: 'v-van', pickup_location_id: 'quay', dropoff_location_id: 'quay', pickup_at: '2030-02-01T00:00:00Z', return_at: '2030-02-02T00:00:00Z', customer_id: 'ana', created_at: '2030-01-02T00:00:00Z' };
        Fs.writeFileSync(fixture, JSON.stringify({ logistics: { locations: [quay], vehicles: [van], bookings: [booking] } }));
        expect((await run(['seed', '--file', fixture, '--data-dir', dir])).code).to.equal(0);

        const printed = await run(['export', '--data-dir', dir]);
        expect(printed.code).to.equal(0);
        const file = JSON.parse(printed.stdout);
        expect(file.localgate).to.equal({ format: 1, migrations: { commerce: ['001_catalogue_inquiries_scam_reports', '002_offer_expiry', '003_events', '004_endpoint_state'], logistics: ['001_vehicles_locations_drivers_bookings', '002_booking_counts', '003_booking_lifecycle', '004_events', '005_metadata', '006_endpoint_state'] } });
        expect(file.logistics.bookings).to.equal([{ ...booking, notes: '', status: 'confirmed', pickup_at: '2030-02-01T00:00:00.000Z', return_at: '2030-02-02T00:00:00.000Z', created_at: '2030-01-02T00:00:00.000Z', metadata: {} }]);

        const out = Path.join(dir, 'export.json');
        expect(await run(['export', '--file', out, '--data-dir', dir])).to.equal({ code: 0, stdout: '', stderr: `localgate: exported to ${out}` });
        expect(Fs.readFileSync(out, 'utf8')).to.equal(`${printed.stdout}\n`);

        // Into another data directory: by the seed command, or on start with SEED or --seed, once.
        const other = tempDir();
        expect((await run(['seed', '--file', out, '--data-dir', other])).stdout).to.equal('commerce: 0 records added\nlogistics: 3 records added');
        expect((await run(['export', '--data-dir', other])).stdout).to.equal(printed.stdout);
        for (const seeded of [{ env: { SEED: out }, args: [] }, { env: {}, args: ['--seed', out] }]) {
            const started = await testServer({ ...settingsFromEnvironment({ ...seeded.env, DATA_DIR: tempDir() }, { seed: seeded.args[1] }), logLevel: 'silent' });
            expect(JSON.stringify(await started.app.localgate.data.exportRecords(), null, 1)).to.equal(printed.stdout);
            await started.stop();
        }

        // A file of a newer format stops the command with one line, and exit 1.
        Fs.writeFileSync(out, JSON.stringify({ ...file, localgate: { format: 2 } }));
        expect(await run(['seed', '--file', out, '--data-dir', other])).to.equal({ code: 1, stdout: '', stderr: `localgate: ${out}: localgate.format 2 is newer than this localgate reads (format 1): load the file with the localgate that wrote it, or a newer one` });
        const refused = await run(['start', '--data-dir', other, '--port', '0', '--seed', out]);
        expect(refused.code).to.equal(1);
        expect(refused.stderr).to.contain('localgate.format 2 is newer');
    });

    it('loads a SEED file only into databases that hold none of its namespaces\' records, as the demo is', { timeout: 20_000 }, async () => {

        const dir = tempDir();
        const file = Path.join(dir, 'seed.json');
        Fs.writeFileSync(file, JSON.stringify({ commerce: { businesses: [{ name: 'Pier Kiosk', category: 'Kiosk', city: 'Harbourside', phone: '1' }] } }));
        const data = tempDir();
        for (const start of [1, 2, 3]) {
            const server = await testServer({ ...settingsFromEnvironment({ SEED: file, DATA_DIR: data }, {}), logLevel: 'silent' });
            const listed = body<{ total: number; data: { name: string }[] }>(await server.inject('/v1/commerce/businesses'));
            expect([listed.total, listed.data[0]!.name], `start ${start}`).to.equal([1, 'Pier Kiosk']);
            await server.stop();
        }

        // Pay in memory takes a seed file's wallets on every start: it starts empty each time.
        Fs.writeFileSync(file, JSON.stringify({ pay: { wallets: [{ owner_id: 'ana' }] } }));
        for (const start of [1, 2]) {
            const server = await testServer({ ...settingsFromEnvironment({ SEED: file, DATA_DIR: ':memory:' }, { 'memory-pay': true }), logLevel: 'silent' });
            expect((await server.app.localgate.data.exportRecords() as { pay: { wallets: unknown[] } }).pay.wallets, `start ${start}`).to.have.length(1);
            await server.stop();
        }

        // Without pay ready, a seed file of pay records stops the start.
        const refused = await run(['start', '--data-dir', tempDir(), '--port', '0', '--seed', file]);
        expect(refused.code).to.equal(1);
        expect(refused.stderr).to.contain('pay: this data set has no pay namespace ready');
    });

    it('exports no data directory that does not exist, and makes none', async () => {

        const missing = Path.join(tempDir(), 'typo');
        expect(await run(['export', '--data-dir', missing])).to.equal({ code: 1, stdout: '', stderr: `localgate: there is no data directory ${missing} to export: name one a server or \`npx localgate seed\` wrote (--data-dir or DATA_DIR)` });
        expect(Fs.existsSync(missing)).to.be.false();

        const memory = await run(['export'], { DATA_DIR: ':memory:' });
        expect(memory.code).to.equal(0);
        expect(JSON.parse(memory.stdout).commerce.businesses).to.equal([]);
    });

    it('exports databases placed outside a data directory that does not exist, and makes none', async () => {

        const missing = Path.join(tempDir(), 'typo');
        const refusal = { code: 1, stdout: '', stderr: `localgate: there is no data directory ${missing} to export: name one a server or \`npx localgate seed\` wrote (--data-dir or DATA_DIR)` };
        const files = tempDir();
        const placed = { DATA_DIR: missing, COMMERCE_DB_URL: Path.join(files, 'commerce.db'), LOGISTICS_DB_URL: Path.join(files, 'logistics.db'), WEATHER_DB_URL: Path.join(files, 'weather.db') };
        const exported = await run(['export'], placed);
        expect(exported.code, exported.stderr).to.equal(0);
        expect(JSON.parse(exported.stdout).commerce.businesses).to.equal([]);

        // A namespace placed nowhere else, or pay's file named inside it, would live in the data directory.
        expect(await run(['export'], { ...placed, WEATHER_DB_URL: undefined })).to.equal(refusal);
        expect(await run(['export'], { ...placed, PAY_DB_URL: Path.join(missing, 'pay.db') })).to.equal(refusal);

        // A namespace on a PostgreSQL server lives outside it too: the export goes on to that server, here one that never answers.
        expect(await run(['export'], { ...placed, COMMERCE_DB_URL: 'postgres://127.0.0.1:1/none', AUTH_JWT_SECRET: 'a secret of at least thirty-two bytes' })).to.equal({ code: 1, stdout: '', stderr: 'localgate: Cannot open the commerce schema on PostgreSQL at 127.0.0.1:1/none: The database cannot be reached, try again later' });
        expect(Fs.existsSync(missing)).to.be.false();
    });

    it('exports every namespace placed on PostgreSQL whatever the data directory', { skip: skipWithoutPostgres('the export of PostgreSQL databases'), timeout: 20_000 }, async () => {

        const database = await freshDatabase();
        const missing = Path.join(tempDir(), 'typo');
        const exported = await run(['export'], { DATA_DIR: missing, DATABASE_URL: database.url, AUTH_JWT_SECRET: 'a secret of at least thirty-two bytes' });
        await database.drop();
        expect(exported.code, exported.stderr).to.equal(0);
        expect(JSON.parse(exported.stdout).logistics.vehicles).to.equal([]);
        expect(Fs.existsSync(missing)).to.be.false();
    });

    it('names in its banner the PostgreSQL database it serves, and says a database that does not exist does not', { skip: skipWithoutPostgres('the banner of a start on PostgreSQL'), timeout: 20_000 }, async () => {

        const database = await freshDatabase();
        const io = capture();
        const env = { LOG_LEVEL: 'silent', DATABASE_URL: database.url.replace('postgres://', 'postgres://postgres:hidden@'), AUTH_JWT_SECRET: 'a secret of at least thirty-two bytes' };
        const stopped = main(['start', '--port', '0', '--no-seed'], env, io);
        await until('the three lines the start prints', () => io.stdout.length >= 3);

        process.emit('SIGTERM', 'SIGTERM');
        expect(await stopped).to.equal(0);
        await database.drop();
        expect(io.stdout[0]).to.match(new RegExp(`^localgate listening on http://127\\.0\\.0\\.1:\\d+ with databases on PostgreSQL at 127\\.0\\.0\\.1:5432/${database.name}$`));

        const gone = await run(['start', '--port', '0'], env);
        expect(gone).to.equal({
            code: 1,
            stdout: '',
            stderr: `localgate: Cannot open the commerce schema on PostgreSQL at 127.0.0.1:5432/${database.name}: The database does not exist on that server: create it (createdb), or name one that does in the URL`
        });
    });

    it('says where each namespace keeps its database when they are apart, and which token command runs as typed where it starts', async () => {

        const dir = tempDir();
        const where = (env: NodeJS.ProcessEnv, flags = {}) => databasesWhere(settingsFromEnvironment({ DATA_DIR: dir, AUTH_JWT_SECRET: 'a secret of at least thirty-two bytes', ...env }, flags));
        expect(await where({})).to.equal(`in ${dir}`);
        expect(await where({}, { memory: true })).to.equal('in memory');
        expect(await where({ COMMERCE_DB_URL: Path.join(dir, 'shop.db'), WEATHER_DB_URL: 'postgres://me:hidden@db.example:5433/forecasts' })).to.equal(`commerce in ${Path.join(dir, 'shop.db')}, logistics in ${dir}, weather on PostgreSQL at db.example:5433/forecasts`);

        expect(tokenCommand(packageRoot)).to.equal('node bin/localgate.js token');
        expect(tokenCommand(dir)).to.equal('npx localgate token');
    });

    it('refuses a SEED that is neither demo, none nor a file, under the name it was given by', async () => {

        const missing = Path.resolve('no-such-fixture.json');
        expect((await run(['start', '--seed', 'no-such-fixture.json'])).stderr).to.equal(`localgate: --seed must be demo, none or the path of a fixture file: there is no file ${missing}`);
        expect((await run(['start'], { SEED: 'no-such-fixture.json' })).stderr).to.equal(`localgate: SEED must be demo, none or the path of a fixture file: there is no file ${missing}`);
        expect(() => settingsFromEnvironment({}, { seed: '' })).to.throw('--seed must be demo, none or the path of a fixture file');
    });
});
