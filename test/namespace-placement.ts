import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';
import Sqlite from 'better-sqlite3';

import { provisionPay } from '../lib';
import { adminQuery, freshDatabase, skipWithoutPostgres } from './helpers/postgres';
import { adminBearer, body, tempDir, testServer } from './helpers/server';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


const keys = { publishableKey: 'pk_local_test', secretKey: 'sk_local_test' };
const vehicle = { id: 'v-van', make: 'Ford', model: 'Transit', year: 2021, seats: 3, daily_rate: 70, currency: 'GBP' };
const business = { id: 'b-pier', name: 'Pier Kiosk', category: 'Kiosk', city: 'Harbourside', phone: '+1 207 555 0199' };


describe('a data set of SQLite namespaces placed one by one', () => {

    it('keeps a namespace with a file of its own there, and the others and pay in memory', async () => {

        const file = Path.join(tempDir(), 'commerce.db');
        const server = await testServer({ namespaceUrls: { commerce: file }, memoryPay: true });
        expect(body(await server.inject('/health')).namespaces).to.equal({
            commerce: { state: 'ready', engine: 'sqlite', schema_version: 4, storage: 'file' },
            logistics: { state: 'ready', engine: 'sqlite', schema_version: 6, storage: 'memory' },
            weather: { state: 'ready', engine: 'sqlite', schema_version: 1, storage: 'memory' },
            pay: { state: 'ready', engine: 'sqlite', schema_version: 7, storage: 'memory' }
        });

        const products = body<{ total: number }>(await server.inject('/v1/commerce/products'));
        expect(products.total).to.equal(35);
        expect((await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server) })).statusCode).to.equal(201);
        await server.stop();
        expect(Fs.existsSync(file)).to.be.true();
    });

    it('keeps the namespaces without a file of their own in DATA_DIR, unseeded when asked', async () => {

        const dir = tempDir();
        const file = Path.join(tempDir(), 'logistics.db');
        const server = await testServer({ dataDir: dir, namespaceUrls: { logistics: file }, seed: false });
        expect(body(await server.inject('/health')).namespaces).to.equal({
            commerce: { state: 'ready', engine: 'sqlite', schema_version: 4, storage: 'file' },
            logistics: { state: 'ready', engine: 'sqlite', schema_version: 6, storage: 'file' },
            weather: { state: 'ready', engine: 'sqlite', schema_version: 1, storage: 'file' },
            pay: { state: 'unconfigured', engine: 'sqlite', schema_version: null, storage: 'file' }
        });
        expect(Fs.readdirSync(dir).filter((name) => name.endsWith('.db'))).to.equal(['commerce.db', 'weather.db']);
        expect(body<{ total: number }>(await server.inject('/v1/commerce/products')).total).to.equal(0);
        await server.stop();
    });

    it('refuses to start on a pay file whose migration was edited, closing the namespaces it opened', async () => {

        const pay = (await provisionPay(Path.join(tempDir(), 'pay.db'))).PAY_DB_URL;
        const db = new Sqlite(pay);
        db.prepare(`UPDATE schema_migrations SET checksum = 'edited' WHERE version = 1`).run();
        db.close();

        const file = Path.join(tempDir(), 'commerce.db');
        await expect(testServer({ namespaceUrls: { commerce: file }, pay: { url: pay, ...keys } })).to.reject(/Migration .*migrations\/sqlite\/pay\/001_.*\.sql was edited after it was applied/);
    });
});


describe('a data set across SQLite and PostgreSQL', { skip: skipWithoutPostgres('the data set across engines'), timeout: 20_000 }, () => {

    it('loads a fixture into a SQLite namespace and a PostgreSQL one together', async () => {

        const database = await freshDatabase();
        try {
            const file = Path.join(tempDir(), 'commerce.db');
            const server = await testServer({ databaseUrl: database.url, namespaceUrls: { commerce: file }, seed: false, memoryPay: true });
            const health = body<{ namespaces: Record<string, object> }>(await server.inject('/health')).namespaces;
            expect(health.commerce).to.include({ engine: 'sqlite', storage: 'file' });
            expect(health.logistics).to.include({ engine: 'postgres', storage: 'server', state: 'ready' });
            expect(await server.app.localgate.data.loadFixture({ commerce: { businesses: [business] }, logistics: { vehicles: [vehicle] } }, 'test')).to.equal({ commerce: 1, logistics: 1 });
            expect(body<{ total: number }>(await server.inject('/v1/commerce/businesses')).total).to.equal(1);
            expect(body<{ total: number }>(await server.inject('/v1/logistics/vehicles')).total).to.equal(1);
            await server.stop();
        }
        finally {
            await database.drop();
        }
    });

    it('serves pay on PostgreSQL provisioned through provisionPay', async () => {

        const database = await freshDatabase();
        try {
            const credentials = await provisionPay(database.url);
            expect(credentials.PAY_DB_URL).to.equal(database.url);
            const server = await testServer({
                databaseUrl: database.url,
                pay: { url: credentials.PAY_DB_URL, publishableKey: credentials.PAY_DB_PUBLISHABLE_KEY, secretKey: credentials.PAY_DB_SECRET_KEY }
            });

            expect(body(await server.inject('/v1/pay/status'))).to.include({ configured: true, schema_ready: true });
            expect(body<{ namespaces: Record<string, object> }>(await server.inject('/health')).namespaces.pay).to.include({ state: 'ready', engine: 'postgres', storage: 'server' });
            await server.stop();
        }
        finally {
            await database.drop();
        }
    });

    it('closes the namespaces it opened when a later one cannot be opened', async () => {

        const database = await freshDatabase();
        try {
            await expect(testServer({ databaseUrl: database.url, namespaceUrls: { weather: 'postgres://postgres@127.0.0.1:1/nowhere' }, database: { connectTimeoutMs: 2000 } }))
                .to.reject(/^Cannot open the weather schema on PostgreSQL at 127\.0\.0\.1:1\/nowhere: /);
            const open = await adminQuery(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = '${database.name}'`);
            expect(open.rows[0].n).to.equal(0);
        }
        finally {
            await database.drop();
        }
    });
});
