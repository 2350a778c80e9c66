import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';
import Url from 'node:url';

import Code from '@hapi/code';
import Lab from '@hapi/lab';
import Sqlite from 'better-sqlite3';

import { provisionPay } from '../lib';
import { payLocation } from '../lib/storage/engines';
import { migrate, namespaceMigrations } from '../lib/storage/sqlite/migrate';
import { closeDatabase, openDatabase } from '../lib/storage/sqlite/open';
import type { PayCredentials } from '../lib/storage';
import { mintPayKeys } from '../lib/storage/pay-keys';
import { rotatePayKeys } from '../lib/storage/sqlite/provision';
import { expectError } from './helpers/errors';
import { followPayFile, statusOf } from './helpers/pay-file';
import { bearer, body, breakIntegrity, damagePages, tempDir, testServer } from './helpers/server';
import { paySchema } from '../lib/storage/migrations';
import type { SqliteNamespace } from '../lib/storage/sqlite/namespace';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const dataRoutes: [string, string][] = [
    ['GET', '/v1/pay/wallet/'],
    ['GET', '/v1/pay/wallet/transactions'],
    ['GET', '/v1/pay/tokens/'],
    ['GET', '/v1/pay/tokens/MIT'],
    ['GET', '/v1/pay/gateway/providers'],
    ['POST', '/v1/pay/gateway/deposit'],
    ['POST', '/v1/pay/gateway/withdraw']
];

const keys = { publishableKey: 'pk_local_test', secretKey: 'sk_local_test' };


function provisionedKeys(credentials: PayCredentials): { publishableKey: string; secretKey: string } {

    return { publishableKey: credentials.PAY_DB_PUBLISHABLE_KEY, secretKey: credentials.PAY_DB_SECRET_KEY };
}


