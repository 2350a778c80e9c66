import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { provisionPay } from '../lib';
import { Clock, IdSource, unheard } from '../lib/record-context';
import { DomainError } from '../lib/errors';
import { FixtureError } from '../lib/fixtures';
import { MigrationError, type Migration } from '../lib/storage/migrations';
import { PgDatabase } from '../lib/storage/postgres/database';
import { engineError, isRetryable, sqlState } from '../lib/storage/postgres/errors';
import { collectionsEmpty, insertFixtureRows } from '../lib/storage/postgres/fixtures';
import { describeUrl, migrate } from '../lib/storage/postgres/migrate';
import { PgNamespace } from '../lib/storage/postgres/namespace';
import { PgPayStore } from '../lib/namespaces/pay/postgres';
import { recordedKeys } from '../lib/storage/postgres/pay-credentials';
import { openPgProvisioned } from '../lib/storage/postgres/provisioned';
import { payNamespace } from '../lib/namespaces/pay';
import { payStatus } from '../lib/namespaces/pay/routes';
import { adminQuery, freshDatabase, skipWithoutPostgres } from './helpers/postgres';
import { logisticsNamespace } from '../lib/namespaces/logistics';
import { commerceNamespace } from '../lib/namespaces/commerce';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


const dbSettings = { poolMax: 2, connectTimeoutMs: 5000, statementTimeoutMs: 10_000 };

const demoDrivers = (JSON.parse(Fs.readFileSync(Path.join(__dirname, '..', 'data', 'demo', 'logistics.json'), 'utf8')) as { drivers: { id: string; vehicle_id: string | null; is_active: boolean }[] }).drivers;


function migration(version: number, sql: string, checksum = `sum${version}`): Migration {

    return { version, name: `step_${version}`, file: `00${version}_step_${version}.sql`, sql, checksum, earlier: [] };
}


async function withDatabase(schema: string, test: (db: PgDatabase, url: string) => Promise<void>): Promise<void> {

    const database = await freshDatabase();
    const db = new PgDatabase(database.url, schema, dbSettings);
    try {
        await test(db, database.url);
    }
    finally {
        await db.close().catch(() => undefined);
        await database.drop();
    }
}


describe('PostgreSQL errors', () => {

    it('reads an SQLSTATE only from a string code of five characters', () => {

        expect(sqlState({ code: 40001 })).to.be.undefined();
        expect(sqlState(null)).to.be.undefined();
        expect(sqlState({ code: 'ECONNREFUSED' })).to.be.undefined();
        expect(sqlState({ code: '40P01' })).to.equal('40P01');
        expect(isRetryable({ code: '40001' })).to.be.true();
        expect(isRetryable({ code: '23505' })).to.be.false();
    });

    it('maps failures to the domain errors they stand for', () => {

        const domain = new DomainError('conflict', 'conflict', 'Taken');
        expect(engineError(domain)).to.shallow.equal(domain);

        const unknown = Object.assign(new Error('syntax'), { code: '42601' });
        expect(engineError(unknown)).to.shallow.equal(unknown);

        const lost = engineError(Object.assign(new Error('lost'), { code: '08006' })) as DomainError;
        expect(lost.code).to.equal('database_unavailable');

        const refused = engineError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })) as DomainError;
        expect(refused.code).to.equal('database_unavailable');

        const terminated = engineError(new Error('Connection terminated unexpectedly')) as DomainError;
        expect(terminated.code).to.equal('database_unavailable');

        const other = Object.assign(new Error('odd'), { code: 'EOTHER' });
        expect(engineError(other)).to.shallow.equal(other);
        expect(engineError(null)).to.be.null();

        const busy = engineError({ code: '40001' }) as DomainError;
        expect(busy.code).to.equal('database_busy');
    });

    it('describes an unparsable URL without repeating it', () => {

        expect(describeUrl('not a url')).to.equal('the database');
        expect(describeUrl('postgres://user:secret@db.example:5433/app')).to.equal('db.example:5433/app');
    });
});


