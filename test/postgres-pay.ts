import Crypto from 'node:crypto';
import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';
import type { Server, ServerInjectResponse } from '@hapi/hapi';
import Pg from 'pg';

import { provisionPay, rotatePayKeys, type PayCredentials } from '../lib/storage';
import type { PaySettings } from '../lib/storage/settings';
import { namespaceMigrations, paySchema } from '../lib/storage/migrations';
import { mintPayKeys } from '../lib/storage/pay-keys';
import { PgDatabase } from '../lib/storage/postgres/database';
import { migrate } from '../lib/storage/postgres/migrate';
import { expectLedgerExact, timedPay, type PaySql } from './helpers/ledger';
import { adminQuery, freshDatabase, schemaQuery, skipWithoutPostgres } from './helpers/postgres';
import { statusCounts } from './helpers/processes';
import { bearer, body, tempDir, testServer } from './helpers/server';
import { until } from './helpers/until';


export const lab = Lab.script();
const { after, before, describe, it } = lab;
const { expect } = Code;

const skip = skipWithoutPostgres('pay on PostgreSQL');
// A pool's wait for a connection is long enough for requests queued on one wallet's row lock on a busy machine: the
// races below count answers, and a 503 for a wait would only measure the machine.
const database = { poolMax: 8, connectTimeoutMs: 20_000, statementTimeoutMs: 10_000 };
const sections = ['wallet', 'tokens', 'gateway'];

type Database = Awaited<ReturnType<typeof freshDatabase>>;
type Health = { namespaces: Record<string, Record<string, unknown>> };


function settings(credentials: PayCredentials): PaySettings {

    return { url: credentials.PAY_DB_URL, publishableKey: credentials.PAY_DB_PUBLISHABLE_KEY, secretKey: credentials.PAY_DB_SECRET_KEY };
}


/** A server whose pay is on PostgreSQL at `pay` (the other namespaces stay on SQLite in memory). */
function pgPayServer(pay: PaySettings): Promise<Server> {

    return testServer({ pay, database });
}


/** A fresh database with a provisioned pay schema, and a server on it; both go when the server stops. */
async function provisionedServer(): Promise<{ server: Server; db: Database; credentials: PayCredentials }> {

    const db = await freshDatabase();
    const credentials = await provisionPay(db.url, database);
    const server = await pgPayServer(settings(credentials));
    server.ext('onPostStop', () => db.drop());
    return { server, db, credentials };
}


/** A server on a freshly provisioned SQLite pay file: the engine PostgreSQL must answer like. */
async function sqliteServer(): Promise<Server> {

    return testServer({ pay: settings(await provisionPay(Path.join(tempDir(), 'pay.db'))) });
}


function move(server: Server, subject: string, direction: 'deposit' | 'withdraw', payload: object, key: string = Crypto.randomUUID()): Promise<ServerInjectResponse> {

    const headers = { ...bearer(server, subject), 'content-type': 'application/json', 'idempotency-key': key };
    return server.inject({ method: 'POST', url: `/v1/pay/gateway/${direction}`, headers, payload });
}


/** Sends count requests, at most width of them in flight at once, and answers their responses in the order sent. */
async function inFlight<T>(count: number, width: number, send: () => Promise<T>): Promise<T[]> {

    const results: T[] = [];
    let next = 0;
    const lane = async (): Promise<void> => {

        while (next < count) {
            const i = next++;
            results[i] = await send();
        }
    };

    await Promise.all(Array.from({ length: width }, lane));
    return results;
}


// A response as the client sees it, with what differs from run to run (ids, instants) masked.
function shape(res: ServerInjectResponse): { status: number; replayed: unknown; body: string } {

    const masked = res.payload
        .replace(/"id":"[0-9a-f-]{36}"/g, '"id":"<id>"')
        .replace(/"(created_at|settles_at|settled_at)":"\d{4}-\d\d-\d\dT[\d:.]+Z"/g, '"$1":"<instant>"');
    return { status: res.statusCode, replayed: res.headers['idempotent-replayed'], body: masked };
}


