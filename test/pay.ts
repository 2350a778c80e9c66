import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';
import type { Server, ServerInjectResponse } from '@hapi/hapi';
import Sqlite from 'better-sqlite3';

import { provisionPay } from '../lib';
import { idempotencyRetentionMs, maxAmount, maxBalance } from '../lib/namespaces/pay/rules';
import { paySchema } from '../lib/storage/migrations';
import { migrate, namespaceMigrations } from '../lib/storage/sqlite/migrate';
import { queries } from '../lib/namespaces/pay/sqlite';
import { expectError } from './helpers/errors';
import { expectLedgerExact, timedPay } from './helpers/ledger';
import type { AppliedTransition } from '../lib/transitions';
import { engines } from './helpers/postgres';
import { bearer, body, tempDir, testServer } from './helpers/server';
import { engineWorlds, ledgerWorlds, serverWorld, useWorld, type World } from './helpers/worlds';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


interface Transaction {
    id: string;
    owner_id?: string;
    metadata?: Record<string, string>;
    type: string;
    asset: string;
    amount: number;
    provider_id: string;
    status: string;
    created_at: string;
    settles_at: string;
    settled_at: string | null;
    failure_code: string | null;
}

interface Wallet {
    id: string;
    owner_id: string;
    balances: { asset: string; amount: number; pending_in: number; pending_out: number }[];
    created_at: string;
}

type Direction = 'deposit' | 'withdraw';

type Engine = 'sqlite' | 'postgres';

const day = 24 * 60 * 60 * 1000;

/** The instant `ms` after an ISO instant, as ISO. */
function later(instant: string, ms: number): string {

    return new Date(Date.parse(instant) + ms).toISOString();
}


/** A server on a freshly provisioned pay database, and that database's file. */
async function payServer(): Promise<{ server: Server; file: string }> {

    const credentials = await provisionPay(Path.join(tempDir(), 'pay.db'));
    const server = await testServer({
        pay: { url: credentials.PAY_DB_URL, publishableKey: credentials.PAY_DB_PUBLISHABLE_KEY, secretKey: credentials.PAY_DB_SECRET_KEY }
    });

    return { server, file: credentials.PAY_DB_URL };
}


/** POSTs a deposit or withdrawal; a string payload is sent as raw JSON text, a null key sends no Idempotency-Key. */
function move(world: World, subject: string, direction: Direction, payload: object | string, key: string | null = Crypto.randomUUID()): Promise<ServerInjectResponse> {

    const headers: Record<string, string> = { ...bearer(world.server, subject), 'content-type': 'application/json' };
    if (key !== null) {
        headers['idempotency-key'] = key;
    }

    return world.inject({ method: 'POST', url: `/v1/pay/gateway/${direction}`, headers, payload });
}


/** Runs some SQL on the pay file through a connection of its own, as an operator would. */
function withDatabase<T>(file: string, work: (db: Sqlite.Database) => T): T {

    const db = new Sqlite(file);
    try {
        return work(db);
    }
    finally {
        db.close();
    }
}


async function walletOf(world: World, subject: string): Promise<Wallet> {

    const res = await world.inject({ url: '/v1/pay/wallet/', headers: bearer(world.server, subject) });
    expect(res.statusCode).to.equal(200);
    return body<Wallet>(res);
}


async function transactionsOf(world: World, subject: string, query = ''): Promise<{ res: ServerInjectResponse; list: { data: Transaction[]; count: number; total: number } }> {

    const res = await world.inject({ url: `/v1/pay/wallet/transactions${query}`, headers: bearer(world.server, subject) });
    expect(res.statusCode, res.payload).to.equal(200);
    return { res, list: body(res) };
}


// A trigger that makes every new transaction fail, and its removal, in each engine's dialect.
const failingTransactions: Record<Engine, { create: string[]; drop: string[] }> = {
    sqlite: {
        create: [`CREATE TRIGGER fail_transactions BEFORE INSERT ON transactions BEGIN SELECT RAISE(ABORT, 'disk on fire'); END`],
        drop: ['DROP TRIGGER fail_transactions']
    },
    postgres: {
        create: [
            `CREATE FUNCTION fail_transactions() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk on fire'; END $$`,
            'CREATE TRIGGER fail_transactions BEFORE INSERT ON transactions FOR EACH ROW EXECUTE FUNCTION fail_transactions()'
        ],
        drop: ['DROP TRIGGER fail_transactions ON transactions', 'DROP FUNCTION fail_transactions()']
    }
};