describe('PgDatabase', { skip: skipWithoutPostgres('the PostgreSQL database pool') }, () => {

    it('maps a failing statement to the error it stands for', async () => {

        await withDatabase('public', async (db) => {

            await db.exec('CREATE TABLE items (id text PRIMARY KEY)');
            await db.exec(`INSERT INTO items VALUES ('a')`);
            const err = await expect(db.exec(`INSERT INTO items VALUES ('a')`)).to.reject(DomainError);
            expect((err as DomainError).code).to.equal('conflict');
        });
    });

    it('runs a transaction again after a serialization failure or a deadlock', async () => {

        await withDatabase('public', async (db) => {

            await db.exec('CREATE TABLE tries (n integer)');
            let attempts = 0;
            const result = await db.transaction(async (tx) => {

                await tx.exec('INSERT INTO tries VALUES (1)');
                ++attempts;
                if (attempts < 3) {
                    throw Object.assign(new Error('retry me'), { code: attempts === 1 ? '40001' : '40P01' });
                }

                return attempts;
            });

            expect(result).to.equal(3);
            expect((await db.rows<[], { n: number }>({ name: '', text: 'SELECT n FROM tries' })).length).to.equal(1);
        });
    });

    it('gives up with database_busy once the retries run out', async () => {

        await withDatabase('public', async (db) => {

            let attempts = 0;
            const err = await expect(db.transaction(() => {

                ++attempts;
                return Promise.reject(Object.assign(new Error('again'), { code: '40001' }));
            })).to.reject(DomainError);

            expect((err as DomainError).code).to.equal('database_busy');
            expect(attempts).to.equal(5);
        });
    });

    it('drops a connection whose rollback fails from the pool', async () => {

        await withDatabase('public', async (db) => {

            const released: unknown[] = [];
            const connect = db.pool.connect.bind(db.pool);
            db.pool.connect = (async () => {

                const client = await connect();
                const query = client.query.bind(client) as (text: string) => Promise<unknown>;
                const release = client.release.bind(client);
                client.query = ((text: string) => (text === 'ROLLBACK' ? Promise.reject(new Error('rollback failed')) : query(text))) as typeof client.query;
                client.release = (err?: Error | boolean) => {

                    released.push(err);
                    release(err);
                };

                return client;
            }) as typeof db.pool.connect;

            const failure = new Error('work failed');
            await expect(db.transaction(() => Promise.reject(failure))).to.reject('work failed');
            expect(released).to.have.length(1);
            expect((released[0] as Error).message).to.equal('rollback failed');
            expect(db.pool.totalCount).to.equal(0);
        });
    });
});


describe('PostgreSQL migrations', { skip: skipWithoutPostgres('the PostgreSQL migrations') }, () => {

    it('names a failing migration and the version the schema stays at', async () => {

        await withDatabase('things', async (db) => {

            expect(await migrate(db, [migration(1, 'CREATE TABLE a (id text)')])).to.equal([1]);
            const err = await expect(migrate(db, [migration(1, 'CREATE TABLE a (id text)'), migration(2, 'CREATE TABLE broken (')])).to.reject(MigrationError);
            expect(err.message).to.startWith('Migration 002_step_2.sql failed and was rolled back (schema things of 127.0.0.1:5432/');
            expect(err.message).to.contain('stays at version 1)');
        });
    });

    it('refuses a schema newer than the code', async () => {

        await withDatabase('things', async (db, url) => {

            await migrate(db, [migration(1, 'CREATE TABLE a (id text)'), migration(2, 'CREATE TABLE b (id text)')]);
            const err = await expect(migrate(db, [migration(1, 'CREATE TABLE a (id text)')])).to.reject(MigrationError);
            expect(err.message).to.equal(`The schema things of ${describeUrl(url)} is at schema version 2 (step_2), newer than this localgate knows: upgrade localgate or use another database`);
        });
    });

    it('refuses a migration edited after it was applied', async () => {

        await withDatabase('things', async (db, url) => {

            await migrate(db, [migration(1, 'CREATE TABLE a (id text)')]);
            const err = await expect(migrate(db, [migration(1, 'CREATE TABLE a (id text, b text)', 'other')])).to.reject(MigrationError);
            expect(err.message).to.equal(`Migration 001_step_1.sql was edited after it was applied to the schema things of ${describeUrl(url)}: restore the file or start from a fresh database`);
        });
    });
});


