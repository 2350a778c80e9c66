import Fs from 'node:fs';
import Path from 'node:path';
import Url from 'node:url';

import Code from '@hapi/code';
import Lab from '@hapi/lab';
import Sqlite from 'better-sqlite3';

import { provisionPay } from '../lib';
import { wallContext } from '../lib/clock';
import { payDatabaseFile } from '../lib/config';
import { namespaceMigrations } from '../lib/storage/sqlite/images';
import { migrate } from '../lib/storage/sqlite/migrate';
import { closeDatabase, openDatabase } from '../lib/storage/sqlite/open';
import { PayReadiness } from '../lib/storage/sqlite/pay-readiness';
import { bearer, body, breakIntegrity, tempDir, testServer } from './helpers/server';


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

        const file = provisionPay(Path.join(tempDir(), 'pay.db')).PAY_DB_URL;
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

    it('is unconfigured when the file is not a database', async () => {

        const file = Path.join(tempDir(), 'pay.db');
        Fs.writeFileSync(file, 'ledger, handwritten'.repeat(300));
        const server = await testServer({ pay: { url: file, ...keys } });
        expect(body(await server.inject('/v1/pay/status'))).to.include({ configured: false });
        await server.stop();
    });

    it('is configured without schema for an empty database, and 501s say so', async () => {

        const file = Path.join(tempDir(), 'pay.db');
        new Sqlite(file).close();
        const server = await testServer({ pay: { url: file, ...keys } });
        expect(body(await server.inject('/v1/pay/status'))).to.equal({ configured: true, schema_ready: false, sections: ['wallet', 'tokens', 'gateway'] });
        const res = await server.inject({ url: '/v1/pay/wallet/', headers: bearer(server, 'alice') });
        expect(res.statusCode).to.equal(501);
        expect(body(res)).to.include({ code: 'pay_not_provisioned', configured: true, schema_ready: false, message: 'The pay database has no schema yet: run `localgate provision pay`' });
        expect(body(await server.inject('/health')).namespaces).to.include({ pay: { state: 'configured', schema_version: 0, storage: 'file' } });
        await server.stop();
    });

    it('follows the files without a restart: provisioned, then removed', async () => {

        const dir = tempDir();
        const file = Path.join(dir, 'pay.db');
        const server = await testServer({ pay: { url: file, ...keys } });
        expect(body(await server.inject('/v1/pay/status'))).to.include({ configured: false, schema_ready: false });

        provisionPay(file);
        expect(body(await server.inject('/v1/pay/status'))).to.include({ configured: true, schema_ready: true });
        const gated = await server.inject('/v1/pay/tokens/');
        expect(gated.statusCode).to.equal(401);
        const health = body<{ namespaces: Record<string, unknown> }>(await server.inject('/health'));
        expect(health.namespaces.pay).to.equal({ state: 'ready', schema_version: namespaceMigrations('pay').length, storage: 'file' });

        for (const suffix of ['', '-wal', '-shm']) {
            Fs.rmSync(file + suffix, { force: true });
        }

        expect(body(await server.inject('/v1/pay/status'))).to.include({ configured: false, schema_ready: false });
        expect((await server.inject('/v1/pay/tokens/')).statusCode).to.equal(501);
        await server.stop();
    });

    it('follows a file replaced by another database, never the deleted one', async () => {

        const dir = tempDir();
        const file = provisionPay(Path.join(dir, 'pay.db')).PAY_DB_URL;
        const server = await testServer({ pay: { url: file, ...keys } });
        expect(body(await server.inject('/v1/pay/status'))).to.include({ configured: true, schema_ready: true });

        const replacement = Path.join(dir, 'empty.db');
        new Sqlite(replacement).close();
        Fs.renameSync(replacement, file);
        expect(body(await server.inject('/v1/pay/status'))).to.include({ configured: true, schema_ready: false });
        await server.stop();
    });

    it('reads a database of another application as configured but not provisioned', async () => {

        const file = Path.join(tempDir(), 'pay.db');
        const other = new Sqlite(file);
        other.exec('CREATE TABLE schema_migrations (version TEXT PRIMARY KEY)');
        other.close();
        const server = await testServer({ pay: { url: file, ...keys } });
        expect(body(await server.inject('/v1/pay/status'))).to.include({ configured: true, schema_ready: false });
        expect(body<{ namespaces: Record<string, unknown> }>(await server.inject('/health')).namespaces.pay).to.equal({ state: 'configured', schema_version: null, storage: 'file' });
        await server.stop();
    });

    it('refuses to start on a pay database that fails its integrity check', async () => {

        const file = provisionPay(Path.join(tempDir(), 'pay.db')).PAY_DB_URL;
        breakIntegrity(file);
        await expect(testServer({ pay: { url: file, ...keys } })).to.reject(`Pay database ${file} failed its integrity check: NULL value in t.a`);
    });

    it('applies later pay migrations on startup to a database provisioned before', async () => {

        const file = Path.join(tempDir(), 'pay.db');
        const db = openDatabase(file);
        migrate(db, namespaceMigrations('pay').slice(0, 1));
        closeDatabase(db);

        const server = await testServer({ pay: { url: file, ...keys } });
        expect(body(await server.inject('/v1/pay/status'))).to.include({ configured: true, schema_ready: true });
        await server.stop();
    });

    it('refuses to start on a pay migration edited after it was applied', async () => {

        const file = provisionPay(Path.join(tempDir(), 'pay.db')).PAY_DB_URL;
        const db = new Sqlite(file);
        db.prepare(`UPDATE schema_migrations SET checksum = 'edited' WHERE version = 1`).run();
        db.close();

        await expect(testServer({ pay: { url: file, ...keys } })).to.reject(/Migration .*migrations\/pay\/001_.*\.sql was edited after it was applied/);
    });

    it('keeps an in-memory pay database configured but never provisioned', () => {

        const readiness = new PayReadiness({ url: ':memory:', ...keys }, wallContext());
        expect(readiness.status()).to.include({ configured: true, schema_ready: false });
        expect(readiness.store()).to.be.null();
        expect(readiness.database()).to.be.null();
        readiness.close();
        readiness.close();
    });
});