for (const engine of engines) {

    // The worlds of every describe below: one kit or template database per engine, not one per describe.
    const apiWorlds = engineWorlds(engine, {}, { pay: true });
    const sqlWorlds = ledgerWorlds(engine);

    after(async () => {

        await apiWorlds.close();
        await sqlWorlds.close();
    });

    describe(`pay data endpoints (${engine})`, () => {

        const world = useWorld(lab, apiWorlds, { shared: true });

        it('are live once the pay database is provisioned', async () => {

            const status = await world().inject('/v1/pay/status');
            expect(body(status)).to.equal({ configured: true, schema_ready: true, sections: ['wallet', 'tokens', 'gateway'] });
            expect((await world().inject({ url: '/v1/pay/tokens', headers: bearer(world().server, 'alice') })).statusCode).to.equal(200);
        });

        const dataRoutes: [string, string][] = [
            ['GET', '/v1/pay/wallet/'],
            ['GET', '/v1/pay/wallet/transactions'],
            ['GET', `/v1/pay/wallet/transactions/${Crypto.randomUUID()}`],
            ['GET', '/v1/pay/tokens/'],
            ['GET', '/v1/pay/tokens/MIT'],
            ['GET', '/v1/pay/gateway/providers'],
            ['POST', '/v1/pay/gateway/deposit'],
            ['POST', '/v1/pay/gateway/withdraw']
        ];

        dataRoutes.forEach(([method, url]) => {

            it(`answers 401 with a Bearer challenge to ${method} ${url} without a token`, async () => {

                const res = await world().inject({ method, url, payload: method === 'POST' ? {} : undefined });
                expectError(res, 401, 'unauthorized');
                expect(res.headers['www-authenticate']).to.equal('Bearer');
            });
        });

        ['/v1/pay/wallet/', '/v1/pay/wallet/transactions', '/v1/pay/tokens/', '/v1/pay/tokens/MIT', '/v1/pay/gateway/providers'].forEach((url) => {

            it(`answers 400 naming an unknown query parameter on GET ${url}`, async () => {

                const res = await world().inject({ url: `${url}?colour=blue`, headers: bearer(world().server, 'alice') });
                const error = expectError(res, 400, 'validation_failed', 'colour');
                expect(error.message).to.equal('Invalid query: colour is not allowed');
            });
        });
    });


    describe(`GET /v1/pay/wallet/ (${engine})`, () => {

        const world = useWorld(lab, apiWorlds);

        it('opens the caller\'s wallet on first use, empty, and returns the same wallet afterwards', async () => {

            const first = await walletOf(world(), 'alice');
            expect(first).to.equal({ id: first.id, owner_id: 'alice', balances: [], created_at: first.created_at });
            expect(first.id).to.match(/^[0-9a-f-]{36}$/);
            expect(first.created_at).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
            expect(await walletOf(world(), 'alice')).to.equal(first);
        });

        it('gives every caller a wallet of their own', async () => {

            const alice = await walletOf(world(), 'alice');
            const bob = await walletOf(world(), 'bob');
            expect(bob.id).to.not.equal(alice.id);
            expect(bob.owner_id).to.equal('bob');
        });

        it('opens one wallet when first requests race', async () => {

            const wallets = await Promise.all(Array.from({ length: 10 }, () => walletOf(world(), 'racer')));
            expect(new Set(wallets.map((wallet) => wallet.id)).size).to.equal(1);
        });

        it('reports a balance per asset held, in minor units, ordered by asset', async () => {

            expect((await move(world(), 'carol', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 1250 })).statusCode).to.equal(201);
            expect((await move(world(), 'carol', 'deposit', { provider_id: 'sandbox', asset: 'MIT', amount: 300 })).statusCode).to.equal(201);
            expect((await move(world(), 'carol', 'deposit', { provider_id: 'sandbox', asset: 'JPY', amount: 500 })).statusCode).to.equal(201);
            expect((await move(world(), 'carol', 'withdraw', { provider_id: 'sandbox', asset: 'USD', amount: 250 })).statusCode).to.equal(201);
            expect((await move(world(), 'carol', 'withdraw', { provider_id: 'sandbox', asset: 'JPY', amount: 500 })).statusCode).to.equal(201);

            expect((await walletOf(world(), 'carol')).balances).to.equal([
                { asset: 'JPY', amount: 0, pending_in: 0, pending_out: 0 },
                { asset: 'MIT', amount: 300, pending_in: 0, pending_out: 0 },
                { asset: 'USD', amount: 1000, pending_in: 0, pending_out: 0 }
            ]);

            expect((await walletOf(world(), 'bob')).balances).to.equal([]);
        });
    });


    describe(`GET /v1/pay/tokens (${engine})`, () => {

        const world = useWorld(lab, apiWorlds, { shared: true });

        const tokens = [
            { symbol: 'MIT', name: 'Market Token', decimals: 2, stage: 'live', description: 'Spent and accepted at the businesses of the commerce namespace', created_at: '2026-01-01T00:00:00.000Z' },
            { symbol: 'MXT', name: 'Mobility Token', decimals: 2, stage: 'pilot', description: 'Pays for vehicle bookings of the logistics namespace, in pilot', created_at: '2026-01-01T00:00:00.000Z' },
            { symbol: 'NST', name: 'Network Settlement Token', decimals: 6, stage: 'planned', description: 'Settles balances between providers; not issued yet', created_at: '2026-01-01T00:00:00.000Z' }
        ];

        it('lists the token types by symbol in a list envelope', async () => {

            const res = await world().inject({ url: '/v1/pay/tokens/', headers: bearer(world().server, 'alice') });
            expect(res.statusCode).to.equal(200);
            expect(res.headers['x-total-count']).to.equal('3');
            expect(body(res)).to.equal({ data: tokens, count: 3, total: 3 });
        });

        ['MIT', 'mxt', 'Nst'].forEach((symbol) => {

            it(`returns one token type for the symbol ${symbol}, matched in any case`, async () => {

                const res = await world().inject({ url: `/v1/pay/tokens/${symbol}`, headers: bearer(world().server, 'alice') });
                expect(res.statusCode).to.equal(200);
                expect(body(res)).to.equal(tokens.find((token) => token.symbol === symbol.toUpperCase())!);
            });
        });

        it('answers 404 for an unknown symbol', async () => {

            const res = await world().inject({ url: '/v1/pay/tokens/xyz', headers: bearer(world().server, 'alice') });
            const error = expectError(res, 404, 'token_not_found');
            expect(error.message).to.equal('There is no token with this id');
        });

        it('answers 400 for a symbol that cannot exist', async () => {

            const res = await world().inject({ url: '/v1/pay/tokens/M-T', headers: bearer(world().server, 'alice') });
            expectError(res, 400, 'validation_failed', 'token_symbol');
        });
    });


    describe(`GET /v1/pay/gateway/providers (${engine})`, () => {

        const world = useWorld(lab, apiWorlds, { shared: true });

        it('lists the providers by id in a list envelope, each with its settlement terms', async () => {

            const res = await world().inject({ url: '/v1/pay/gateway/providers', headers: bearer(world().server, 'alice') });
            expect(res.statusCode).to.equal(200);
            expect(res.headers['x-total-count']).to.equal('4');
            expect(body(res)).to.equal({
                data: [
                    {
                        id: 'bank-transfer', name: 'Bank transfer (deposits settle in 2 days, withdrawals in 1)', assets: ['EUR', 'GBP', 'USD'],
                        supports_deposit: true, supports_withdrawal: true, status: 'active', settlement: { deposit: '2d', withdrawal: '1d' }, created_at: '2026-01-01T00:00:00.000Z'
                    },
                    {
                        id: 'card', name: 'Card (settles at once, deposits may be declined)', assets: ['EUR', 'GBP', 'USD'],
                        supports_deposit: true, supports_withdrawal: true, status: 'active', settlement: { deposit: '0s', withdrawal: '0s' }, created_at: '2026-01-01T00:00:00.000Z'
                    },
                    {
                        id: 'legacy-bank', name: 'Legacy bank transfer (switched off)', assets: ['EUR', 'USD'],
                        supports_deposit: true, supports_withdrawal: true, status: 'disabled', settlement: { deposit: '0s', withdrawal: '0s' }, created_at: '2026-01-01T00:00:00.000Z'
                    },
                    {
                        id: 'sandbox', name: 'Local sandbox (settles at once)', assets: ['EUR', 'GBP', 'JPY', 'KES', 'MIT', 'MXT', 'NST', 'USD'],
                        supports_deposit: true, supports_withdrawal: true, status: 'active', settlement: { deposit: '0s', withdrawal: '0s' }, created_at: '2026-01-01T00:00:00.000Z'
                    }
                ],
                count: 4,
                total: 4
            });
        });
    });


    describe(`POST /v1/pay/gateway/deposit and /withdraw (${engine})`, () => {

        const world = useWorld(lab, apiWorlds);

        it('deposits: 201, the completed transaction as body and a Location that reads it back', async () => {

            const res = await move(world(), 'alice', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 5000 });
            expect(res.statusCode).to.equal(201);
            const transaction = body<Transaction>(res);
            expect(transaction).to.equal({
                id: transaction.id, owner_id: 'alice', type: 'deposit', asset: 'USD', amount: 5000, provider_id: 'sandbox', status: 'completed', created_at: transaction.created_at,
                settles_at: transaction.created_at, settled_at: transaction.created_at, failure_code: null, metadata: {}
            });
            expect(res.headers.location).to.equal(`${world().basePath}/v1/pay/wallet/transactions/${transaction.id}`);
            expect(res.headers['idempotent-replayed']).to.not.exist();

            // A Location header already carries the world's path.
            const read = await world().server.inject({ url: res.headers.location as string, headers: bearer(world().server, 'alice') });
            expect(read.statusCode).to.equal(200);
            expect(body<Transaction>(read)).to.equal(transaction);
        });

        it('withdraws: 201 with a withdrawal the balance reflects', async () => {

            expect((await move(world(), 'dora', 'deposit', { provider_id: 'sandbox', asset: 'EUR', amount: 1000 })).statusCode).to.equal(201);
            const res = await move(world(), 'dora', 'withdraw', { provider_id: 'sandbox', asset: 'EUR', amount: 999 });
            expect(res.statusCode).to.equal(201);
            const transaction = body<Transaction>(res);
            expect(transaction).to.equal({
                id: transaction.id, owner_id: 'dora', type: 'withdrawal', asset: 'EUR', amount: 999, provider_id: 'sandbox', status: 'completed', created_at: transaction.created_at,
                settles_at: transaction.created_at, settled_at: transaction.created_at, failure_code: null, metadata: {}
            });
            expect(res.headers.location).to.equal(`${world().basePath}/v1/pay/wallet/transactions/${transaction.id}`);
            expect((await walletOf(world(), 'dora')).balances).to.equal([{ asset: 'EUR', amount: 1, pending_in: 0, pending_out: 0 }]);
        });

        it('moves the largest amount allowed and tokens in pilot or live', async () => {

            expect((await move(world(), 'erin', 'deposit', { provider_id: 'sandbox', asset: 'GBP', amount: maxAmount })).statusCode).to.equal(201);
            expect((await move(world(), 'erin', 'withdraw', { provider_id: 'sandbox', asset: 'GBP', amount: maxAmount })).statusCode).to.equal(201);
            expect((await move(world(), 'erin', 'deposit', { provider_id: 'sandbox', asset: 'MIT', amount: 10 })).statusCode).to.equal(201);
            expect((await move(world(), 'erin', 'deposit', { provider_id: 'sandbox', asset: 'MXT', amount: 10 })).statusCode).to.equal(201);
            expect((await move(world(), 'erin', 'withdraw', { provider_id: 'sandbox', asset: 'MIT', amount: 10 })).statusCode).to.equal(201);
            expect((await move(world(), 'erin', 'withdraw', { provider_id: 'sandbox', asset: 'MXT', amount: 4 })).statusCode).to.equal(201);
            expect((await walletOf(world(), 'erin')).balances).to.equal([{ asset: 'GBP', amount: 0, pending_in: 0, pending_out: 0 }, { asset: 'MIT', amount: 0, pending_in: 0, pending_out: 0 }, { asset: 'MXT', amount: 6, pending_in: 0, pending_out: 0 }]);
        });

        it('accepts a JSON number written with an exponent when it is an integer', async () => {

            const res = await move(world(), 'erin', 'deposit', '{"provider_id":"sandbox","asset":"USD","amount":1e2}');
            expect(res.statusCode).to.equal(201);
            expect(body(res).amount).to.equal(100);
        });

        it('accepts an Idempotency-Key of 255 printable characters', async () => {

            const res = await move(world(), 'mallory', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 1 }, `${'k'.repeat(250)} ~!{}`);
            expect(res.statusCode).to.equal(201);
        });

        it('answers 415 to a body that is not JSON', async () => {

            const res = await world().inject({
                method: 'POST', url: '/v1/pay/gateway/deposit', payload: 'amount=1',
                headers: { ...bearer(world().server, 'alice'), 'idempotency-key': 'form', 'content-type': 'application/x-www-form-urlencoded' }
            });
            expectError(res, 415, 'unsupported_media_type');
            expect((await transactionsOf(world(), 'alice')).list.total).to.equal(0);
        });
    });


    describe(`POST /v1/pay/gateway/deposit and /withdraw, refused before they move anything (${engine})`, () => {

        const world = useWorld(lab, apiWorlds, { shared: true });

        const amountMessage = `amount must be a JSON integer of minor units from 1 to ${maxAmount}`;
        const invalid: [string, object | string, string, string?][] = [
            ['an amount sent as a string', { provider_id: 'sandbox', asset: 'USD', amount: '12' }, 'amount', amountMessage],
            ['a fractional amount', { provider_id: 'sandbox', asset: 'USD', amount: 12.5 }, 'amount', amountMessage],
            ['an amount of 1e400 (Infinity once parsed)', '{"provider_id":"sandbox","asset":"USD","amount":1e400}', 'amount', amountMessage],
            ['an amount of -1e400', '{"provider_id":"sandbox","asset":"USD","amount":-1e400}', 'amount', amountMessage],
            ['an amount beyond the safe integers', '{"provider_id":"sandbox","asset":"USD","amount":9007199254740993}', 'amount', amountMessage],
            ['an amount over the maximum', { provider_id: 'sandbox', asset: 'USD', amount: maxAmount + 1 }, 'amount', amountMessage],
            ['an amount of zero', { provider_id: 'sandbox', asset: 'USD', amount: 0 }, 'amount', amountMessage],
            ['a negative amount', { provider_id: 'sandbox', asset: 'USD', amount: -5 }, 'amount', amountMessage],
            ['a null amount', { provider_id: 'sandbox', asset: 'USD', amount: null }, 'amount', amountMessage],
            ['a boolean amount', { provider_id: 'sandbox', asset: 'USD', amount: true }, 'amount', amountMessage],
            ['no amount', { provider_id: 'sandbox', asset: 'USD' }, 'amount', 'amount is required'],
            ['a lower-case asset', { provider_id: 'sandbox', asset: 'usd', amount: 1 }, 'asset', 'asset must be an upper-case currency code or token symbol such as USD or MIT'],
            ['an asset code too short', { provider_id: 'sandbox', asset: 'US', amount: 1 }, 'asset'],
            ['a numeric asset', { provider_id: 'sandbox', asset: 840, amount: 1 }, 'asset', 'asset must be a string'],
            ['no asset', { provider_id: 'sandbox', amount: 1 }, 'asset', 'asset is required'],
            ['no provider', { asset: 'USD', amount: 1 }, 'provider_id', 'provider_id is required'],
            ['an empty provider', { provider_id: '', asset: 'USD', amount: 1 }, 'provider_id'],
            ['a provider id over 64 characters', { provider_id: 'p'.repeat(65), asset: 'USD', amount: 1 }, 'provider_id'],
            ['an owner_id', { provider_id: 'sandbox', asset: 'USD', amount: 1, owner_id: 'mallory' }, 'owner_id', 'owner_id is set by the service (the caller\'s identity) and cannot be sent'],
            ['a wallet_id', { provider_id: 'sandbox', asset: 'USD', amount: 1, wallet_id: 'w' }, 'wallet_id', 'wallet_id is set by the service (the caller\'s own wallet) and cannot be sent'],
            ['an id', { provider_id: 'sandbox', asset: 'USD', amount: 1, id: 'x' }, 'id', 'id is set by the service (generated) and cannot be sent'],
            ['a created_at', { provider_id: 'sandbox', asset: 'USD', amount: 1, created_at: 'x' }, 'created_at', 'created_at is set by the service (the time of creation) and cannot be sent'],
            ['a status', { provider_id: 'sandbox', asset: 'USD', amount: 1, status: 'completed' }, 'status', 'status is set by the service (the outcome of the transfer) and cannot be sent'],
            ['a type', { provider_id: 'sandbox', asset: 'USD', amount: 1, type: 'deposit' }, 'type', 'type is set by the service (the endpoint: deposit or withdraw) and cannot be sent'],
            ['an unknown field', { provider_id: 'sandbox', asset: 'USD', amount: 1, memo: 'rent' }, 'memo', 'memo is not allowed'],
            ['an array body', [{ provider_id: 'sandbox', asset: 'USD', amount: 1 }], 'payload', 'The request body must be a JSON object'],
            ['no body', '', 'payload', 'The request body must be a JSON object']
        ];

        (['deposit', 'withdraw'] as const).forEach((direction) => {

            invalid.forEach(([what, payload, field, message]) => {

                it(`answers 400 to a ${direction} with ${what}`, async () => {

                    const res = await move(world(), 'mallory', direction, payload);
                    const error = expectError(res, 400, 'validation_failed');
                    expect(error.details!.map((detail) => detail.field), res.payload).to.include(field);
                    if (message) {
                        expect(error.details!.map((detail) => detail.message)).to.include(message);
                    }
                });
            });
        });

        const headerCases: [string, string | null, string][] = [
            ['no Idempotency-Key', null, 'Idempotency-Key header is required: send a unique key (1 to 255 characters) per deposit or withdrawal'],
            ['an empty Idempotency-Key', '', 'Idempotency-Key header must be 1 to 255 characters'],
            ['an Idempotency-Key over 255 characters', 'k'.repeat(256), 'Idempotency-Key header must be 1 to 255 characters'],
            ['a non-ASCII Idempotency-Key', 'clé', 'Idempotency-Key header must be printable ASCII']
        ];

        (['deposit', 'withdraw'] as const).forEach((direction) => {

            headerCases.forEach(([what, key, message]) => {

                it(`answers 400 naming the header to a ${direction} with ${what}`, async () => {

                    const res = await move(world(), 'mallory', direction, { provider_id: 'sandbox', asset: 'USD', amount: 1 }, key);
                    const error = expectError(res, 400, 'validation_failed', 'idempotency-key');
                    expect(error.message).to.equal(`Invalid headers: ${message}`);
                });
            });
        });
    });


    describe(`POST /v1/pay/gateway/deposit and /withdraw through providers of each kind (${engine})`, () => {

        // One world for all: each test moves money for a caller of its own, so that its counts are exact.
        const world = useWorld(lab, sqlWorlds, { shared: true });

        before(async () => {

            await world().sql(`INSERT INTO providers (id, name, supports_deposit, supports_withdrawal, status, created_at) VALUES
                ('payout-only', 'Payouts only', FALSE, TRUE, 'active', '2026-01-01T00:00:00.000Z'),
                ('collect-only', 'Collections only', TRUE, FALSE, 'active', '2026-01-01T00:00:00.000Z')`);
            await world().sql(`INSERT INTO provider_assets (provider_id, currency) VALUES ('payout-only', 'USD'), ('collect-only', 'USD')`);
        });

        const refusals: [string, Direction, object, number, string, string, string][] = [
            ['an unknown provider', 'deposit', { provider_id: 'nowhere', asset: 'USD', amount: 1 }, 422, 'provider_not_found', 'provider_id', 'provider_id refers to no existing provider'],
            ['an unknown provider', 'withdraw', { provider_id: 'nowhere', asset: 'USD', amount: 1 }, 422, 'provider_not_found', 'provider_id', 'provider_id refers to no existing provider'],
            ['a disabled provider', 'deposit', { provider_id: 'legacy-bank', asset: 'USD', amount: 1 }, 409, 'provider_unavailable', 'provider_id', 'Provider legacy-bank is disabled and moves no money: use an active provider'],
            ['a disabled provider', 'withdraw', { provider_id: 'legacy-bank', asset: 'USD', amount: 1 }, 409, 'provider_unavailable', 'provider_id', 'Provider legacy-bank is disabled and moves no money: use an active provider'],
            ['a provider that takes no deposits', 'deposit', { provider_id: 'payout-only', asset: 'USD', amount: 1 }, 422, 'operation_not_supported', 'provider_id', 'Provider payout-only does not support deposits'],
            ['a provider that makes no withdrawals', 'withdraw', { provider_id: 'collect-only', asset: 'USD', amount: 1 }, 422, 'operation_not_supported', 'provider_id', 'Provider collect-only does not support withdrawals'],
            ['a currency the provider does not move', 'deposit', { provider_id: 'sandbox', asset: 'CHF', amount: 1 }, 422, 'asset_not_supported', 'asset', 'Provider sandbox does not support CHF: GET /v1/pay/gateway/providers lists the assets of each provider'],
            ['an asset nobody knows', 'withdraw', { provider_id: 'sandbox', asset: 'ZZZZ', amount: 1 }, 422, 'asset_not_supported', 'asset', 'Provider sandbox does not support ZZZZ: GET /v1/pay/gateway/providers lists the assets of each provider'],
            ['a token in stage planned', 'deposit', { provider_id: 'sandbox', asset: 'NST', amount: 1 }, 409, 'token_stage_not_allowed', 'asset', 'Token NST is in stage planned: a deposit needs stage pilot or live'],
            ['a token in stage planned', 'withdraw', { provider_id: 'sandbox', asset: 'NST', amount: 1 }, 409, 'token_stage_not_allowed', 'asset', 'Token NST is in stage planned: a withdrawal needs stage pilot, live or retired'],
            ['no balance in the asset', 'withdraw', { provider_id: 'sandbox', asset: 'KES', amount: 1 }, 409, 'insufficient_funds', 'amount', 'Your KES balance is 0, less than the 1 to withdraw'],
            ['more than the balance', 'withdraw', { provider_id: 'payout-only', asset: 'USD', amount: 30001 }, 409, 'insufficient_funds', 'amount', 'Your USD balance is 30000, less than the 30001 to withdraw']
        ];

        refusals.forEach(([what, direction, payload, statusCode, code, field, message]) => {

            it(`answers ${statusCode} ${code} to a ${direction} through ${what}, and moves nothing`, async () => {

                const subject = `refused-${Crypto.randomUUID()}`;
                expect((await move(world(), subject, 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 30000 })).statusCode).to.equal(201);
                const earlier = await transactionsOf(world(), subject);
                expect(earlier.list.total).to.equal(1);

                const res = await move(world(), subject, direction, payload);
                const error = expectError(res, statusCode, code, field);
                expect(error.message).to.equal(message);
                expect(error.details).to.equal([{ field, message }]);
                expect((await transactionsOf(world(), subject)).list).to.equal(earlier.list);
                expect((await walletOf(world(), subject)).balances).to.equal([{ asset: 'USD', amount: 30000, pending_in: 0, pending_out: 0 }]);
            });
        });

        it('withdraws through a provider other than the one that deposited', async () => {

            expect((await move(world(), 'frank', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 70 })).statusCode).to.equal(201);
            const res = await move(world(), 'frank', 'withdraw', { provider_id: 'payout-only', asset: 'USD', amount: 70 });
            expect(res.statusCode).to.equal(201);
            expect(body(res)).to.include({ type: 'withdrawal', provider_id: 'payout-only', amount: 70 });
            expect((await walletOf(world(), 'frank')).balances).to.equal([{ asset: 'USD', amount: 0, pending_in: 0, pending_out: 0 }]);
        });
    });


    describe(`token lifecycle rules (${engine})`, () => {

        const world = useWorld(lab, sqlWorlds);

        it('lets a retired token be withdrawn but no longer deposited', async () => {

            expect((await move(world(), 'gina', 'deposit', { provider_id: 'sandbox', asset: 'MXT', amount: 50 })).statusCode).to.equal(201);
            await world().sql(`UPDATE token_types SET stage = 'retired' WHERE symbol = 'MXT'`);

            const deposit = await move(world(), 'gina', 'deposit', { provider_id: 'sandbox', asset: 'MXT', amount: 1 });
            expect(expectError(deposit, 409, 'token_stage_not_allowed', 'asset').message).to.equal('Token MXT is in stage retired: a deposit needs stage pilot or live');
            expect((await move(world(), 'gina', 'withdraw', { provider_id: 'sandbox', asset: 'MXT', amount: 50 })).statusCode).to.equal(201);
            expect((await walletOf(world(), 'gina')).balances).to.equal([{ asset: 'MXT', amount: 0, pending_in: 0, pending_out: 0 }]);
        });
    });


    describe(`balance limits (${engine})`, () => {

        const world = useWorld(lab, sqlWorlds);

        it('refuses a deposit that would take a balance beyond the largest safe integer', async () => {

            expect((await move(world(), 'hank', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 10 })).statusCode).to.equal(201);

            // Reaching the limit honestly takes 90 thousand maximal deposits: start the accounts near it instead.
            await world().sql('UPDATE accounts SET balance = ? WHERE wallet_id IS NOT NULL', maxBalance - 5);
            const over = await move(world(), 'hank', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 6 });
            expect(expectError(over, 409, 'balance_limit_exceeded', 'amount').message).to.equal(`This deposit would take a USD balance beyond ${maxBalance} minor units`);
            expect((await move(world(), 'hank', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 5 })).statusCode).to.equal(201);
            expect((await walletOf(world(), 'hank')).balances).to.equal([{ asset: 'USD', amount: maxBalance, pending_in: 0, pending_out: 0 }]);

            // The provider's clearing account mirrors every wallet: it has the same limit on the negative side.
            await world().sql('UPDATE accounts SET balance = ? WHERE provider_id IS NOT NULL', -(maxBalance - 5));
            expectError(await move(world(), 'ivy', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 6 }), 409, 'balance_limit_exceeded', 'amount');
            expect((await move(world(), 'ivy', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 5 })).statusCode).to.equal(201);
        });

        it('counts deposits still pending toward the limit', async () => {

            expect((await move(world(), 'hank', 'deposit', { provider_id: 'bank-transfer', asset: 'USD', amount: 10 })).statusCode).to.equal(201);
            await world().sql(`UPDATE accounts SET balance = ? WHERE wallet_id IS NOT NULL AND kind = 'pending_in'`, maxBalance - 5);
            const over = await move(world(), 'hank', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 6 });
            expect(expectError(over, 409, 'balance_limit_exceeded', 'amount').message).to.equal(`This deposit would take a USD balance beyond ${maxBalance} minor units`);
            expect((await move(world(), 'hank', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 5 })).statusCode).to.equal(201);
            expect((await walletOf(world(), 'hank')).balances).to.equal([{ asset: 'USD', amount: 5, pending_in: maxBalance - 5, pending_out: 0 }]);
        });

        it('counts withdrawals held toward the limit: a held withdrawal that fails comes back to the wallet', async () => {

            expect((await move(world(), 'hank', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 10 })).statusCode).to.equal(201);
            expect((await move(world(), 'hank', 'withdraw', { provider_id: 'bank-transfer', asset: 'USD', amount: 4 })).statusCode).to.equal(201);
            await world().sql(`UPDATE accounts SET balance = ? WHERE wallet_id IS NOT NULL AND kind = 'available'`, maxBalance - 5);
            const over = await move(world(), 'hank', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 2 });
            expect(expectError(over, 409, 'balance_limit_exceeded', 'amount').message).to.equal(`This deposit would take a USD balance beyond ${maxBalance} minor units`);
            expect((await move(world(), 'hank', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 1 })).statusCode).to.equal(201);
            expect((await walletOf(world(), 'hank')).balances).to.equal([{ asset: 'USD', amount: maxBalance - 4, pending_in: 0, pending_out: 4 }]);
        });
    });


    describe(`GET /v1/pay/wallet/transactions (${engine})`, () => {

        // One world for all, which its tests only read.
        const world = useWorld(lab, apiWorlds, { shared: true });
        const created: Transaction[] = [];

        before(async () => {

            for (let i = 1; i <= 7; ++i) {
                const direction = i % 3 === 0 ? 'withdraw' : 'deposit';
                const res = await move(world(), 'jane', direction, { provider_id: 'sandbox', asset: 'USD', amount: i });
                expect(res.statusCode).to.equal(201);
                created.push(body<Transaction>(res));
            }

            expect((await move(world(), 'kurt', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 1 })).statusCode).to.equal(201);
        });

        const newestFirst = (transactions: Transaction[]) => [...transactions].sort((a, b) => (b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id)));

        it('lists the caller\'s transactions newest first, ties by id, in a list envelope', async () => {

            const { res, list } = await transactionsOf(world(), 'jane');
            expect(res.headers['x-total-count']).to.equal('7');
            expect(list).to.equal({ data: newestFirst(created), count: 7, total: 7 });
            expect(list.data.map((transaction) => transaction.type)).to.equal(newestFirst(created).map((transaction) => transaction.type));
            expect(created.map((transaction) => transaction.type)).to.equal(['deposit', 'deposit', 'withdrawal', 'deposit', 'deposit', 'withdrawal', 'deposit']);
        });

        it('pages with limit and offset without repeating or skipping', async () => {

            const pages: Transaction[] = [];
            for (let i = 0; i < 7; i += 3) {
                const { res, list } = await transactionsOf(world(), 'jane', `?limit=3&offset=${i}`);
                expect(res.headers['x-total-count']).to.equal('7');
                expect(list.count).to.equal(Math.min(3, 7 - i));
                pages.push(...list.data);
            }

            expect(pages).to.equal(newestFirst(created));
            const { list } = await transactionsOf(world(), 'jane', '?offset=50');
            expect(list).to.equal({ data: [], count: 0, total: 7 });
        });

        it('is empty for a caller who never opened a wallet', async () => {

            const { res, list } = await transactionsOf(world(), 'nobody');
            expect(res.headers['x-total-count']).to.equal('0');
            expect(list).to.equal({ data: [], count: 0, total: 0 });
        });

        [['limit=0', 'limit'], ['limit=101', 'limit'], ['limit=ten', 'limit'], ['offset=-1', 'offset']].forEach(([query, field]) => {

            it(`answers 400 naming the parameter for ${query}`, async () => {

                const res = await world().inject({ url: `/v1/pay/wallet/transactions?${query}`, headers: bearer(world().server, 'jane') });
                expectError(res, 400, 'validation_failed', field);
            });
        });

        it('returns one of the caller\'s transactions by id', async () => {

            const res = await world().inject({ url: `/v1/pay/wallet/transactions/${created[2]!.id}`, headers: bearer(world().server, 'jane') });
            expect(res.statusCode).to.equal(200);
            expect(body<Transaction>(res)).to.equal(created[2]!);
        });

        it('answers 404 for another caller\'s transaction, as for an unknown one', async () => {

            const id = created[0]!.id;
            const foreign = await world().inject({ url: `/v1/pay/wallet/transactions/${id}`, headers: bearer(world().server, 'kurt') });
            expect(expectError(foreign, 404, 'transaction_not_found').message).to.equal('There is no transaction with this id');

            const unknown = await world().inject({ url: `/v1/pay/wallet/transactions/${Crypto.randomUUID()}`, headers: bearer(world().server, 'jane') });
            expect(expectError(unknown, 404, 'transaction_not_found').message).to.equal('There is no transaction with this id');
        });

        it('answers 400 for a transaction id that is not a UUID', async () => {

            const res = await world().inject({ url: '/v1/pay/wallet/transactions/42', headers: bearer(world().server, 'jane') });
            expectError(res, 400, 'validation_failed', 'transaction_id');
        });
    });


    describe(`GET /v1/pay/wallet/transactions, order at one instant (${engine})`, () => {

        const world = useWorld(lab, sqlWorlds);

        it('breaks ties in created_at by id, descending', async () => {

            const createdAt = '2030-01-01T00:00:00.000Z';
            const ids = ['00000000-0000-4000-8000-00000000000a', '00000000-0000-4000-8000-00000000000c', '00000000-0000-4000-8000-00000000000b'];
            expect((await move(world(), 'kurt', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 1 })).statusCode).to.equal(201);
            const [wallet] = await world().sql(`SELECT id FROM wallets WHERE owner_id = 'kurt'`);
            for (const id of ids) {
                await world().sql(`INSERT INTO transactions (id, wallet_id, type, asset, amount, provider_id, status, created_at, settles_at, settled_at)
                    VALUES (?, ?, 'deposit', 'USD', 1, 'sandbox', 'completed', ?, ?, ?)`, id, wallet!.id, createdAt, createdAt, createdAt);
            }

            const { list } = await transactionsOf(world(), 'kurt', '?limit=3');
            expect(list.data.map((transaction) => transaction.id)).to.equal([ids[1], ids[2], ids[0]]);
        });
    });


    describe(`Idempotency-Key (${engine})`, () => {

        const world = useWorld(lab, sqlWorlds);
        const payload = { provider_id: 'sandbox', asset: 'USD', amount: 700 };

        it('replays the first response byte for byte for the same key and body, and moves money once', async () => {

            const first = await move(world(), 'lena', 'deposit', payload, 'order-1');
            expect(first.statusCode).to.equal(201);
            expect(first.headers['idempotent-replayed']).to.not.exist();

            for (const reordered of [payload, { amount: 700, asset: 'USD', provider_id: 'sandbox' }]) {
                const again = await move(world(), 'lena', 'deposit', reordered, 'order-1');
                expect(again.statusCode).to.equal(201);
                expect(again.payload).to.equal(first.payload);
                expect(again.headers.location).to.equal(first.headers.location);
                expect(again.headers['idempotent-replayed']).to.equal('true');
            }

            expect((await transactionsOf(world(), 'lena')).list.total).to.equal(1);
            expect((await walletOf(world(), 'lena')).balances).to.equal([{ asset: 'USD', amount: 700, pending_in: 0, pending_out: 0 }]);
        });

        it('replays the first response after the balance has moved on', async () => {

            expect((await move(world(), 'lena', 'deposit', payload, 'order-1')).statusCode).to.equal(201);
            const payout = { provider_id: 'sandbox', asset: 'USD', amount: 100 };
            const first = await move(world(), 'lena', 'withdraw', payout, 'payout-1');
            expect(first.statusCode).to.equal(201);
            expect((await move(world(), 'lena', 'withdraw', payout)).statusCode).to.equal(201);
            const again = await move(world(), 'lena', 'withdraw', payout, 'payout-1');
            expect(again.payload).to.equal(first.payload);
            expect((await walletOf(world(), 'lena')).balances).to.equal([{ asset: 'USD', amount: 500, pending_in: 0, pending_out: 0 }]);
        });

        const reuses: [string, Direction, object][] = [
            ['another amount', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 701 }],
            ['another asset', 'deposit', { provider_id: 'sandbox', asset: 'EUR', amount: 700 }],
            ['another provider', 'deposit', { provider_id: 'legacy-bank', asset: 'USD', amount: 700 }],
            ['the same body on the other endpoint', 'withdraw', { provider_id: 'sandbox', asset: 'USD', amount: 700 }]
        ];

        reuses.forEach(([what, direction, reused]) => {

            it(`answers 422 idempotency_key_reused for the same key with ${what}`, async () => {

                expect((await move(world(), 'lena', 'deposit', payload, 'order-1')).statusCode).to.equal(201);
                const res = await move(world(), 'lena', direction, reused, 'order-1');
                const error = expectError(res, 422, 'idempotency_key_reused');
                expect(error.message).to.equal('This Idempotency-Key was already used for a different request: send a new key for a new deposit or withdrawal');
                expect(res.headers['idempotent-replayed']).to.not.exist();
                expect((await walletOf(world(), 'lena')).balances).to.equal([{ asset: 'USD', amount: 700, pending_in: 0, pending_out: 0 }]);
            });
        });

        it('scopes keys to the caller', async () => {

            expect((await move(world(), 'lena', 'deposit', payload, 'order-1')).statusCode).to.equal(201);
            const res = await move(world(), 'milo', 'deposit', payload, 'order-1');
            expect(res.statusCode).to.equal(201);
            expect(res.headers['idempotent-replayed']).to.not.exist();
            expect((await walletOf(world(), 'milo')).balances).to.equal([{ asset: 'USD', amount: 700, pending_in: 0, pending_out: 0 }]);
        });

        it('replays a refusal too: the same key keeps its answer, a new key tries again', async () => {

            const refund = { provider_id: 'sandbox', asset: 'GBP', amount: 40 };
            const refused = await move(world(), 'nina', 'withdraw', refund, 'refund-1');
            expectError(refused, 409, 'insufficient_funds');
            expect(refused.headers['idempotent-replayed']).to.not.exist();

            expect((await move(world(), 'nina', 'deposit', { provider_id: 'sandbox', asset: 'GBP', amount: 40 })).statusCode).to.equal(201);
            const replayed = await move(world(), 'nina', 'withdraw', refund, 'refund-1');
            expect(replayed.statusCode).to.equal(409);
            expect(replayed.payload).to.equal(refused.payload);
            expect(replayed.headers['idempotent-replayed']).to.equal('true');

            expect((await move(world(), 'nina', 'withdraw', refund, 'refund-2')).statusCode).to.equal(201);
        });

        it('keeps no key for a request that failed validation', async () => {

            expectError(await move(world(), 'omar', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: '5' }, 'first-try'), 400, 'validation_failed');
            const res = await move(world(), 'omar', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 5 }, 'first-try');
            expect(res.statusCode).to.equal(201);
            expect(res.headers['idempotent-replayed']).to.not.exist();
        });

        it('moves money once when duplicates arrive together', async () => {

            const burst = { provider_id: 'sandbox', asset: 'EUR', amount: 25 };
            const responses = await Promise.all(Array.from({ length: 20 }, () => move(world(), 'pia', 'deposit', burst, 'burst')));
            expect(responses.map((res) => res.statusCode)).to.equal(Array.from({ length: 20 }, () => 201));
            expect(new Set(responses.map((res) => res.payload)).size).to.equal(1);
            expect(responses.filter((res) => res.headers['idempotent-replayed'] === 'true')).to.have.length(19);
            expect((await walletOf(world(), 'pia')).balances).to.equal([{ asset: 'EUR', amount: 25, pending_in: 0, pending_out: 0 }]);
        });

        it('keeps keys for 24 hours and forgets older ones on the next deposit or withdrawal', async () => {

            const small = { provider_id: 'sandbox', asset: 'USD', amount: 9 };
            const first = await move(world(), 'quinn', 'deposit', small, 'aging');
            // Kept 24 hours from the instant its move settled, which a move through the sandbox did as it was made.
            expect(await world().sql(`SELECT keep_until FROM idempotency_keys WHERE owner_id = 'quinn'`)).to.equal([
                { keep_until: new Date(Date.parse(body<Transaction>(first).settles_at) + idempotencyRetentionMs).toISOString() }
            ]);
            const recent = new Date(Date.now() - idempotencyRetentionMs + 60_000);
            await world().sql(`UPDATE idempotency_keys SET created_at = ?, keep_until = ? WHERE owner_id = 'quinn'`, recent.toISOString(), new Date(recent.getTime() + idempotencyRetentionMs).toISOString());

            const kept = await move(world(), 'quinn', 'deposit', small, 'aging');
            expect(kept.payload).to.equal(first.payload);
            expect(kept.headers['idempotent-replayed']).to.equal('true');

            const expired = new Date(Date.now() - idempotencyRetentionMs - 1);
            await world().sql(`UPDATE idempotency_keys SET created_at = ?, keep_until = ? WHERE owner_id = 'quinn'`, expired.toISOString(), new Date(expired.getTime() + idempotencyRetentionMs).toISOString());
            expect((await move(world(), 'someone-else', 'deposit', small)).statusCode).to.equal(201);
            expect(await world().sql(`SELECT CAST(count(*) AS integer) AS n FROM idempotency_keys WHERE owner_id = 'quinn'`)).to.equal([{ n: 0 }]);

            const fresh = await move(world(), 'quinn', 'deposit', small, 'aging');
            expect(fresh.statusCode).to.equal(201);
            expect(fresh.headers['idempotent-replayed']).to.not.exist();
            expect(body(fresh).id).to.not.equal(body(first).id);
            expect((await walletOf(world(), 'quinn')).balances).to.equal([{ asset: 'USD', amount: 18, pending_in: 0, pending_out: 0 }]);
        });

        it('keeps no key when the transaction fails, so a retry with the same key does the work', async () => {

            for (const statement of failingTransactions[engine].create) {
                await world().sql(statement);
            }

            const small = { provider_id: 'sandbox', asset: 'USD', amount: 3 };
            const failed = await move(world(), 'rosa', 'deposit', small, 'retry-me');
            expect(failed.statusCode).to.equal(500);
            expect(body(failed).message).to.equal('An internal server error occurred');
            expect(failed.payload).to.not.contain('disk on fire');

            for (const statement of failingTransactions[engine].drop) {
                await world().sql(statement);
            }

            const retried = await move(world(), 'rosa', 'deposit', small, 'retry-me');
            expect(retried.statusCode).to.equal(201);
            expect(retried.headers['idempotent-replayed']).to.not.exist();
            expect((await walletOf(world(), 'rosa')).balances).to.equal([{ asset: 'USD', amount: 3, pending_in: 0, pending_out: 0 }]);
        });
    });


    describe(`moves that take time (${engine})`, () => {

        const world = useWorld(lab, sqlWorlds);

        // Where each entry of a transaction went, by how much and when, in the order written.
        function entriesOf(id: string): Promise<Record<string, unknown>[]> {

            return world().sql(`SELECT CASE WHEN a.wallet_id IS NULL THEN 'clearing' ELSE a.kind END AS account, CAST(e.amount AS integer) AS amount, e.created_at
                FROM entries e JOIN accounts a ON a.id = e.account_id WHERE e.transaction_id = ? ORDER BY e.id`, id);
        }

        async function made(subject: string, direction: Direction, payload: object, key?: string): Promise<Transaction> {

            const res = await move(world(), subject, direction, payload, key);
            expect(res.statusCode, res.payload).to.equal(201);
            return body<Transaction>(res);
        }

        it('answers a bank-transfer deposit 201 pending for two days, not spendable until it completes at its own due instant', async () => {

            const pending = await made('ada', 'deposit', { provider_id: 'bank-transfer', asset: 'USD', amount: 10000 });
            expect(pending).to.equal({
                id: pending.id, owner_id: 'ada', type: 'deposit', asset: 'USD', amount: 10000, provider_id: 'bank-transfer', status: 'pending',
                created_at: pending.created_at, settles_at: later(pending.created_at, 2 * day), settled_at: null, failure_code: null, metadata: {}
            });
            expect((await walletOf(world(), 'ada')).balances).to.equal([{ asset: 'USD', amount: 0, pending_in: 10000, pending_out: 0 }]);
            const spend = await move(world(), 'ada', 'withdraw', { provider_id: 'sandbox', asset: 'USD', amount: 1 });
            expect(expectError(spend, 409, 'insufficient_funds', 'amount').message).to.equal('Your USD balance is 0, less than the 1 to withdraw');
            await expectLedgerExact(world().sql);

            const store = await timedPay(world().server);
            expect(await store.nextDue()).to.equal(new Date(pending.settles_at));
            expect(await store.applyDue(new Date(Date.parse(pending.settles_at) - 1), 10)).to.equal([]);
            expect(await store.applyDue(new Date(later(pending.settles_at, day)), 10)).to.equal([{ type: 'pay.transaction.completed', id: pending.id, due: pending.settles_at }]);
            expect(await store.nextDue()).to.be.null();
            expect(await store.applyDue(new Date(later(pending.settles_at, day)), 10)).to.equal([]);

            const read = await world().inject({ url: `/v1/pay/wallet/transactions/${pending.id}`, headers: bearer(world().server, 'ada') });
            expect(body(read)).to.equal({ ...pending, status: 'completed', settled_at: pending.settles_at });
            expect((await walletOf(world(), 'ada')).balances).to.equal([{ asset: 'USD', amount: 10000, pending_in: 0, pending_out: 0 }]);
            expect(await entriesOf(pending.id)).to.equal([
                { account: 'clearing', amount: -10000, created_at: pending.created_at },
                { account: 'pending_in', amount: 10000, created_at: pending.created_at },
                { account: 'pending_in', amount: -10000, created_at: pending.settles_at },
                { account: 'available', amount: 10000, created_at: pending.settles_at }
            ]);
            await expectLedgerExact(world().sql);
            expect((await move(world(), 'ada', 'withdraw', { provider_id: 'sandbox', asset: 'USD', amount: 10000 })).statusCode).to.equal(201);
        });

        it('holds a pending withdrawal\'s amount at once, so that a second withdrawal cannot spend it, and completes it a day later', async () => {

            await made('bea', 'deposit', { provider_id: 'sandbox', asset: 'EUR', amount: 500 });
            const pending = await made('bea', 'withdraw', { provider_id: 'bank-transfer', asset: 'EUR', amount: 300 });
            expect(pending).to.equal({
                id: pending.id, owner_id: 'bea', type: 'withdrawal', asset: 'EUR', amount: 300, provider_id: 'bank-transfer', status: 'pending',
                created_at: pending.created_at, settles_at: later(pending.created_at, day), settled_at: null, failure_code: null, metadata: {}
            });
            expect((await walletOf(world(), 'bea')).balances).to.equal([{ asset: 'EUR', amount: 200, pending_in: 0, pending_out: 300 }]);
            const second = await move(world(), 'bea', 'withdraw', { provider_id: 'sandbox', asset: 'EUR', amount: 201 });
            expect(expectError(second, 409, 'insufficient_funds', 'amount').message).to.equal('Your EUR balance is 200, less than the 201 to withdraw');
            await expectLedgerExact(world().sql);

            const store = await timedPay(world().server);
            expect(await store.applyDue(new Date(pending.settles_at), 10)).to.equal([{ type: 'pay.transaction.completed', id: pending.id, due: pending.settles_at }]);
            expect((await walletOf(world(), 'bea')).balances).to.equal([{ asset: 'EUR', amount: 200, pending_in: 0, pending_out: 0 }]);
            expect(await entriesOf(pending.id)).to.equal([
                { account: 'available', amount: -300, created_at: pending.created_at },
                { account: 'pending_out', amount: 300, created_at: pending.created_at },
                { account: 'pending_out', amount: -300, created_at: pending.settles_at },
                { account: 'clearing', amount: 300, created_at: pending.settles_at }
            ]);
            await expectLedgerExact(world().sql);
        });

        it('fails a bank-transfer move whose amount ends in 99 as it falls due, returned: a deposit never arrives, a withdrawal gives its amount back', async () => {

            await made('cal', 'deposit', { provider_id: 'sandbox', asset: 'GBP', amount: 1000 });
            const deposit = await made('cal', 'deposit', { provider_id: 'bank-transfer', asset: 'GBP', amount: 1099 });
            const withdrawal = await made('cal', 'withdraw', { provider_id: 'bank-transfer', asset: 'GBP', amount: 599 });
            expect([deposit.status, withdrawal.status]).to.equal(['pending', 'pending']);
            expect((await walletOf(world(), 'cal')).balances).to.equal([{ asset: 'GBP', amount: 401, pending_in: 1099, pending_out: 599 }]);

            const store = await timedPay(world().server);
            expect(await store.applyDue(new Date(later(deposit.settles_at, day)), 10)).to.equal([
                { type: 'pay.transaction.failed', id: withdrawal.id, due: withdrawal.settles_at },
                { type: 'pay.transaction.failed', id: deposit.id, due: deposit.settles_at }
            ]);

            const { list } = await transactionsOf(world(), 'cal');
            expect(list.data.filter(({ provider_id: provider }) => provider === 'bank-transfer')).to.equal([
                { ...withdrawal, status: 'failed', settled_at: withdrawal.settles_at, failure_code: 'returned' },
                { ...deposit, status: 'failed', settled_at: deposit.settles_at, failure_code: 'returned' }
            ]);
            expect((await walletOf(world(), 'cal')).balances).to.equal([{ asset: 'GBP', amount: 1000, pending_in: 0, pending_out: 0 }]);
            expect(await entriesOf(deposit.id)).to.equal([
                { account: 'clearing', amount: -1099, created_at: deposit.created_at },
                { account: 'pending_in', amount: 1099, created_at: deposit.created_at },
                { account: 'pending_in', amount: -1099, created_at: deposit.settles_at },
                { account: 'clearing', amount: 1099, created_at: deposit.settles_at }
            ]);
            expect(await entriesOf(withdrawal.id)).to.equal([
                { account: 'available', amount: -599, created_at: withdrawal.created_at },
                { account: 'pending_out', amount: 599, created_at: withdrawal.created_at },
                { account: 'pending_out', amount: -599, created_at: withdrawal.settles_at },
                { account: 'available', amount: 599, created_at: withdrawal.settles_at }
            ]);
            await expectLedgerExact(world().sql);
        });

        it('settles a card move at once, and refuses a card deposit ending in 02 with a 402 that its key replays, writing nothing', async () => {

            const paid = await made('dev', 'deposit', { provider_id: 'card', asset: 'USD', amount: 500 });
            expect(paid).to.equal({
                id: paid.id, owner_id: 'dev', type: 'deposit', asset: 'USD', amount: 500, provider_id: 'card', status: 'completed',
                created_at: paid.created_at, settles_at: paid.created_at, settled_at: paid.created_at, failure_code: null, metadata: {}
            });

            const declined = await move(world(), 'dev', 'deposit', { provider_id: 'card', asset: 'USD', amount: 502 }, 'card-1');
            const error = expectError(declined, 402, 'card_declined', 'amount');
            expect(error.message).to.equal('Provider card declined this deposit: the card was refused, nothing moved');
            expect(declined.headers['idempotent-replayed']).to.not.exist();
            const replayed = await move(world(), 'dev', 'deposit', { provider_id: 'card', asset: 'USD', amount: 502 }, 'card-1');
            expect(replayed.statusCode).to.equal(402);
            expect(replayed.payload).to.equal(declined.payload);
            expect(replayed.headers['idempotent-replayed']).to.equal('true');

            // Only deposits are declined: a card withdrawal of an amount ending in 02 goes through.
            const refund = await made('dev', 'withdraw', { provider_id: 'card', asset: 'USD', amount: 102 });
            expect(refund.status).to.equal('completed');
            expect((await transactionsOf(world(), 'dev')).list.total).to.equal(2);
            expect((await walletOf(world(), 'dev')).balances).to.equal([{ asset: 'USD', amount: 398, pending_in: 0, pending_out: 0 }]);
            expect(await (await timedPay(world().server)).nextDue()).to.be.null();
            await expectLedgerExact(world().sql);
        });

        it('replays a pending deposit as it was answered, after it settled, and keeps its key until 24 hours past its settlement', async () => {

            const payload = { provider_id: 'bank-transfer', asset: 'EUR', amount: 2500 };
            const first = await move(world(), 'eve', 'deposit', payload, 'slow-1');
            const pending = body<Transaction>(first);
            expect(await world().sql(`SELECT keep_until FROM idempotency_keys WHERE owner_id = 'eve'`)).to.equal([{ keep_until: later(pending.settles_at, idempotencyRetentionMs) }]);

            expect(await (await timedPay(world().server)).applyDue(new Date(pending.settles_at), 1)).to.have.length(1);
            const again = await move(world(), 'eve', 'deposit', payload, 'slow-1');
            expect(again.statusCode).to.equal(201);
            expect(again.payload).to.equal(first.payload);
            expect(again.headers['idempotent-replayed']).to.equal('true');
            expect(body<Transaction>(again).status).to.equal('pending');
            expect((await walletOf(world(), 'eve')).balances).to.equal([{ asset: 'EUR', amount: 2500, pending_in: 0, pending_out: 0 }]);
        });

        it('applies at most limit transitions a call, earliest due first, ties by id', async () => {

            const withdrawals: Transaction[] = [];
            await made('fay', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 100 });
            const deposit = await made('fay', 'deposit', { provider_id: 'bank-transfer', asset: 'USD', amount: 40 });
            for (const amount of [10, 20]) {
                withdrawals.push(await made('fay', 'withdraw', { provider_id: 'bank-transfer', asset: 'USD', amount }));
            }

            // Two withdrawals due at one instant, the second written past the API with its hold: the id decides.
            const twin = '00000000-0000-4000-8000-000000000000';
            await world().sql(`INSERT INTO transactions (id, wallet_id, type, asset, amount, provider_id, status, created_at, settles_at)
                SELECT ?, wallet_id, type, asset, amount, provider_id, status, created_at, settles_at FROM transactions WHERE id = ?`, twin, withdrawals[1]!.id);
            await world().sql(`INSERT INTO entries (transaction_id, account_id, amount, created_at)
                SELECT t.id, a.id, CASE a.kind WHEN 'available' THEN -t.amount ELSE t.amount END, t.created_at
                FROM transactions t JOIN accounts a ON a.wallet_id = t.wallet_id AND a.asset = t.asset AND a.kind IN ('available', 'pending_out') WHERE t.id = ?`, twin);
            const tied = { id: twin, due: withdrawals[1]!.settles_at };

            const store = await timedPay(world().server);
            const until = new Date(later(deposit.settles_at, day));
            const byDue = [
                ...[{ id: withdrawals[0]!.id, due: withdrawals[0]!.settles_at }, tied, { id: withdrawals[1]!.id, due: withdrawals[1]!.settles_at }].sort((a, b) => a.due.localeCompare(b.due) || a.id.localeCompare(b.id)),
                { id: deposit.id, due: deposit.settles_at }
            ].map((transition): AppliedTransition => ({ type: 'pay.transaction.completed', ...transition }));
            expect(await store.applyDue(until, 0)).to.equal([]);
            expect(await store.applyDue(until, 2)).to.equal(byDue.slice(0, 2));
            expect(await store.nextDue()).to.equal(new Date(byDue[2]!.due));
            expect(await store.applyDue(until, 2)).to.equal(byDue.slice(2));
            expect(await store.applyDue(until, 2)).to.equal([]);
            expect((await walletOf(world(), 'fay')).balances).to.equal([{ asset: 'USD', amount: 90, pending_in: 0, pending_out: 0 }]);
            await expectLedgerExact(world().sql);
        });
    });
}