describe('PostgreSQL fixtures', { skip: skipWithoutPostgres('the PostgreSQL fixtures') }, () => {

    const row = (id: string, extra: Record<string, unknown> = {}, references: [string, string, string][] = []) => ({ where: `shop.items[${id}]`, origin: 'fixture.json', row: { id, ...extra }, references });

    it('names the field of a reference to a missing record', async () => {

        await withDatabase('public', async (db) => {

            await db.exec('CREATE TABLE owners (id text PRIMARY KEY); CREATE TABLE items (id text PRIMARY KEY, owner_id text)');
            const err = await expect(db.transaction((tx) => insertFixtureRows(tx, [{ collection: 'items', rows: [row('1', { owner_id: 'x' }, [['owner_id', 'owners', 'x']])] }]))).to.reject(FixtureError);
            expect(err.message).to.equal('fixture.json: shop.items[1].owner_id: "x" names no record of owners');
            expect((err as FixtureError).field).to.equal('shop.items[1].owner_id');
        });
    });

    it('names the record an insert fails on, and the field of a unique key, without the engine\'s own words', async () => {

        await withDatabase('public', async (db) => {

            await db.exec('CREATE TABLE items (id text PRIMARY KEY, price integer CHECK (price > 0), code text UNIQUE)');
            const err = await expect(db.transaction((tx) => insertFixtureRows(tx, [{ collection: 'items', rows: [row('1', { price: -1 })] }]))).to.reject(FixtureError);
            expect(err.message).to.equal('fixture.json: shop.items[1]: the stored data refuses this record (it breaks a rule of items, or of what it moves)');
            expect((err as FixtureError).field).to.equal('shop.items[1]');

            const conflict = await expect(db.transaction((tx) => insertFixtureRows(tx, [{ collection: 'items', rows: [row('1', { price: 1, code: 'a' }), row('2', { price: 1, code: 'a' })] }]))).to.reject(FixtureError);
            expect(conflict.message).to.equal('fixture.json: shop.items[2].code: another stored record of items already has this code');
            expect((conflict as FixtureError).field).to.equal('shop.items[2].code');
        });
    });

    it('tells a collection with rows from empty ones', async () => {

        await withDatabase('public', async (db) => {

            await db.exec(`CREATE TABLE a (id text); CREATE TABLE b (id text); INSERT INTO b VALUES ('x')`);
            expect(await db.transaction((tx) => collectionsEmpty(tx, ['a']))).to.be.true();
            expect(await db.transaction((tx) => collectionsEmpty(tx, ['a', 'b']))).to.be.false();
        });
    });
});


describe('PgNamespace', { skip: skipWithoutPostgres('the PostgreSQL namespaces') }, () => {

    it('seeds the demo data once: a schema with rows is left as it is', async () => {

        const database = await freshDatabase();
        try {
            const first = await PgNamespace.open(commerceNamespace, database.url, dbSettings, true);
            const count = async () => (await first.db.rows<[], { n: string }>({ name: '', text: 'SELECT count(*) AS n FROM products' }))[0]!.n;
            const before = await count();
            expect(Number(before)).to.be.above(0);
            const second = await PgNamespace.open(commerceNamespace, database.url, dbSettings, true);
            await second.close();
            expect(await count()).to.equal(before);
            await first.close();
        }
        finally {
            await database.drop();
        }
    });

    it('seeds the demo drivers, which no route serves, with the vehicles they drive', async () => {

        const database = await freshDatabase();
        try {
            const logistics = await PgNamespace.open(logisticsNamespace, database.url, dbSettings, true);
            const drivers = await logistics.db.rows<[], { id: string; vehicle_id: string | null; is_active: boolean }>({ name: '', text: 'SELECT id, vehicle_id, is_active FROM drivers ORDER BY created_at, id' });
            await logistics.close();
            expect(drivers).to.equal(demoDrivers.map(({ id, vehicle_id, is_active }) => ({ id, vehicle_id, is_active })));
        }
        finally {
            await database.drop();
        }
    });

    it('names the namespace and the database it cannot open', async () => {

        const err: Error = await expect(PgNamespace.open(commerceNamespace, 'postgres://postgres:secret@127.0.0.1:1/nowhere', { ...dbSettings, connectTimeoutMs: 2000 }, false)).to.reject();
        expect(err.message).to.startWith('Cannot open the commerce schema on PostgreSQL at 127.0.0.1:1/nowhere: ');
        expect(err.message).to.not.contain('secret');
    });

    it('passes a migration error through as it is', async () => {

        const database = await freshDatabase();
        try {
            const first = await PgNamespace.open(commerceNamespace, database.url, dbSettings, false);
            await first.db.exec(`INSERT INTO schema_migrations VALUES (999, 'future', 'x', '2020-01-01')`);
            await first.close();
            const err = await expect(PgNamespace.open(commerceNamespace, database.url, dbSettings, false)).to.reject(MigrationError);
            expect(err.message).to.contain('is at schema version 999 (future), newer than this localgate knows');
        }
        finally {
            await database.drop();
        }
    });

    it('reads as unavailable when the database is gone', async () => {

        const database = await freshDatabase();
        const namespace = await PgNamespace.open(logisticsNamespace, database.url, dbSettings, false);
        try {
            expect((await namespace.health()).state).to.equal('ready');
            await database.drop();
            expect(await namespace.health()).to.equal({ state: 'unavailable', engine: 'postgres', schema_version: null, storage: 'server' });
        }
        finally {
            await namespace.close();
            await database.drop();
        }
    });
});