describe('pay readiness', () => {

    it('is unconfigured without settings: status says so and every data endpoint answers 501, token or not', async () => {

        const server = await testServer();
        const status = await server.inject('/v1/pay/status');
        expect(status.statusCode).to.equal(200);
        expect(body(status)).to.equal({ configured: false, schema_ready: false, sections: ['wallet', 'tokens', 'gateway'] });

        for (const [method, url] of dataRoutes) {
            for (const headers of [{}, bearer(server, 'alice'), { authorization: 'Bearer not.a.token' }]) {
                const res = await server.inject({ method, url, headers, payload: method === 'POST' ? {} : undefined });
                expect(res.statusCode, `${method} ${url}`).to.equal(501);
                expect(body(res)).to.include({ statusCode: 501, error: 'Not Implemented', code: 'pay_not_provisioned', configured: false, schema_ready: false });
                expect(body(res).message).to.contain('provision pay');
            }
        }

        await server.stop();
    });

    it('stays unconfigured while any of the three settings is missing', async () => {

        const file = (await provisionPay(Path.join(tempDir(), 'pay.db'))).PAY_DB_URL;
        for (const pay of [{ url: file }, { url: file, publishableKey: 'pk' }, { url: file, secretKey: 'sk' }]) {
            const server = await testServer({ pay });
            expect(body(await server.inject('/v1/pay/status'))).to.include({ configured: false, schema_ready: false });
            await server.stop();
        }
    });

    it('is unconfigured when the database file does not exist, and never creates it', async () => {

        const file = Path.join(tempDir(), 'pay.db');
        const server = await testServer({ pay: { url: file, ...keys } });
        expect(body(await server.inject('/v1/pay/status'))).to.include({ configured: false });
        expect(Fs.existsSync(file)).to.be.false();
        await server.stop();
    });

    it('is unconfigured, never a 500, when the path cannot be read: a file where a folder should be, or a loop of links', async () => {

        const dir = tempDir();
        Fs.writeFileSync(Path.join(dir, 'plain'), 'a file');
        Fs.symlinkSync(Path.join(dir, 'loop-b'), Path.join(dir, 'loop-a'));
        Fs.symlinkSync(Path.join(dir, 'loop-a'), Path.join(dir, 'loop-b'));
        for (const file of [Path.join(dir, 'plain', 'pay.db'), Path.join(dir, 'loop-a')]) {
            const server = await testServer({ pay: { url: file, ...keys } });
            expect(body(await server.inject('/v1/pay/status')), file).to.include({ configured: false });
            expect((await server.inject({ url: '/v1/pay/wallet', headers: bearer(server, 'ann') })).statusCode, file).to.equal(501);
            await server.stop();
        }
    });

    it('is unconfigured when the file is not a database', async () => {

        const file = Path.join(tempDir(), 'pay.db');
        Fs.writeFileSync(file, 'ledger, handwritten'.repeat(300));
        const server = await testServer({ pay: { url: file, ...keys } });
        expect(body(await server.inject('/v1/pay/status'))).to.include({ configured: false });
        await server.stop();
    });

    it('is configured without schema for an empty database, which records no pair, and 501s carry both fields', async () => {

        const file = Path.join(tempDir(), 'pay.db');
        new Sqlite(file).close();
        const server = await testServer({ pay: { url: file, ...keys } });
        expect(body(await server.inject('/v1/pay/status'))).to.equal({ configured: true, schema_ready: false, sections: ['wallet', 'tokens', 'gateway'] });
        for (const [method, url] of dataRoutes) {
            const res = await server.inject({ method, url, headers: bearer(server, 'alice'), payload: method === 'POST' ? {} : undefined });
            expect(res.statusCode, `${method} ${url}`).to.equal(501);
            expect(body(res)).to.equal({ statusCode: 501, error: 'Not Implemented', message: 'The pay database has no schema yet: run `npx localgate provision pay`', code: 'pay_not_provisioned', configured: true, schema_ready: false });
        }

        expect(body(await server.inject('/health')).namespaces).to.include({ pay: { state: 'configured', engine: 'sqlite', schema_version: 0, storage: 'file' } });
        await server.stop();
        expect(Fs.readdirSync(Path.dirname(file))).to.equal(['pay.db']);
    });

    it('becomes ready without a restart when provision pay records the keys the server runs with', async () => {

        const dir = tempDir();
        const pair = mintPayKeys();
        for (const file of [Path.join(dir, 'empty.db'), Path.join(dir, 'missing.db')]) {
            if (file.endsWith('empty.db')) {
                new Sqlite(file).close();
            }

            const server = await testServer({ pay: { url: file, ...pair } });
            expect(body(await server.inject('/v1/pay/status'))).to.equal({ configured: file.endsWith('empty.db'), schema_ready: false, sections: ['wallet', 'tokens', 'gateway'] });
            expect(await provisionPay(file, undefined, pair)).to.equal({ PAY_DB_URL: file, PAY_DB_PUBLISHABLE_KEY: pair.publishableKey, PAY_DB_SECRET_KEY: pair.secretKey });
            expect(body(await server.inject('/v1/pay/status'))).to.equal({ configured: true, schema_ready: true, sections: ['wallet', 'tokens', 'gateway'] });
            const wallet = await server.inject({ url: '/v1/pay/wallet', headers: bearer(server, 'alice') });
            expect(wallet.statusCode).to.equal(200);
            expect(body(wallet)).to.include({ owner_id: 'alice', balances: [] });
            await server.stop();
        }
    });

    it('is configured without schema when the keys match but a migration is missing, and 501s say so', async () => {

        const dir = tempDir();
        const file = Path.join(dir, 'pay.db');
        const staged = Path.join(dir, 'staged.db');
        const pair = provisionedKeys(await provisionPay(staged));
        const db = new Sqlite(staged);
        db.prepare('DELETE FROM schema_migrations WHERE version = 2').run();
        db.close();

        const server = await testServer({ pay: { url: file, ...pair } });
        Fs.renameSync(staged, file);
        expect(body(await server.inject('/v1/pay/status'))).to.equal({ configured: true, schema_ready: false, sections: ['wallet', 'tokens', 'gateway'] });
        const res = await server.inject({ url: '/v1/pay/wallet/', headers: bearer(server, 'alice') });
        expect(res.statusCode).to.equal(501);
        expect(body(res)).to.include({ code: 'pay_not_provisioned', configured: true, schema_ready: false, message: 'The pay database has no schema yet: run `npx localgate provision pay`' });
        expect(body<{ namespaces: Record<string, { state: string }> }>(await server.inject('/health')).namespaces.pay!.state).to.equal('configured');
        await server.stop();
    });

    it('is configured only for the key pair recorded last, re-read on every request', async () => {

        const file = Path.join(tempDir(), 'pay.db');
        const first = provisionedKeys(await provisionPay(file));
        const server = await testServer({ pay: { url: file, ...first } });
        expect(body(await server.inject('/v1/pay/status'))).to.include({ configured: true, schema_ready: true });

        const second = provisionedKeys(rotatePayKeys(file));
        expect(second.secretKey).to.not.equal(first.secretKey);
        expect(body(await server.inject('/v1/pay/status'))).to.include({ configured: false, schema_ready: false });
        expect((await server.inject({ url: '/v1/pay/wallet', headers: bearer(server, 'alice') })).statusCode).to.equal(501);
        await server.stop();

        for (const pair of [second, { ...second, publishableKey: first.publishableKey }, { ...second, secretKey: first.secretKey }]) {
            const readiness = followPayFile(file, pair);
            expect((await statusOf(readiness)).configured).to.equal(pair === second);
            await readiness.close();
        }

        const stored = new Sqlite(file, { readonly: true });
        const row = stored.prepare('SELECT * FROM credentials').get() as Record<string, string>;
        stored.close();
        expect(JSON.stringify(row)).to.not.contain(second.secretKey);
        expect(row.secret_key_sha256).to.equal(Crypto.createHash('sha256').update(second.secretKey).digest('hex'));
    });

    it('follows the files without a restart: provisioned, then removed', async () => {

        const dir = tempDir();
        const file = Path.join(dir, 'pay.db');
        const staged = Path.join(dir, 'staged.db');
        const pair = provisionedKeys(await provisionPay(staged));
        const server = await testServer({ pay: { url: file, ...pair } });
        expect(body(await server.inject('/v1/pay/status'))).to.include({ configured: false, schema_ready: false });

        Fs.renameSync(staged, file);
        expect(body(await server.inject('/v1/pay/status'))).to.include({ configured: true, schema_ready: true });
        const gated = await server.inject('/v1/pay/tokens/');
        expect(gated.statusCode).to.equal(401);
        const health = body<{ namespaces: Record<string, unknown> }>(await server.inject('/health'));
        expect(health.namespaces.pay).to.equal({ state: 'ready', engine: 'sqlite', schema_version: namespaceMigrations(paySchema).length, storage: 'file' });

        for (const suffix of ['', '-wal', '-shm']) {
            Fs.rmSync(file + suffix, { force: true });
        }

        expect(body(await server.inject('/v1/pay/status'))).to.include({ configured: false, schema_ready: false });
        expect((await server.inject('/v1/pay/tokens/')).statusCode).to.equal(501);
        await server.stop();
    });

    it('follows a file replaced by another database, never the deleted one', async () => {

        const dir = tempDir();
        const credentials = await provisionPay(Path.join(dir, 'pay.db'));
        const file = credentials.PAY_DB_URL;
        const server = await testServer({ pay: { url: file, ...provisionedKeys(credentials) } });
        expect(body(await server.inject('/v1/pay/status'))).to.include({ configured: true, schema_ready: true });

        const replacement = Path.join(dir, 'empty.db');
        new Sqlite(replacement).close();
        Fs.renameSync(replacement, file);
        expect(body(await server.inject('/v1/pay/status'))).to.equal({ configured: true, schema_ready: false, sections: ['wallet', 'tokens', 'gateway'] });
        await server.stop();
    });

    it('answers 501, never a 500, when the file is written over in place with something that is no database', async () => {

        const credentials = await provisionPay(Path.join(tempDir(), 'pay.db'));
        const file = credentials.PAY_DB_URL;
        const server = await testServer({ pay: { url: file, ...provisionedKeys(credentials) } });
        expect(body(await server.inject('/v1/pay/status'))).to.include({ configured: true, schema_ready: true });

        Fs.writeFileSync(file, 'ledger, handwritten'.repeat(300));
        for (const suffix of ['-wal', '-shm']) {
            Fs.rmSync(file + suffix, { force: true });
        }

        expect(body(await server.inject('/v1/pay/status'))).to.include({ configured: false, schema_ready: false });
        expectError(await server.inject({ url: '/v1/pay/wallet', headers: bearer(server, 'alice') }), 501, 'pay_not_provisioned');
        await server.stop();
    });

    it('reads a database of another application as not configured', async () => {

        const file = Path.join(tempDir(), 'pay.db');
        const other = new Sqlite(file);
        other.exec('CREATE TABLE schema_migrations (version TEXT PRIMARY KEY)');
        other.close();
        const server = await testServer({ pay: { url: file, ...keys } });
        expect(body(await server.inject('/v1/pay/status'))).to.include({ configured: false, schema_ready: false });
        expect(body<{ namespaces: Record<string, unknown> }>(await server.inject('/health')).namespaces.pay).to.equal({ state: 'unconfigured', engine: 'sqlite', schema_version: null, storage: 'file' });
        await server.stop();
    });

    it('refuses to start on a pay database that fails its integrity check', async () => {

        const file = (await provisionPay(Path.join(tempDir(), 'pay.db'))).PAY_DB_URL;
        breakIntegrity(file);
        await expect(testServer({ pay: { url: file, ...keys } })).to.reject(`Pay database ${file}: failed its integrity check: NULL value in t.a: stop every localgate that uses this file, then put back a copy of it, or move it away (with any -wal and -shm file beside it) so that the namespace starts anew`);
    });

    it('names a damaged pay database and what to do', async () => {

        const file = (await provisionPay(Path.join(tempDir(), 'pay.db'))).PAY_DB_URL;
        damagePages(file);
        await expect(testServer({ pay: { url: file, ...keys } })).to.reject(`Pay database ${file}: database disk image is malformed: stop every localgate that uses this file, then put back a copy of it, or move it away (with any -wal and -shm file beside it) so that the namespace starts anew`);
    });

    it('applies later pay migrations on startup to a database provisioned before', async () => {

        const file = Path.join(tempDir(), 'pay.db');
        const db = openDatabase(file);
        migrate(db, namespaceMigrations(paySchema).slice(0, 1));
        closeDatabase(db);

        const server = await testServer({ pay: { url: file, ...keys } });
        expect(body<{ namespaces: Record<string, unknown> }>(await server.inject('/health')).namespaces.pay).to.equal({ state: 'unconfigured', engine: 'sqlite', schema_version: namespaceMigrations(paySchema).length, storage: 'file' });
        await server.stop();

        // A database provisioned before keys were recorded gets its pair from rotate-keys.
        const pair = provisionedKeys(rotatePayKeys(file));
        const rotated = await testServer({ pay: { url: file, ...pair } });
        expect(body(await rotated.inject('/v1/pay/status'))).to.include({ configured: true, schema_ready: true });
        await rotated.stop();
    });

    it('refuses to start on a pay migration edited after it was applied', async () => {

        const file = (await provisionPay(Path.join(tempDir(), 'pay.db'))).PAY_DB_URL;
        const db = new Sqlite(file);
        db.prepare(`UPDATE schema_migrations SET checksum = 'edited' WHERE version = 1`).run();
        db.close();

        await expect(testServer({ pay: { url: file, ...keys } })).to.reject(/Migration .*migrations\/sqlite\/pay\/001_.*\.sql was edited after it was applied/);
    });

    it('keeps an in-memory pay database unconfigured: it is never provisioned', async () => {

        const readiness = followPayFile(':memory:', keys);
        expect(await statusOf(readiness)).to.include({ configured: false, schema_ready: false });
        expect(await readiness.readiness()).to.equal({ ready: false, configured: false, gap: 'unconfigured' });
        expect(await readiness.health()).to.equal({ state: 'unconfigured', engine: 'sqlite', schema_version: null, storage: 'file' });
        await readiness.close();
        await readiness.close();
    });
});