describe('pay on a SQLite file', () => {

    it('stays behind the 501 gate, before authentication, while the database has no schema', async () => {

        const file = Path.join(tempDir(), 'pay.db');
        new Sqlite(file).close();
        const unprovisioned = await testServer({ pay: { url: file, publishableKey: 'pk_local_test', secretKey: 'sk_local_test' } });
        for (const url of ['/v1/pay/wallet/', `/v1/pay/wallet/transactions/${Crypto.randomUUID()}`]) {
            const error = expectError(await unprovisioned.inject(url), 501, 'pay_not_provisioned');
            expect(error).to.include({ configured: true, schema_ready: false, message: 'The pay database has no schema yet: run `npx localgate provision pay`' });
        }

        await unprovisioned.stop();
    });
});


describe('pay ledger schema', () => {

    let server: Server;
    let file: string;

    before(async () => {

        ({ server, file } = await payServer());
        await move(serverWorld(server), 'sam', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 80 });
        await move(serverWorld(server), 'sam', 'withdraw', { provider_id: 'sandbox', asset: 'USD', amount: 30 });
    });

    after(async () => {

        await server.stop();
    });

    it('writes two entries per transaction that sum to zero, against the provider\'s clearing account', () => {

        const sql = `SELECT t.type, t.amount AS transaction_amount, e.amount, a.wallet_id IS NOT NULL AS wallet, a.provider_id
            FROM entries e JOIN transactions t ON t.id = e.transaction_id JOIN accounts a ON a.id = e.account_id ORDER BY e.id`;
        const rows = withDatabase(file, (db) => db.prepare(sql).all());
        expect(rows).to.equal([
            { type: 'deposit', transaction_amount: 80, amount: 80, wallet: 1, provider_id: null },
            { type: 'deposit', transaction_amount: 80, amount: -80, wallet: 0, provider_id: 'sandbox' },
            { type: 'withdrawal', transaction_amount: 30, amount: -30, wallet: 1, provider_id: null },
            { type: 'withdrawal', transaction_amount: 30, amount: 30, wallet: 0, provider_id: 'sandbox' }
        ]);
    });

    const refused: [string, string, RegExp][] = [
        ['updating a ledger entry', 'UPDATE entries SET amount = amount + 1', /ledger entries are immutable/],
        ['deleting a ledger entry', 'DELETE FROM entries', /ledger entries are immutable/],
        ['updating a transaction', 'UPDATE transactions SET amount = 1', /transactions are immutable/],
        ['deleting a transaction', 'DELETE FROM transactions', /transactions are immutable/],
        ['an entry in another asset than its transaction', `INSERT INTO entries (transaction_id, account_id, amount, created_at)
            SELECT (SELECT id FROM transactions LIMIT 1), (SELECT id FROM accounts WHERE asset = 'MIT'), 1, 'now'`, /a ledger entry must be in the asset of its transaction/],
        ['a negative wallet balance', `INSERT INTO entries (transaction_id, account_id, amount, created_at)
            SELECT (SELECT id FROM transactions LIMIT 1), (SELECT id FROM accounts WHERE wallet_id IS NOT NULL), -1000, 'now'`, /CHECK constraint failed: wallet_id IS NULL OR balance >= 0/]
    ];

    refused.forEach(([what, sql, message]) => {

        it(`refuses ${what} in the schema itself`, () => {

            withDatabase(file, (db) => {

                db.prepare(`INSERT INTO accounts (provider_id, asset, created_at) VALUES ('sandbox', 'MIT', 'now') ON CONFLICT DO NOTHING`).run();
                expect(() => db.exec(sql)).to.throw(message);
            });
        });
    });

    it('keeps every account balance equal to the sum of its entries', () => {

        const rows = withDatabase(file, (db) => db.prepare(`SELECT a.balance, coalesce(sum(e.amount), 0) AS total FROM accounts a LEFT JOIN entries e ON e.account_id = a.id GROUP BY a.id`).all()) as { balance: number; total: number }[];
        for (const row of rows) {
            expect(row.balance).to.equal(row.total);
        }
    });

    it('answers each store read from an index, without a full scan or a temporary b-tree', () => {

        const reads = Object.entries(queries).filter(([name]) => !name.startsWith('insert'));
        withDatabase(file, (db) => {

            for (const [name, sql] of reads) {
                const params = Array.from({ length: sql.split('?').length - 1 }, () => 'x');
                const details = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((row) => row.detail);
                expect(details.join('; '), name).to.not.contain('TEMP B-TREE');
                const fullScans = details.filter((detail) => detail.startsWith('SCAN ') && !detail.startsWith('SCAN (subquery') && !detail.includes(' USING '));
                expect(fullScans, name).to.equal([]);
            }
        });
    });
});