describe('provisionPay()', () => {

    it('creates the database with its schema and returns fresh keys each time', () => {

        const file = Path.join(tempDir(), 'nested', 'pay.db');
        const first = provisionPay(file);
        const second = provisionPay(file);
        expect(first.PAY_DB_URL).to.equal(file);
        expect(first.PAY_DB_PUBLISHABLE_KEY).to.match(/^pk_local_[0-9a-f]{32}$/);
        expect(first.PAY_DB_SECRET_KEY).to.match(/^sk_local_[0-9a-f]{48}$/);
        expect(second.PAY_DB_SECRET_KEY).to.not.equal(first.PAY_DB_SECRET_KEY);

        const readiness = new PayReadiness({ url: file, ...keys }, wallContext());
        expect(readiness.status()).to.include({ configured: true, schema_ready: true });
        expect(readiness.store()).to.not.be.null();
        expect(readiness.database()!.pragma('synchronous', { simple: true })).to.equal(2);
        readiness.close();
    });

    it('refuses to provision memory', () => {

        expect(() => provisionPay(':memory:')).to.throw(/PAY_DB_URL must name a file to provision/);
    });
});


describe('payDatabaseFile()', () => {

    it('understands paths and file: URLs', () => {

        expect(payDatabaseFile('/srv/pay.db')).to.equal('/srv/pay.db');
        expect(payDatabaseFile('pay.db')).to.equal(Path.resolve('pay.db'));
        expect(payDatabaseFile(Url.pathToFileURL('/srv/my pay.db').href)).to.equal('/srv/my pay.db');
        expect(payDatabaseFile('file:data/my%20pay.db?mode=rwc')).to.equal(Path.resolve('data/my pay.db'));
        expect(payDatabaseFile(':memory:')).to.equal(':memory:');
    });
});