describe('provisionPay()', () => {

    it('creates the database with its schema and returns fresh keys each time', async () => {

        const file = Path.join(tempDir(), 'nested', 'pay.db');
        const first = await provisionPay(file);
        const second = await provisionPay(file);
        expect(first.PAY_DB_URL).to.equal(file);
        expect(first.PAY_DB_PUBLISHABLE_KEY).to.match(/^pk_local_[0-9a-f]{32}$/);
        expect(first.PAY_DB_SECRET_KEY).to.match(/^sk_local_[0-9a-f]{48}$/);
        expect(second.PAY_DB_SECRET_KEY).to.not.equal(first.PAY_DB_SECRET_KEY);

        const readiness = followPayFile(file, provisionedKeys(second));
        expect(await statusOf(readiness)).to.include({ configured: true, schema_ready: true });
        const state = await readiness.readiness();
        expect(state.ready).to.be.true();
        expect(state.ready && (state.database as SqliteNamespace).db.pragma('synchronous', { simple: true })).to.equal(2);
        await readiness.close();
        const retired = followPayFile(file, provisionedKeys(first));
        expect(await statusOf(retired)).to.include({ configured: false, schema_ready: false });
        await retired.close();
    });

    it('records the pair it is given, replacing the one recorded before', async () => {

        const file = Path.join(tempDir(), 'pay.db');
        const minted = provisionedKeys(await provisionPay(file));
        const given = mintPayKeys();
        expect(await provisionPay(file, undefined, given)).to.equal({ PAY_DB_URL: file, PAY_DB_PUBLISHABLE_KEY: given.publishableKey, PAY_DB_SECRET_KEY: given.secretKey });
        for (const [pair, configured] of [[given, true], [minted, false]] as const) {
            const readiness = followPayFile(file, pair);
            expect(await statusOf(readiness)).to.equal({ configured, schema_ready: configured, sections: ['wallet', 'tokens', 'gateway'] });
            await readiness.close();
        }
    });

    it('refuses a given pair that is half set, empty or not printable, naming the setting, never the key', async () => {

        const file = Path.join(tempDir(), 'pay.db');
        const pair = mintPayKeys();
        const refusals: [Partial<typeof pair>, string][] = [
            [{ publishableKey: pair.publishableKey }, 'PAY_DB_SECRET_KEY must be set together with PAY_DB_PUBLISHABLE_KEY: set both to record that pair, or neither for a fresh one'],
            [{ secretKey: pair.secretKey }, 'PAY_DB_PUBLISHABLE_KEY must be set together with PAY_DB_SECRET_KEY: set both to record that pair, or neither for a fresh one'],
            [{ ...pair, publishableKey: '' }, 'PAY_DB_PUBLISHABLE_KEY is empty: set it to the key to record, or unset both keys for a fresh pair'],
            [{ ...pair, secretKey: '   ' }, 'PAY_DB_SECRET_KEY is empty: set it to the key to record, or unset both keys for a fresh pair'],
            [{ ...pair, secretKey: `${pair.secretKey}\u0007` }, 'PAY_DB_SECRET_KEY holds a control character (a line break, a tab): a key must be printable text']
        ];

        for (const [given, message] of refusals) {
            await expect(provisionPay(file, undefined, given)).to.reject(message);
        }

        expect(Fs.existsSync(file)).to.be.false();
    });

    it('refuses a database that holds other tables but no pay migrations, and leaves it as it was', async () => {

        const dir = tempDir();
        const foreign: [string, string][] = [
            ['notes.db', 'CREATE TABLE notes (body TEXT)'],
            ['migrated.db', 'CREATE TABLE schema_migrations (version TEXT PRIMARY KEY)']
        ];

        for (const [name, schema] of foreign) {
            const file = Path.join(dir, name);
            const other = new Sqlite(file);
            other.exec(schema);
            other.close();
            await expect(provisionPay(file, undefined, mintPayKeys())).to.reject(`The database at ${file} holds tables but no pay migrations: it belongs to something else, so pay is not provisioned there; point PAY_DB_URL at a new or empty database`);
            const after = new Sqlite(file, { readonly: true });
            expect(after.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all()).to.equal([{ name: schema.split(' ')[2] }]);
            after.close();
        }
    });

    it('refuses to provision memory, or a URL that names no file', async () => {

        await expect(provisionPay(':memory:')).to.reject(/PAY_DB_URL must name a file to provision/);
        const dir = tempDir();
        process.chdir(dir);
        try {
            await expect(provisionPay('http://example.com/pay.db')).to.reject('PAY_DB_URL must be a postgres:// URL, a path or a file: URL on this machine, not a http: URL');
            expect(Fs.readdirSync(dir)).to.equal([]);
        }
        finally {
            process.chdir(Path.join(__dirname, '..'));
        }
    });
});


describe('rotatePayKeys()', () => {

    it('refuses a database that is missing or not provisioned', () => {

        const file = Path.join(tempDir(), 'pay.db');
        expect(() => rotatePayKeys(file)).to.throw(`There is no pay database at ${file}: run \`npx localgate provision pay\` first`);
        new Sqlite(file).close();
        expect(() => rotatePayKeys(file)).to.throw(`The pay database at ${file} is not provisioned: run \`npx localgate provision pay\` first`);
    });
});


describe('payLocation()', () => {

    it('understands paths and file: URLs', () => {

        expect(payLocation('/srv/pay.db')).to.equal({ engine: 'sqlite', file: '/srv/pay.db' });
        expect(payLocation('pay.db')).to.equal({ engine: 'sqlite', file: Path.resolve('pay.db') });
        expect(payLocation(Url.pathToFileURL('/srv/my pay.db').href)).to.equal({ engine: 'sqlite', file: '/srv/my pay.db' });
        expect(payLocation('file:data/my%20pay.db?mode=rwc')).to.equal({ engine: 'sqlite', file: Path.resolve('data/my pay.db') });
        expect(payLocation(':memory:')).to.equal({ engine: 'sqlite', file: ':memory:' });
    });
});