describe('pay settlement schema', () => {

    it('lets a pending transaction settle once, to completed or failed at its settles_at, and changes nothing else', async () => {

        const { server, file } = await payServer();
        const pending = body<Transaction>(await move(serverWorld(server), 'xia', 'deposit', { provider_id: 'bank-transfer', asset: 'USD', amount: 800 }));
        await server.stop();
        withDatabase(file, (db) => {

            const update = (set: string) => {

                return () => db.prepare(`UPDATE transactions SET ${set} WHERE id = ?`).run(pending.id);
            };

            expect(update('amount = 1'), 'amount').to.throw(/transactions are immutable but for a pending one settling/);
            expect(update(`status = 'completed', settled_at = created_at, settles_at = created_at`), 'settles_at').to.throw(/transactions are immutable but for a pending one settling/);
            expect(update(`status = 'completed', settled_at = created_at`), 'settled_at').to.throw(/CHECK constraint failed: settled_at = settles_at/);
            expect(update(`status = 'failed', settled_at = settles_at`), 'failure_code').to.throw(/CHECK constraint failed: \(status = 'failed'\) = \(failure_code IS NOT NULL\)/);
            expect(update(`status = 'completed'`), 'no settled_at').to.throw(/CHECK constraint failed: \(status = 'pending'\) = \(settled_at IS NULL\)/);
            update(`status = 'completed', settled_at = settles_at`)();
            expect(update(`status = 'failed', failure_code = 'returned'`), 'settled twice').to.throw(/transactions are immutable but for a pending one settling/);
            expect(() => db.prepare('DELETE FROM transactions WHERE id = ?').run(pending.id)).to.throw(/transactions are immutable/);
        });
    });

    it('migrates a ledger written before settlement: its moves settled as made, its entries and keys kept', () => {

        const db = new Sqlite(':memory:');
        db.pragma('foreign_keys = ON');
        const migrations = namespaceMigrations(paySchema);
        migrate(db, migrations.slice(0, 3));
        db.exec(`INSERT INTO wallets VALUES ('w-1', 'yan', '2030-01-01T00:00:00.000Z');
            INSERT INTO accounts (wallet_id, asset, created_at) VALUES ('w-1', 'USD', '2030-01-01T00:00:00.000Z');
            INSERT INTO accounts (provider_id, asset, created_at) VALUES ('sandbox', 'USD', '2030-01-01T00:00:00.000Z');
            INSERT INTO transactions VALUES ('t-1', 'w-1', 'deposit', 'USD', 300, 'sandbox', 'completed', '2030-01-01T00:00:00.000Z');
            INSERT INTO entries (transaction_id, account_id, amount, created_at) VALUES ('t-1', 1, 300, '2030-01-01T00:00:00.000Z'), ('t-1', 2, -300, '2030-01-01T00:00:00.000Z');
            INSERT INTO idempotency_keys VALUES ('yan', 'k-1', 'f', '{"transaction":{"id":"t-1","created_at":"2030-01-01T00:00:00.000Z"}}', '2030-01-01T00:00:00.000Z'),
                ('yan', 'k-2', 'f', '{"refusal":{"kind":"conflict","code":"insufficient_funds","message":"no"}}', '2030-01-01T00:00:00.000Z')`);

        expect(migrate(db, migrations.slice(0, 4))).to.equal([4]);
        expect(db.prepare('SELECT * FROM transactions').all()).to.equal([{
            id: 't-1', wallet_id: 'w-1', type: 'deposit', asset: 'USD', amount: 300, provider_id: 'sandbox', status: 'completed',
            created_at: '2030-01-01T00:00:00.000Z', settles_at: '2030-01-01T00:00:00.000Z', settled_at: '2030-01-01T00:00:00.000Z', failure_code: null
        }]);
        expect(db.prepare('SELECT id, transaction_id, account_id, amount FROM entries').all()).to.equal([
            { id: 1, transaction_id: 't-1', account_id: 1, amount: 300 },
            { id: 2, transaction_id: 't-1', account_id: 2, amount: -300 }
        ]);
        expect(db.prepare('SELECT kind, balance FROM accounts ORDER BY id').all()).to.equal([{ kind: 'available', balance: 300 }, { kind: 'available', balance: -300 }]);
        const keys = db.prepare('SELECT key, outcome, keep_until FROM idempotency_keys ORDER BY key').all() as { key: string; outcome: string; keep_until: string }[];
        expect(keys.map((row) => ({ ...row, outcome: JSON.parse(row.outcome) as unknown }))).to.equal([
            { key: 'k-1', outcome: { transaction: { id: 't-1', created_at: '2030-01-01T00:00:00.000Z', settles_at: '2030-01-01T00:00:00.000Z', settled_at: '2030-01-01T00:00:00.000Z', failure_code: null } }, keep_until: '2030-01-02T00:00:00.000Z' },
            { key: 'k-2', outcome: { refusal: { kind: 'conflict', code: 'insufficient_funds', message: 'no' } }, keep_until: '2030-01-02T00:00:00.000Z' }
        ]);
        expect(db.pragma('foreign_key_check')).to.equal([]);
        expect(() => db.exec(`INSERT INTO entries (transaction_id, account_id, amount, created_at) VALUES ('t-1', 1, -1000, 'x')`)).to.throw(/balance >= 0/);
        expect(() => db.exec(`UPDATE entries SET amount = 1`)).to.throw(/ledger entries are immutable/);
        expect((db.pragma('foreign_key_list(entries)') as { table: string; from: string }[]).map(({ table, from }) => [from, table]).sort()).to.equal([['account_id', 'accounts'], ['transaction_id', 'transactions']]);
        const orphan = `INSERT INTO transactions (id, wallet_id, type, asset, amount, provider_id, status, created_at, settles_at, settled_at)
            VALUES ('t-2', 'w-none', 'deposit', 'USD', 1, 'sandbox', 'completed', 'x', 'x', 'x')`;
        expect(() => db.exec(orphan)).to.throw(/FOREIGN KEY constraint failed/);
        db.close();
    });
});