describe('pay on PostgreSQL', { skip }, () => {

    describe('readiness', () => {

        it('is unconfigured when the database does not answer, and start does not wait on it', async () => {

            const started = Date.now();
            const server = await pgPayServer({ url: 'postgres://postgres@127.0.0.1:1/test', publishableKey: 'pk_local_x', secretKey: 'sk_local_x' });
            expect(Date.now() - started).to.be.below(4000);
            expect(body(await server.inject('/v1/pay/status'))).to.equal({ configured: false, schema_ready: false, sections });
            const res = await server.inject({ url: '/v1/pay/wallet', headers: bearer(server, 'alice') });
            expect(res.statusCode).to.equal(501);
            expect(body(res)).to.include({ code: 'pay_not_provisioned', configured: false, schema_ready: false });
            expect(body<Health>(await server.inject('/health')).namespaces.pay).to.equal({ state: 'unconfigured', engine: 'postgres', schema_version: null, storage: 'server' });
            await server.stop();
        });

        it('follows a provision made while it runs, without a restart, and a rotation retires the old pair at once', async () => {

            const db = await freshDatabase();
            const keys = { publishableKey: 'pk_local_unknown', secretKey: 'sk_local_unknown' };
            const unprovisioned = await pgPayServer({ url: db.url, ...keys });
            expect(body(await unprovisioned.inject('/v1/pay/status'))).to.equal({ configured: true, schema_ready: false, sections });
            expect((await unprovisioned.inject({ url: '/v1/pay/tokens', headers: bearer(unprovisioned, 'alice') })).statusCode).to.equal(501);
            await expect(rotatePayKeys(db.url, database)).to.reject(/^The pay database at 127\.0\.0\.1:5432\/localgate_test_\w+ is not provisioned: run `npx localgate provision pay` first$/);

            // Provisioned with a fresh pair while a server runs with other keys: a server with the printed pair is ready.
            const first = await provisionPay(db.url, database);
            expect(first.PAY_DB_URL).to.equal(db.url);
            expect(first.PAY_DB_PUBLISHABLE_KEY).to.match(/^pk_local_[0-9a-f]{32}$/);
            expect(first.PAY_DB_SECRET_KEY).to.match(/^sk_local_[0-9a-f]{48}$/);
            const server = await pgPayServer(settings(first));
            expect(body(await server.inject('/v1/pay/status'))).to.equal({ configured: true, schema_ready: true, sections });
            expect(body<Health>(await server.inject('/health')).namespaces.pay).to.equal({ state: 'ready', engine: 'postgres', schema_version: namespaceMigrations('postgres', paySchema).length, storage: 'server' });
            expect((await server.inject({ url: '/v1/pay/tokens/mit', headers: bearer(server, 'alice') })).statusCode).to.equal(200);
            expect(body(await unprovisioned.inject('/v1/pay/status'))).to.include({ configured: false });

            const second = await rotatePayKeys(db.url, database);
            expect(second.PAY_DB_SECRET_KEY).to.not.equal(first.PAY_DB_SECRET_KEY);
            expect(body(await server.inject('/v1/pay/status'))).to.include({ configured: false, schema_ready: false });
            expect((await server.inject({ url: '/v1/pay/wallet', headers: bearer(server, 'alice') })).statusCode).to.equal(501);

            for (const pair of [settings(second), { ...settings(second), publishableKey: first.PAY_DB_PUBLISHABLE_KEY }, { ...settings(second), secretKey: first.PAY_DB_SECRET_KEY }]) {
                const other = await pgPayServer(pair);
                expect(body(await other.inject('/v1/pay/status'))).to.include({ configured: pair.secretKey === second.PAY_DB_SECRET_KEY && pair.publishableKey === second.PAY_DB_PUBLISHABLE_KEY });
                await other.stop();
            }

            // Only hashes are stored.
            const { rows } = await adminQuery('SELECT * FROM pay.credentials', db.url);
            expect(JSON.stringify(rows)).to.not.contain(second.PAY_DB_SECRET_KEY);
            expect(rows[0].secret_key_sha256).to.equal(Crypto.createHash('sha256').update(second.PAY_DB_SECRET_KEY).digest('hex'));

            await Promise.all([server.stop(), unprovisioned.stop()]);
            await db.drop();
        });

        it('is configured without schema on a database without the pay schema, and ready once provision pay records its keys as a hosted project has them, without a restart', async () => {

            const db = await freshDatabase();
            const pair = { publishableKey: 'sb_publishable_5kPq0-xZ_r9Ln3', secretKey: 'sb_secret_Qm7-vT2pLw9xK4' };
            const server = await pgPayServer({ url: db.url, ...pair });
            server.ext('onPostStop', () => db.drop());
            expect(body(await server.inject('/v1/pay/status'))).to.equal({ configured: true, schema_ready: false, sections });
            const refused = await server.inject({ url: '/v1/pay/wallet', headers: bearer(server, 'alice') });
            expect(refused.statusCode).to.equal(501);
            expect(body(refused)).to.equal({ statusCode: 501, error: 'Not Implemented', message: 'The pay database has no schema yet: run `npx localgate provision pay`', code: 'pay_not_provisioned', configured: true, schema_ready: false });
            expect(body<Health>(await server.inject('/health')).namespaces.pay).to.equal({ state: 'configured', engine: 'postgres', schema_version: 0, storage: 'server' });

            expect(await provisionPay(db.url, database, pair)).to.equal({ PAY_DB_URL: db.url, PAY_DB_PUBLISHABLE_KEY: pair.publishableKey, PAY_DB_SECRET_KEY: pair.secretKey });
            expect(body(await server.inject('/v1/pay/status'))).to.equal({ configured: true, schema_ready: true, sections });
            const wallet = await server.inject({ url: '/v1/pay/wallet', headers: bearer(server, 'alice') });
            expect(wallet.statusCode).to.equal(200);
            expect(body(wallet)).to.include({ owner_id: 'alice', balances: [] });

            // The keys keep guarding the provisioned schema: other keys are not configured.
            const other = await pgPayServer({ url: db.url, ...mintPayKeys() });
            expect(body(await other.inject('/v1/pay/status'))).to.equal({ configured: false, schema_ready: false, sections });
            const differ = await other.inject({ url: '/v1/pay/wallet', headers: bearer(other, 'alice') });
            expect(differ.statusCode).to.equal(501);
            expect(body(differ)).to.equal({
                statusCode: 501,
                error: 'Not Implemented',
                message: 'Pay is not configured: PAY_DB_PUBLISHABLE_KEY and PAY_DB_SECRET_KEY do not match the keys recorded in the pay database; set the pair it was provisioned with, or record these with `npx localgate provision pay`',
                code: 'pay_not_provisioned',
                configured: false,
                schema_ready: false
            });
            await other.stop();
            await server.stop();
        });

        it('leaves a pay schema of another application unconfigured, and provision pay refuses it', async () => {

            const db = await freshDatabase();
            try {
                await adminQuery('CREATE SCHEMA pay; CREATE TABLE pay.notes (body text)', db.url);
                const pair = mintPayKeys();
                const server = await pgPayServer({ url: db.url, ...pair });
                expect(body(await server.inject('/v1/pay/status'))).to.equal({ configured: false, schema_ready: false, sections });
                await server.stop();

                const name = db.url.replace(/^.*@/, '');
                await expect(provisionPay(db.url, database, pair)).to.reject(`The schema pay of the database at ${name} holds tables but no pay migrations: it belongs to something else, so pay is not provisioned there; point PAY_DB_URL at another database`);
                await adminQuery('CREATE TABLE pay.schema_migrations (version text PRIMARY KEY)', db.url);
                await expect(provisionPay(db.url, database, pair)).to.reject(/^The schema pay of the database at .* holds tables but no pay migrations/);
                const { rows } = await adminQuery(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'pay' ORDER BY table_name`, db.url);
                expect(rows).to.equal([{ table_name: 'notes' }, { table_name: 'schema_migrations' }]);
            }
            finally {
                await db.drop();
            }
        });

        it('is configured without schema when the keys match but a migration is missing, and 501s say so', async () => {

            const { server, db } = await provisionedServer();
            await adminQuery('DELETE FROM pay.schema_migrations WHERE version = 2', db.url);
            expect(body(await server.inject('/v1/pay/status'))).to.equal({ configured: true, schema_ready: false, sections });
            const res = await server.inject({ url: '/v1/pay/wallet', headers: bearer(server, 'alice') });
            expect(res.statusCode).to.equal(501);
            expect(body(res)).to.include({ code: 'pay_not_provisioned', configured: true, schema_ready: false });
            expect(body<Health>(await server.inject('/health')).namespaces.pay).to.include({ state: 'configured', engine: 'postgres' });
            await expect(rotatePayKeys(db.url, database)).to.reject(/^The pay database at 127\.0\.0\.1:5432\/localgate_test_\w+ is not provisioned: run `npx localgate provision pay` first$/);
            await server.stop();
        });

        it('applies later pay migrations at start to a schema provisioned before, and leaves others alone', async () => {

            const db = await freshDatabase();
            const keys = { publishableKey: 'pk_local_x', secretKey: 'sk_local_x' };
            const empty = await pgPayServer({ url: db.url, ...keys });
            expect(body<Health>(await empty.inject('/health')).namespaces.pay).to.equal({ state: 'configured', engine: 'postgres', schema_version: 0, storage: 'server' });
            await empty.stop();
            expect((await adminQuery(`SELECT 1 FROM information_schema.schemata WHERE schema_name = 'pay'`, db.url)).rowCount).to.equal(0);

            const pg = new PgDatabase(db.url, 'pay', database);
            await migrate(pg, namespaceMigrations('postgres', paySchema).slice(0, 1));
            await pg.close();

            const server = await pgPayServer({ url: db.url, ...keys });
            expect(body<Health>(await server.inject('/health')).namespaces.pay).to.equal({ state: 'unconfigured', engine: 'postgres', schema_version: namespaceMigrations('postgres', paySchema).length, storage: 'server' });
            await server.stop();

            // A schema provisioned before keys were recorded gets its pair from rotate-keys.
            const rotated = await pgPayServer(settings(await rotatePayKeys(db.url, database)));
            expect(body(await rotated.inject('/v1/pay/status'))).to.include({ configured: true, schema_ready: true });
            await rotated.stop();
            await db.drop();
        });

        it('passes a migration problem through unchanged when provisioning again', async () => {

            const db = await freshDatabase();
            try {
                await provisionPay(db.url, database);
                await adminQuery('UPDATE pay.schema_migrations SET checksum = \'edited\' WHERE version = 1', db.url);
                await expect(provisionPay(db.url, database)).to.reject(/^Migration .*001_token_types\.sql was edited after it was applied to the schema pay of /);
            }
            finally {
                await db.drop();
            }
        });

        it('names the database a provision cannot reach', async () => {

            await expect(provisionPay('postgres://postgres:secret@127.0.0.1:1/test', database)).to.reject('Cannot use the pay database at 127.0.0.1:1/test: The database cannot be reached, try again later');
            await expect(rotatePayKeys('postgres://postgres:secret@127.0.0.1:1/test', database)).to.reject(/^Cannot use the pay database at 127\.0\.0\.1:1\/test: /);
        });
    });

    describe('ledger', () => {

        let pg: Server;
        let lite: Server;

        before(async () => {

            ({ server: pg } = await provisionedServer());
            lite = await sqliteServer();
        });

        after(async () => {

            await Promise.all([pg.stop(), lite.stop()]);
        });

        it('answers a sequence of moves, refusals and replays as the SQLite engine does', async () => {

            const steps: [string, 'deposit' | 'withdraw', object, string?][] = [
                ['alice', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 1000 }, 'k1'],
                ['alice', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 1000 }, 'k1'],
                ['alice', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 999 }, 'k1'],
                ['alice', 'withdraw', { provider_id: 'sandbox', asset: 'USD', amount: 400 }, 'k2'],
                ['alice', 'withdraw', { provider_id: 'sandbox', asset: 'USD', amount: 601 }, 'k3'],
                ['alice', 'withdraw', { provider_id: 'sandbox', asset: 'USD', amount: 601 }, 'k3'],
                ['alice', 'withdraw', { provider_id: 'sandbox', asset: 'EUR', amount: 1 }],
                ['alice', 'deposit', { provider_id: 'legacy-bank', asset: 'USD', amount: 5 }],
                ['alice', 'deposit', { provider_id: 'nowhere', asset: 'USD', amount: 5 }],
                ['alice', 'deposit', { provider_id: 'sandbox', asset: 'NST', amount: 5 }],
                ['alice', 'deposit', { provider_id: 'sandbox', asset: 'XYZ', amount: 5 }],
                ['alice', 'deposit', { provider_id: 'sandbox', asset: 'MXT', amount: 250 }],
                ['bob', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 7 }, 'k1'],
                ['bob', 'withdraw', { provider_id: 'sandbox', asset: 'USD', amount: 7 }],
                ['bob', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 9_007_199_254_740_991 }],
                ['carol', 'deposit', { provider_id: 'bank-transfer', asset: 'USD', amount: 5000 }],
                ['carol', 'deposit', { provider_id: 'card', asset: 'USD', amount: 502 }, 'k4'],
                ['carol', 'deposit', { provider_id: 'card', asset: 'USD', amount: 502 }, 'k4'],
                ['carol', 'deposit', { provider_id: 'card', asset: 'USD', amount: 300 }],
                ['carol', 'withdraw', { provider_id: 'bank-transfer', asset: 'USD', amount: 200 }],
                ['carol', 'withdraw', { provider_id: 'bank-transfer', asset: 'USD', amount: 101 }],
                ['carol', 'withdraw', { provider_id: 'card', asset: 'USD', amount: 100 }]
            ];

            for (const [subject, direction, payload, key] of steps) {
                const sent = key ?? Crypto.randomUUID();
                const [expected, actual] = [shape(await move(lite, subject, direction, payload, sent)), shape(await move(pg, subject, direction, payload, sent))];
                expect(actual, `${subject} ${direction} ${JSON.stringify(payload)}`).to.equal(expected);
            }

            for (const url of ['/v1/pay/wallet', '/v1/pay/wallet/transactions', '/v1/pay/wallet/transactions?limit=2&offset=1', '/v1/pay/tokens', '/v1/pay/tokens/mxt', '/v1/pay/tokens/ABC', '/v1/pay/gateway/providers']) {
                for (const subject of ['alice', 'bob', 'carol']) {
                    const [expected, actual] = [shape(await lite.inject({ url, headers: bearer(lite, subject) })), shape(await pg.inject({ url, headers: bearer(pg, subject) }))];
                    expect(actual, `${subject} ${url}`).to.equal(expected);
                }
            }
        });

        it('replays byte for byte and finds a transaction only for its owner', async () => {

            const key = Crypto.randomUUID();
            const first = await move(pg, 'dora', 'deposit', { provider_id: 'sandbox', asset: 'EUR', amount: 120 }, key);
            const again = await move(pg, 'dora', 'deposit', { provider_id: 'sandbox', asset: 'EUR', amount: 120 }, key);
            expect(first.statusCode).to.equal(201);
            expect(again.statusCode).to.equal(201);
            expect(again.payload).to.equal(first.payload);
            expect(again.headers['idempotent-replayed']).to.equal('true');

            const { id } = body<{ id: string }>(first);
            expect(body((await pg.inject({ url: `/v1/pay/wallet/transactions/${id}`, headers: bearer(pg, 'dora') })))).to.equal(body(first));
            expect((await pg.inject({ url: `/v1/pay/wallet/transactions/${id}`, headers: bearer(pg, 'erin') })).statusCode).to.equal(404);
        });

        it('lists a wallet\'s transactions newest first, each after the one before', async () => {

            for (let i = 1; i <= 5; ++i) {
                expect((await move(pg, 'fred', 'deposit', { provider_id: 'sandbox', asset: 'GBP', amount: i })).statusCode).to.equal(201);
            }

            const list = body<{ data: { amount: number; created_at: string }[] }>(await pg.inject({ url: '/v1/pay/wallet/transactions', headers: bearer(pg, 'fred') }));
            expect(list.data.map((transaction) => transaction.amount)).to.equal([5, 4, 3, 2, 1]);
            const instants = list.data.map((transaction) => transaction.created_at);
            expect([...instants].sort().reverse()).to.equal(instants);
            expect(new Set(instants).size).to.equal(5);
        });
    });

    describe('ledger constraints', () => {

        it('refuses unbalanced, negative and edited ledgers written past the store', async () => {

            const { server, db } = await provisionedServer();
            expect((await move(server, 'jane', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 50 })).statusCode).to.equal(201);
            const { rows: [transaction] } = await adminQuery('SELECT id, wallet_id FROM pay.transactions', db.url);
            const { rows: [account] } = await adminQuery(`SELECT id FROM pay.accounts WHERE wallet_id = '${transaction.wallet_id}'`, db.url);

            await expect(adminQuery(`INSERT INTO pay.entries (transaction_id, account_id, amount, created_at) VALUES ('${transaction.id}', ${account.id}, 1, 'x')`, db.url)).to.reject(/do not sum to zero/);
            await expect(adminQuery(`BEGIN; INSERT INTO pay.entries (transaction_id, account_id, amount, created_at) VALUES ('${transaction.id}', ${account.id}, -60, 'x'); INSERT INTO pay.entries (transaction_id, account_id, amount, created_at) SELECT '${transaction.id}', id, 60, 'x' FROM pay.accounts WHERE provider_id = 'sandbox'; COMMIT`, db.url)).to.reject(/accounts_check/);
            await expect(adminQuery('UPDATE pay.entries SET amount = amount * 2', db.url)).to.reject('ledger entries are immutable');
            await expect(adminQuery('DELETE FROM pay.transactions', db.url)).to.reject('transactions are immutable');
            expect(body(await server.inject({ url: '/v1/pay/wallet', headers: bearer(server, 'jane') }))).to.include({ balances: [{ asset: 'USD', amount: 50, pending_in: 0, pending_out: 0 }] });
            await server.stop();
        });
    });

    describe('settlement schema', () => {

        it('lets a pending transaction settle once, to completed or failed at its settles_at, and changes nothing else', async () => {

            const { server, db } = await provisionedServer();
            const pending = body<{ id: string }>(await move(server, 'xia', 'deposit', { provider_id: 'bank-transfer', asset: 'USD', amount: 800 }));
            const update = (set: string) => adminQuery(`UPDATE pay.transactions SET ${set} WHERE id = '${pending.id}'`, db.url);
            await expect(update('amount = 1')).to.reject(/transactions are immutable but for a pending one settling/);
            await expect(update(`status = 'completed', settled_at = created_at, settles_at = created_at`)).to.reject(/transactions are immutable but for a pending one settling/);
            await expect(update(`status = 'completed', settled_at = created_at`)).to.reject(/transactions_settled_when_due/);
            await expect(update(`status = 'failed', settled_at = settles_at`)).to.reject(/transactions_failure_when_failed/);
            await expect(update(`status = 'completed'`)).to.reject(/transactions_settled_unless_pending/);
            await update(`status = 'completed', settled_at = settles_at`);
            await expect(update(`status = 'failed', failure_code = 'returned'`)).to.reject(/transactions are immutable but for a pending one settling/);
            await expect(adminQuery('DELETE FROM pay.transactions', db.url)).to.reject('transactions are immutable');
            await server.stop();
        });

        it('migrates a ledger written before settlement: its moves settled as made, its entries and keys kept', async () => {

            const db = await freshDatabase();
            const pg = new PgDatabase(db.url, 'pay', database);
            const migrations = namespaceMigrations('postgres', paySchema);
            await migrate(pg, migrations.slice(0, 3));
            await adminQuery(`SET search_path TO pay;
                INSERT INTO wallets VALUES ('w-1', 'yan', '2030-01-01T00:00:00.000Z');
                INSERT INTO accounts (wallet_id, asset, created_at) VALUES ('w-1', 'USD', '2030-01-01T00:00:00.000Z');
                INSERT INTO accounts (provider_id, asset, created_at) VALUES ('sandbox', 'USD', '2030-01-01T00:00:00.000Z');
                BEGIN;
                INSERT INTO transactions VALUES ('t-1', 'w-1', 'deposit', 'USD', 300, 'sandbox', 'completed', '2030-01-01T00:00:00.000Z');
                INSERT INTO entries (transaction_id, account_id, amount, created_at) VALUES ('t-1', 1, 300, '2030-01-01T00:00:00.000Z'), ('t-1', 2, -300, '2030-01-01T00:00:00.000Z');
                COMMIT;
                INSERT INTO idempotency_keys VALUES ('yan', 'k-1', 'f', '{"transaction":{"id":"t-1","created_at":"2030-01-01T00:00:00.000Z"}}', '2030-01-01T00:00:00.000Z'),
                    ('yan', 'k-2', 'f', '{"refusal":{"kind":"conflict","code":"insufficient_funds","message":"no"}}', '2030-01-01T00:00:00.000Z')`, db.url);

            expect(await migrate(pg, migrations.slice(0, 4))).to.equal([4]);
            const sql: PaySql = (text, ...params) => schemaQuery(db.url, 'pay', text, params);
            expect(await sql('SELECT id, status, created_at, settles_at, settled_at, failure_code FROM transactions')).to.equal([
                { id: 't-1', status: 'completed', created_at: '2030-01-01T00:00:00.000Z', settles_at: '2030-01-01T00:00:00.000Z', settled_at: '2030-01-01T00:00:00.000Z', failure_code: null }
            ]);
            expect(await sql('SELECT kind, balance::int AS balance FROM accounts ORDER BY id')).to.equal([{ kind: 'available', balance: 300 }, { kind: 'available', balance: -300 }]);
            const keys = await sql('SELECT key, outcome, keep_until FROM idempotency_keys ORDER BY key');
            expect(keys.map(({ key, outcome, keep_until: keepUntil }) => ({ key, outcome: JSON.parse(String(outcome)) as unknown, keep_until: keepUntil }))).to.equal([
                { key: 'k-1', outcome: { transaction: { id: 't-1', created_at: '2030-01-01T00:00:00.000Z', settles_at: '2030-01-01T00:00:00.000Z', settled_at: '2030-01-01T00:00:00.000Z', failure_code: null } }, keep_until: '2030-01-02T00:00:00.000Z' },
                { key: 'k-2', outcome: { refusal: { kind: 'conflict', code: 'insufficient_funds', message: 'no' } }, keep_until: '2030-01-02T00:00:00.000Z' }
            ]);
            await expectLedgerExact(sql);
            await expect(sql(`UPDATE transactions SET amount = 1`)).to.reject(/transactions are immutable/);
            await pg.close();
            await db.drop();
        });
    });

    describe('concurrency', { timeout: 20_000 }, () => {

        it('lets exactly 100 of 200 concurrent withdrawals of 10 from 1000 through', { timeout: 40_000 }, async () => {

            const { server } = await provisionedServer();
            await server.start();
            expect((await move(server, 'gina', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 1000 })).statusCode).to.equal(201);

            // 24 in flight, three times the pool: the pool is always full, so eight transactions contend for the wallet's
            // row lock at every moment, as with 200 sent at once, but no request waits in the pool's queue behind more
            // than 16 others. With 200 at once the last waited for all the others, longer than the pool's bound on a
            // loaded machine, and answered 503 database_unavailable: fewer refusals than 100, never more money out.
            const results = await inFlight(200, 24, () => move(server, 'gina', 'withdraw', { provider_id: 'sandbox', asset: 'USD', amount: 10 }));
            expect(statusCounts(results.map((res) => ({ status: res.statusCode, body: body<{ code?: string }>(res) })))).to.equal({ '201': 100, '409 insufficient_funds': 100 });

            const wallet = body<{ balances: { asset: string; amount: number; pending_in: number; pending_out: number }[] }>(await server.inject({ url: '/v1/pay/wallet', headers: bearer(server, 'gina') }));
            expect(wallet.balances).to.equal([{ asset: 'USD', amount: 0, pending_in: 0, pending_out: 0 }]);
            const list = body<{ total: number }>(await server.inject({ url: '/v1/pay/wallet/transactions', headers: bearer(server, 'gina') }));
            expect(list.total).to.equal(101);
            await server.stop();
        });

        it('moves money once for one Idempotency-Key sent 50 times at once, and replays the rest byte for byte', async () => {

            const { server } = await provisionedServer();
            await server.start();
            const key = Crypto.randomUUID();
            const results = await Promise.all(Array.from({ length: 50 }, () => move(server, 'hugo', 'deposit', { provider_id: 'sandbox', asset: 'KES', amount: 300 }, key)));
            expect(results.map((res) => res.statusCode)).to.equal(Array(50).fill(201));
            expect(results.filter((res) => res.headers['idempotent-replayed'] === 'true')).to.have.length(49);
            expect(new Set(results.map((res) => res.payload)).size).to.equal(1);

            const list = body<{ total: number }>(await server.inject({ url: '/v1/pay/wallet/transactions', headers: bearer(server, 'hugo') }));
            expect(list.total).to.equal(1);
            expect(body(await server.inject({ url: '/v1/pay/wallet', headers: bearer(server, 'hugo') }))).to.include({ balances: [{ asset: 'KES', amount: 300, pending_in: 0, pending_out: 0 }] });
            await server.stop();
        });

        it('applies each due transition once when two stores over one schema apply them at once beside new moves, and keeps the ledger exact', { timeout: 20_000 }, async () => {

            const { server, credentials } = await provisionedServer();
            const other = await pgPayServer(settings(credentials));
            const sql: PaySql = (text, ...params) => schemaQuery(credentials.PAY_DB_URL, 'pay', text, params);
            const callers = ['kai', 'lou', 'max', 'ned', 'oli'];
            const pending: string[] = [];
            for (const subject of callers) {
                expect((await move(server, subject, 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 1000 })).statusCode).to.equal(201);
                for (const [direction, amount] of [['deposit', 300], ['deposit', 399], ['withdraw', 100], ['withdraw', 199]] as const) {
                    const res = await move(server, subject, direction, { provider_id: 'bank-transfer', asset: 'USD', amount });
                    expect(body(res).status).to.equal('pending');
                    pending.push(body<{ id: string }>(res).id);
                }
            }

            const [a, b] = [await timedPay(server), await timedPay(other)];
            const due = new Date(Date.now() + 3 * 24 * 60 * 60 * 1000);
            const [fromA, fromB, ...moves] = await Promise.all([
                a.applyDue(due, 100),
                b.applyDue(due, 100),
                ...callers.map((subject) => move(other, subject, 'withdraw', { provider_id: 'sandbox', asset: 'USD', amount: 50 }))
            ]);

            expect(moves.map((res) => res.statusCode)).to.equal(callers.map(() => 201));
            const applied = [...fromA, ...fromB];
            expect(applied.map(({ id }) => id).sort()).to.equal([...pending].sort());
            expect(applied.filter(({ type }) => type === 'pay.transaction.failed')).to.have.length(10);
            expect(await a.nextDue()).to.be.null();
            for (const subject of callers) {
                expect(body(await server.inject({ url: '/v1/pay/wallet', headers: bearer(server, subject) }))).to.include({ balances: [{ asset: 'USD', amount: 1150, pending_in: 0, pending_out: 0 }] });
            }

            await expectLedgerExact(sql);
            await other.stop();
            await server.stop();
        });

        it('skips a transition another store claimed between its scan and its claim', async () => {

            const { server, credentials, db } = await provisionedServer();
            const other = await pgPayServer(settings(credentials));
            const res = await move(server, 'pat', 'deposit', { provider_id: 'bank-transfer', asset: 'EUR', amount: 700 });
            const pending = body<{ id: string; settles_at: string }>(res);

            // A third connection holds the row: both stores scan it as pending, then wait to claim it.
            const holder = new Pg.Client({ connectionString: credentials.PAY_DB_URL });
            await holder.connect();
            await holder.query('BEGIN');
            await holder.query('SELECT id FROM pay.transactions WHERE id = $1 FOR UPDATE', [pending.id]);
            const due = new Date(pending.settles_at);
            const both = Promise.all([(await timedPay(server)).applyDue(due, 10), (await timedPay(other)).applyDue(due, 10)]);
            const waiting = async () => Number((await adminQuery(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`, db.url)).rows[0].n);
            await until('both stores to wait on the held row', async () => await waiting() >= 2);

            await holder.query('COMMIT');
            await holder.end();
            const [first, second] = await both;
            expect([...first, ...second]).to.equal([{ type: 'pay.transaction.completed', id: pending.id, due: pending.settles_at }]);
            expect(body(await server.inject({ url: '/v1/pay/wallet', headers: bearer(server, 'pat') }))).to.include({ balances: [{ asset: 'EUR', amount: 700, pending_in: 0, pending_out: 0 }] });
            await expectLedgerExact((text, ...params) => schemaQuery(credentials.PAY_DB_URL, 'pay', text, params));
            await other.stop();
            await server.stop();
        });

        it('opens one wallet and one account for concurrent first deposits of one caller', async () => {

            const { server } = await provisionedServer();
            await server.start();
            const results = await Promise.all(Array.from({ length: 20 }, () => move(server, 'ivan', 'deposit', { provider_id: 'sandbox', asset: 'JPY', amount: 5 })));
            expect(results.map((res) => res.statusCode)).to.equal(Array(20).fill(201));
            expect(body(await server.inject({ url: '/v1/pay/wallet', headers: bearer(server, 'ivan') }))).to.include({ balances: [{ asset: 'JPY', amount: 100, pending_in: 0, pending_out: 0 }] });
            await server.stop();
        });
    });
});