describe('PostgreSQL pay', { skip: skipWithoutPostgres('PostgreSQL pay') }, () => {

    const keys = { publishableKey: 'pk_local_test', secretKey: 'sk_local_test' };

    it('never matches keys against a record without key hashes', () => {

        expect(recordedKeys({ publishable_key_sha256: null, secret_key_sha256: null, applied: [] })).to.be.null();
    });

    it('reads as unconfigured without keys, opening no pool', async () => {

        const database = await freshDatabase();
        try {
            const readiness = await openPgProvisioned(payNamespace, { url: database.url }, dbSettings);
            expect(payStatus(await readiness.readiness())).to.include({ configured: false, schema_ready: false });
            expect((await readiness.health()).schema_version).to.be.null();
            expect(await readiness.readiness()).to.equal({ ready: false, configured: false, gap: 'unconfigured' });
            await readiness.close();
            for (const settings of [{}, { url: database.url, publishableKey: keys.publishableKey }]) {
                const unkeyed = await openPgProvisioned(payNamespace, settings, dbSettings);
                expect((await unkeyed.health()).schema_version).to.be.null();
                await unkeyed.close();
            }
        }
        finally {
            await database.drop();
        }
    });

    it('refuses to open a provisioned pay schema whose migration was edited', async () => {

        const database = await freshDatabase();
        try {
            const credentials = await provisionPay(database.url);
            await adminQuery(`UPDATE pay.schema_migrations SET checksum = 'edited' WHERE version = 1`, database.url);
            const settings = { url: database.url, publishableKey: credentials.PAY_DB_PUBLISHABLE_KEY, secretKey: credentials.PAY_DB_SECRET_KEY };
            await expect(openPgProvisioned(payNamespace, settings, dbSettings)).to.reject(MigrationError, /^Migration .*migrations\/postgres\/pay\/001_.*\.sql was edited after it was applied to the schema pay of /);
        }
        finally {
            await database.drop();
        }
    });

    it('lists no transactions of an owner without a wallet, and dates moves by a frozen clock', async () => {

        const database = await freshDatabase();
        await provisionPay(database.url);
        const db = new PgDatabase(database.url, 'pay', dbSettings);
        try {
            const frozen = '2030-01-02T03:04:05.000Z';
            const store = new PgPayStore(db, { clock: new Clock(new Date(frozen)), ids: new IdSource(), committed: unheard });
            expect(await store.listTransactions('nobody', { limit: 10, offset: 0 })).to.equal({ data: [], total: 0 });

            const outcome = await store.deposit('alice', { idempotencyKey: 'k1', providerId: 'sandbox', asset: 'USD', amount: 500, metadata: {} }) as { replayed: boolean; transaction: { created_at: string; amount: number } };
            expect(outcome.replayed).to.be.false();
            expect(outcome.transaction).to.include({ created_at: frozen, amount: 500 });
            const listed = await store.listTransactions('alice', { limit: 10, offset: 0 });
            expect(listed.total).to.equal(1);
            expect(listed.data[0]!.created_at).to.equal(frozen);
        }
        finally {
            await db.close();
            await database.drop();
        }
    });
});