describe('pay settlement across connections', () => {

    it('applies each due transition once when two stores over one file take turns at them, and keeps the ledger exact', async () => {

        const { server, file } = await payServer();
        const other = await testServer({ pay: server.app.localgate.settings.pay });
        const pending: string[] = [];
        for (const subject of ['uma', 'vic', 'wes']) {
            expect((await move(serverWorld(server), subject, 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 1000 })).statusCode).to.equal(201);
            for (const [direction, amount] of [['deposit', 300], ['deposit', 399], ['withdraw', 100], ['withdraw', 199]] as const) {
                const res = await move(serverWorld(other), subject, direction, { provider_id: 'bank-transfer', asset: 'USD', amount });
                pending.push(body<Transaction>(res).id);
            }
        }

        const [a, b] = [await timedPay(server), await timedPay(other)];
        const until = new Date(Date.now() + 3 * day);
        const applied: string[] = [];
        for (let i = 0; i < pending.length; ++i) {
            const both = await Promise.all([a.applyDue(until, 1), b.applyDue(until, 1)]);
            applied.push(...both.flat().map(({ id }) => id));
        }

        expect(applied.sort()).to.equal([...pending].sort());
        expect(await b.nextDue()).to.be.null();
        expect((await walletOf(serverWorld(server), 'uma')).balances).to.equal([{ asset: 'USD', amount: 1200, pending_in: 0, pending_out: 0 }]);
        await expectLedgerExact((text, ...params) => Promise.resolve(withDatabase(file, (db) => db.prepare(text).all(...params) as Record<string, unknown>[])));
        await other.stop();
        await server.stop();
    });
});


describe('pay store per connection', () => {

    it('builds a new store when the pay file is provisioned again', async () => {

        const file = Path.join(tempDir(), 'pay.db');
        const spare = `${file}.spare`;
        const credentials = await provisionPay(file);
        Fs.copyFileSync(file, spare);
        const server = await testServer({ pay: { url: file, publishableKey: credentials.PAY_DB_PUBLISHABLE_KEY, secretKey: credentials.PAY_DB_SECRET_KEY } });
        const world = serverWorld(server);
        await move(world, 'tess', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 5 });
        expect((await walletOf(world, 'tess')).balances).to.equal([{ asset: 'USD', amount: 5, pending_in: 0, pending_out: 0 }]);

        for (const suffix of ['', '-wal', '-shm']) {
            Fs.rmSync(file + suffix, { force: true });
        }

        expectError(await server.inject({ url: '/v1/pay/wallet/', headers: bearer(server, 'tess') }), 501, 'pay_not_provisioned');
        // The same keys in a new file: a copy of the database as provisioned.
        Fs.copyFileSync(spare, file);
        expect((await walletOf(world, 'tess')).balances).to.equal([]);
        expect((await move(world, 'tess', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 7 })).statusCode).to.equal(201);
        expect((await walletOf(world, 'tess')).balances).to.equal([{ asset: 'USD', amount: 7, pending_in: 0, pending_out: 0 }]);
        await server.stop();
    });

    it('serves a request from the connection its readiness gate found, and the next one sees the pay file gone', async () => {

        const { server, file } = await payServer();
        server.ext('onPostAuth', (request, h) => {

            if (request.headers['x-remove-pay-file']) {
                Fs.rmSync(file);
            }

            return h.continue;
        });

        const res = await server.inject({ url: '/v1/pay/wallet/', headers: { ...bearer(server, 'uma'), 'x-remove-pay-file': 'yes' } });
        expect(res.statusCode).to.equal(200);
        expect(body(res)).to.include({ owner_id: 'uma' });

        const next = await server.inject({ url: '/v1/pay/wallet/', headers: bearer(server, 'uma') });
        expect(expectError(next, 501, 'pay_not_provisioned')).to.include({ configured: false, schema_ready: false });
        await server.stop();
    });
});

