import Crypto from 'node:crypto';

import Code from '@hapi/code';
import Lab from '@hapi/lab';
import type { ServerInjectResponse } from '@hapi/hapi';

import { storablePattern } from '../lib/fields';
import type { Event } from '../lib/outbox';
import { maxMetadataKeyLength, maxMetadataKeys, maxMetadataValueLength } from '../lib/metadata';
import { requestFingerprint } from '../lib/namespaces/pay/rules';
import { expectError } from './helpers/errors';
import { documentPath } from '../lib/openapi';
import { engines } from './helpers/postgres';
import { adminBearer, bearer, body, testServer, type List } from './helpers/server';
import { engineWorlds, ledgerWorlds, useWorld, type World } from './helpers/worlds';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


// Metadata on deposits, withdrawals and bookings, and the owner every event of theirs names: over HTTP, on both engines.

type Route = 'deposit' | 'withdraw' | 'booking';

interface Transaction {
    id: string;
    owner_id: string;
    type: string;
    status: string;
    created_at: string;
    settles_at: string;
    metadata: Record<string, string>;
}

interface Booking {
    [field: string]: unknown;
    id: string;
    customer_id: string;
    status: string;
    created_at: string;
    metadata: Record<string, string>;
}

const start = '2030-01-01T00:00:00.000Z';

/** The order every transaction holds its fields in, answered or announced. */
const transactionFields = ['id', 'owner_id', 'type', 'asset', 'amount', 'provider_id', 'status', 'created_at', 'settles_at', 'settled_at', 'failure_code', 'metadata'];


/** The admin route of the world's data set: an instance's own, or the default data set's. */
function adminUrl(world: World, path: string): string {

    return world.basePath ? `/_instances/${world.basePath.slice('/i/'.length)}/${path}` : `/_${path}`;
}


async function setClock(world: World, now: string): Promise<void> {

    const res = await world.server.inject({ method: 'PUT', url: adminUrl(world, 'clock'), headers: adminBearer(world.server), payload: { now } });
    expect(res.statusCode, res.payload).to.equal(200);
}


async function eventsOf(world: World, type: string): Promise<Event[]> {

    const res = await world.server.inject({ url: adminUrl(world, `events?type=${type}`), headers: adminBearer(world.server) });
    expect(res.statusCode, res.payload).to.equal(200);
    return body<List<Event>>(res).data;
}


async function firstOf(world: World, url: string): Promise<{ id: string }> {

    const res = await world.inject({ url, headers: bearer(world.server, 'anyone') });
    expect(res.statusCode).to.equal(200);
    return body<List<{ id: string }>>(res).data[0]!;
}


/** A booking body of the world's first available vehicle and first location, on 2 January 2030 from 10:00 to 12:00 unless told. */
async function bookingBody(world: World, extra: object = {}): Promise<Record<string, unknown>> {

    const vehicle = await firstOf(world, '/v1/logistics/vehicles?available=true&limit=1');
    const location = await firstOf(world, '/v1/logistics/locations?limit=1');
    return { vehicle_id: vehicle.id, pickup_location_id: location.id, dropoff_location_id: location.id, pickup_at: '2030-01-02T10:00:00Z', return_at: '2030-01-02T12:00:00Z', ...extra };
}


function move(world: World, subject: string, direction: 'deposit' | 'withdraw', payload: object, key: string = Crypto.randomUUID()): Promise<ServerInjectResponse> {

    return world.inject({ method: 'POST', url: `/v1/pay/gateway/${direction}`, headers: { ...bearer(world.server, subject), 'idempotency-key': key }, payload });
}


/** POSTs to one of the three routes that take metadata, with a body that is valid but for what `extra` sets. */
async function send(world: World, route: Route, extra: object, key?: string): Promise<ServerInjectResponse> {

    if (route === 'booking') {
        return world.inject({ method: 'POST', url: '/v1/logistics/bookings', headers: bearer(world.server, 'alice'), payload: await bookingBody(world, extra) });
    }

    return move(world, 'alice', route, { provider_id: 'sandbox', asset: 'USD', amount: 100, ...extra }, key);
}


const routes: Route[] = ['deposit', 'withdraw', 'booking'];

// At the bounds: the most keys, each as long as a key may be, each value as long as a value may be; an empty value;
// a key of 40 code units that holds surrogate pairs.
const fullest = Object.fromEntries(Array.from({ length: maxMetadataKeys }, (_, index) => [
    index === 0 ? '🔑'.repeat(maxMetadataKeyLength / 2) : `${String(index).padStart(2, '0')}${'k'.repeat(maxMetadataKeyLength - 2)}`,
    index === 1 ? '' : 'v'.repeat(maxMetadataValueLength)
]));


for (const engine of engines) {

    describe(`metadata on pay transactions (${engine})`, () => {

        const world = useWorld(lab, engineWorlds(engine, {}, { pay: true }), { closeWorlds: true });

        it('keeps a deposit\'s metadata and owner on every read and every event of it, pending, completed and failed', async () => {

            await setClock(world(), start);
            const metadata = { order_id: 'ord_1', 'Ünïcode key': 'Grüße, 東京 🚐', empty: '' };
            const made = await move(world(), 'alice', 'deposit', { provider_id: 'bank-transfer', asset: 'USD', amount: 1000, metadata });
            expect(made.statusCode).to.equal(201);
            const pending = body<Transaction>(made);
            expect(Object.keys(pending)).to.equal(transactionFields);
            expect(pending).to.include({ owner_id: 'alice', status: 'pending', metadata });

            const read = await world().inject({ url: `/v1/pay/wallet/transactions/${pending.id}`, headers: bearer(world().server, 'alice') });
            expect(read.statusCode).to.equal(200);
            expect(read.payload).to.equal(made.payload);
            const listed = await world().inject({ url: '/v1/pay/wallet/transactions', headers: bearer(world().server, 'alice') });
            expect(listed.statusCode).to.equal(200);
            expect(body<List<Transaction>>(listed).data).to.equal([pending]);

            // A withdrawal that comes back returned: its failed event carries its metadata too.
            expect((await move(world(), 'alice', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 500 })).statusCode).to.equal(201);
            const returned = await move(world(), 'alice', 'withdraw', { provider_id: 'bank-transfer', asset: 'USD', amount: 199, metadata: { payout: 'p-7' } });
            expect(returned.statusCode).to.equal(201);

            await setClock(world(), '2030-01-04T00:00:00.000Z');
            const settled = await world().inject({ url: `/v1/pay/wallet/transactions/${pending.id}`, headers: bearer(world().server, 'alice') });
            expect(settled.statusCode).to.equal(200);
            expect(body<Transaction>(settled)).to.include({ owner_id: 'alice', status: 'completed', metadata });

            const events = await eventsOf(world(), 'pay.*');
            expect(events.map(({ type, data }) => [type, (data as unknown as Transaction).owner_id, (data as unknown as Transaction).metadata])).to.equal([
                ['pay.transaction.created', 'alice', metadata],
                ['pay.transaction.created', 'alice', {}],
                ['pay.transaction.completed', 'alice', {}],
                ['pay.transaction.created', 'alice', { payout: 'p-7' }],
                ['pay.transaction.failed', 'alice', { payout: 'p-7' }],
                ['pay.transaction.completed', 'alice', metadata]
            ]);
            expect(events.every(({ data }) => JSON.stringify(Object.keys(data as object)) === JSON.stringify(transactionFields))).to.be.true();
            // An event's data is the transaction as its owner reads it.
            expect(events.at(-1)!.data).to.equal(body(settled));
        });

        it('answers {} for a move made without metadata, and for one made with {}', async () => {

            for (const payload of [{}, { metadata: {} }]) {
                const res = await move(world(), 'bob', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 100, ...payload });
                expect(res.statusCode).to.equal(201);
                expect(body<Transaction>(res)).to.include({ owner_id: 'bob', metadata: {} });
            }
        });

        it('replays a key sent again with the same metadata in another order, and refuses it with other metadata as it refuses another amount', async () => {

            const payload = { provider_id: 'sandbox', asset: 'USD', amount: 100, metadata: { a: '1', b: '2' } };
            const first = await move(world(), 'alice', 'deposit', payload, 'k-1');
            expect(first.statusCode).to.equal(201);

            const again = await move(world(), 'alice', 'deposit', { ...payload, metadata: { b: '2', a: '1' } }, 'k-1');
            expect(again.statusCode).to.equal(201);
            expect(again.headers['idempotent-replayed']).to.equal('true');
            expect(again.payload).to.equal(first.payload);

            for (const metadata of [{ a: '1', b: '3' }, { a: '1' }, { a: '1', b: '2', c: '' }, {}]) {
                expectError(await move(world(), 'alice', 'deposit', { ...payload, metadata }, 'k-1'), 422, 'idempotency_key_reused');
            }

            expectError(await move(world(), 'alice', 'deposit', { ...payload, amount: 101 }, 'k-1'), 422, 'idempotency_key_reused');

            // No metadata and {} are one request; either and some metadata are two.
            expect((await move(world(), 'alice', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 100 }, 'k-2')).statusCode).to.equal(201);
            const none = await move(world(), 'alice', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 100, metadata: {} }, 'k-2');
            expect(none.statusCode).to.equal(201);
            expect(none.headers['idempotent-replayed']).to.equal('true');
            expectError(await move(world(), 'alice', 'withdraw', { provider_id: 'sandbox', asset: 'USD', amount: 100, metadata: { a: '1' } }, 'k-2'), 422, 'idempotency_key_reused');

            const listed = await world().inject({ url: '/v1/pay/wallet/transactions', headers: bearer(world().server, 'alice') });
            expect(body<List<Transaction>>(listed).total).to.equal(2);
        });
    });


    describe(`a key kept before transactions carried their owner and metadata (${engine})`, () => {

        const world = useWorld(lab, ledgerWorlds(engine), { closeWorlds: true });

        it('replays its transaction with the wallet\'s owner and {} in the order every transaction holds its fields', async () => {

            const request = { idempotencyKey: 'old-key', providerId: 'sandbox', asset: 'USD', amount: 300, metadata: {} };
            const kept = { transaction: { id: '6f1c1e52-5d7e-4a3b-9d55-0c1f6a0e4b11', type: 'deposit', asset: 'USD', amount: 300, provider_id: 'sandbox', status: 'completed', created_at: start, settles_at: start, settled_at: start, failure_code: null } };
            await world().sql('INSERT INTO idempotency_keys (owner_id, key, fingerprint, outcome, created_at, keep_until) VALUES (?, ?, ?, ?, ?, ?)',
                'yan', 'old-key', requestFingerprint('deposit', request), JSON.stringify(kept), start, '2999-01-01T00:00:00.000Z');

            const res = await move(world(), 'yan', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 300 }, 'old-key');
            expect(res.statusCode).to.equal(201);
            expect(res.headers['idempotent-replayed']).to.equal('true');
            expect(Object.keys(body(res))).to.equal(transactionFields);
            expect(body(res)).to.equal({ ...kept.transaction, owner_id: 'yan', metadata: {} });
        });
    });


    describe(`metadata on bookings (${engine})`, () => {

        const world = useWorld(lab, engineWorlds(engine), { closeWorlds: true });

        it('keeps a booking\'s metadata on every read and every event of it, created, started, completed and cancelled', async () => {

            await setClock(world(), start);
            const metadata = { rental_agreement: 'RA-2030-001', channel: 'kiosk' };
            const made = await send(world(), 'booking', { metadata });
            expect(made.statusCode).to.equal(201);
            const booking = body<Booking>(made);
            expect(booking).to.include({ customer_id: 'alice', status: 'confirmed', metadata });
            expect(Object.keys(booking).at(-1)).to.equal('metadata');

            const read = await world().inject({ url: `/v1/logistics/bookings/${booking.id}`, headers: bearer(world().server, 'alice') });
            expect(read.statusCode).to.equal(200);
            expect(read.payload).to.equal(made.payload);

            const other = await send(world(), 'booking', { pickup_at: '2030-01-05T10:00:00Z', return_at: '2030-01-05T12:00:00Z', metadata: { cancel: 'me' } });
            expect(other.statusCode).to.equal(201);
            const cancelled = await world().inject({ method: 'POST', url: `/v1/logistics/bookings/${body<Booking>(other).id}/cancel`, headers: bearer(world().server, 'alice') });
            expect(cancelled.statusCode).to.equal(200);
            expect(body<Booking>(cancelled)).to.include({ status: 'cancelled', metadata: { cancel: 'me' } });

            await setClock(world(), '2030-01-03T00:00:00.000Z');
            const listed = await world().inject({ url: '/v1/logistics/bookings', headers: bearer(world().server, 'alice') });
            expect(listed.statusCode).to.equal(200);
            // Made at one instant of the frozen clock: listed by id.
            const byStatus = (a: Booking, b: Booking) => a.status.localeCompare(b.status);
            expect(body<List<Booking>>(listed).data.sort(byStatus).map(({ status, metadata: pairs }) => [status, pairs])).to.equal([['cancelled', { cancel: 'me' }], ['completed', metadata]]);

            const events = await eventsOf(world(), 'logistics.*');
            expect(events.map(({ type, data }) => [type, (data as unknown as Booking).customer_id, (data as unknown as Booking).metadata])).to.equal([
                ['logistics.booking.created', 'alice', metadata],
                ['logistics.booking.created', 'alice', { cancel: 'me' }],
                ['logistics.booking.cancelled', 'alice', { cancel: 'me' }],
                ['logistics.booking.started', 'alice', metadata],
                ['logistics.booking.completed', 'alice', metadata]
            ]);
            expect(events.at(-1)!.data).to.equal(body<List<Booking>>(listed).data.find(({ id }) => id === booking.id)!);
        });

        it('answers {} for a booking made without metadata', async () => {

            const res = await send(world(), 'booking', {});
            expect(res.statusCode).to.equal(201);
            expect(body<Booking>(res).metadata).to.equal({});
        });
    });


    describe(`metadata through a fixture load and an export (${engine})`, { timeout: 30_000 }, () => {

        const worlds = ledgerWorlds(engine);
        after(() => worlds.close());

        const orderMetadata = { order_id: 'ord_9', 'Städte': 'Köln 🚐', '10': 'ten', '9': '' };
        const fixture = {
            pay: {
                wallets: [{ id: 'w-meta', owner_id: 'meta', created_at: start }],
                transactions: [
                    { id: '5a0c8a4e-0000-4000-8000-00000000e001', wallet_id: 'w-meta', type: 'deposit', asset: 'USD', amount: 500, provider_id: 'sandbox', created_at: start, metadata: orderMetadata },
                    { id: '5a0c8a4e-0000-4000-8000-00000000e002', wallet_id: 'w-meta', type: 'withdrawal', asset: 'USD', amount: 100, provider_id: 'sandbox', created_at: '2030-01-01T01:00:00.000Z' }
                ]
            },
            logistics: {
                locations: [{ id: 'l-meta', name: 'Meta Depot', address: '1 Key Street', city: 'Harbourside', latitude: 50.6, longitude: -3.4, created_at: start }],
                vehicles: [{ id: 'v-meta', make: 'Make', model: 'Model', year: 2024, seats: 4, daily_rate: 40, currency: 'GBP', created_at: start }],
                bookings: [{
                    id: 'bk-meta', vehicle_id: 'v-meta', pickup_location_id: 'l-meta', dropoff_location_id: 'l-meta', pickup_at: '2030-02-01T10:00:00Z', return_at: '2030-02-01T12:00:00Z',
                    customer_id: 'meta', metadata: { agreement: 'RA-9' }, created_at: start
                }]
            }
        };

        // The records of the fixture, as an export holds them.
        const mine = (file: Record<string, unknown>) => {

            const { pay, logistics } = file as { pay: { transactions: { id: string }[] }; logistics: { bookings: { id: string }[] } };
            return { transactions: pay.transactions.filter(({ id }) => id.startsWith('5a0c8a4e-')), bookings: logistics.bookings.filter(({ id }) => id === 'bk-meta') };
        };

        it('loads metadata from a fixture, answers it over HTTP, and keeps it through an export loaded back', async () => {

            const original = await worlds.open();
            const copy = await worlds.open();
            try {
                expect(await original.server.app.localgate.data.loadFixture(fixture, 'metadata')).to.equal({ logistics: 3, pay: 3 });
                const transactions = await original.inject({ url: '/v1/pay/wallet/transactions', headers: bearer(original.server, 'meta') });
                expect(transactions.statusCode, transactions.payload).to.equal(200);
                expect(body<List<Transaction>>(transactions).data.map(({ id, owner_id: owner, metadata }) => [id, owner, metadata])).to.equal([[fixture.pay.transactions[1]!.id, 'meta', {}], [fixture.pay.transactions[0]!.id, 'meta', orderMetadata]]);
                const booking = await original.inject({ url: '/v1/logistics/bookings/bk-meta', headers: bearer(original.server, 'meta') });
                expect(booking.statusCode).to.equal(200);
                expect(body<Booking>(booking).metadata).to.equal({ agreement: 'RA-9' });

                const file = await original.server.app.localgate.data.exportRecords();
                const exported = mine(file);
                expect(exported.transactions.map((transaction) => (transaction as unknown as Transaction).metadata)).to.equal([orderMetadata, {}]);
                expect(exported.bookings.map((record) => (record as unknown as Booking).metadata)).to.equal([{ agreement: 'RA-9' }]);

                expect(await copy.server.app.localgate.data.loadFixture(file, 'export')).to.equal({ commerce: 0, logistics: 3, pay: 3 });
                expect(mine(await copy.server.app.localgate.data.exportRecords())).to.equal(exported);
                // Loading it again adds nothing: a stored transaction with the same id and metadata is the same move.
                expect(await copy.server.app.localgate.data.loadFixture(file, 'export')).to.equal({ commerce: 0, logistics: 0, pay: 0 });
                const changed = { pay: { wallets: fixture.pay.wallets, transactions: [{ ...fixture.pay.transactions[0], metadata: { order_id: 'other' } }] } };
                await expect(copy.server.app.localgate.data.loadFixture(changed, 'changed')).to.reject('changed: pay.transactions[0].id: "5a0c8a4e-0000-4000-8000-00000000e001" is already the id of a stored record of transactions with other contents');
            }
            finally {
                await original.close();
                await copy.close();
            }
        });

        it('refuses a fixture whose metadata breaks a rule, naming the record and the field', async () => {

            const world = await worlds.open();
            try {
                const bad = { logistics: { ...fixture.logistics, bookings: [{ ...fixture.logistics.bookings[0], metadata: { order_id: 7 } }] } };
                await expect(world.server.app.localgate.data.loadFixture(bad, 'bad')).to.reject(`bad: logistics.bookings[0].metadata.order_id: metadata.order_id must be a string of at most ${maxMetadataValueLength} characters`);
                const booking = await world.inject({ url: '/v1/logistics/bookings/bk-meta', headers: bearer(world.server, 'meta') });
                expect(booking.statusCode).to.equal(404);
            }
            finally {
                await world.close();
            }
        });
    });


    describe(`metadata bounds (${engine})`, () => {

        const world = useWorld(lab, engineWorlds(engine, {}, { pay: true }), { shared: true, closeWorlds: true });

        before(async () => {

            expect((await move(world(), 'alice', 'deposit', { provider_id: 'sandbox', asset: 'USD', amount: 1_000_000 })).statusCode).to.equal(201);
        });

        for (const route of routes) {
            it(`takes the most metadata a ${route} may carry, and answers it as sent`, async () => {

                const res = await send(world(), route, { metadata: fullest, ...route === 'booking' ? { pickup_at: '2030-02-01T10:00:00Z', return_at: '2030-02-01T12:00:00Z' } : {} });
                expect(res.statusCode, res.payload).to.equal(201);
                expect(body<{ metadata: object }>(res).metadata).to.equal(fullest);
            });
        }

        // What each refusal names and says; a refused request writes nothing.
        const keyMessage = `is not a metadata key: a key is 1 to ${maxMetadataKeyLength} characters, without NUL characters or unpaired surrogates`;
        const valueMessage = `must be a string of at most ${maxMetadataValueLength} characters`;
        const objectMessage = 'metadata must be an object of string values (leave it out for none)';
        const longKey = 'k'.repeat(maxMetadataKeyLength + 1);
        const cases: [title: string, metadata: unknown, field: string, message: string][] = [
            [`${maxMetadataKeys + 1} keys`, Object.fromEntries(Array.from({ length: maxMetadataKeys + 1 }, (_, index) => [`k${index}`, 'v'])), 'metadata', `metadata must have at most ${maxMetadataKeys} keys`],
            ['a key over 40 characters', { [longKey]: 'v' }, `metadata.${longKey}`, `metadata.${longKey} ${keyMessage}`],
            ['an empty key', { '': 'v' }, 'metadata.""', `metadata."" ${keyMessage}`],
            ['a key with a NUL character', { 'a\u0000b': 'v' }, 'metadata.a\u0000b', `metadata.a\u0000b ${keyMessage}`],
            ['a key with an unpaired surrogate', { 'a\ud83d': 'v' }, 'metadata.a\ud83d', `metadata.a\ud83d ${keyMessage}`],
            ['a value over 500 characters', { note: 'v'.repeat(maxMetadataValueLength + 1) }, 'metadata.note', `metadata.note ${valueMessage}`],
            ['a number value', { order_id: 12 }, 'metadata.order_id', `metadata.order_id ${valueMessage}`],
            ['a boolean value', { paid: true }, 'metadata.paid', `metadata.paid ${valueMessage}`],
            ['a null value', { order_id: null }, 'metadata.order_id', `metadata.order_id ${valueMessage}`],
            ['an object value', { order: { id: '1' } }, 'metadata.order', `metadata.order ${valueMessage}`],
            ['an array value', { tags: ['a'] }, 'metadata.tags', `metadata.tags ${valueMessage}`],
            ['a value with a NUL character', { note: 'a\u0000' }, 'metadata.note', 'metadata.note must not contain NUL characters or unpaired surrogates'],
            ['a value with an unpaired surrogate', { note: 'a\udc00' }, 'metadata.note', 'metadata.note must not contain NUL characters or unpaired surrogates'],
            ['metadata null', null, 'metadata', objectMessage],
            ['metadata an array', [['order_id', '1']], 'metadata', objectMessage],
            ['metadata a string', 'order_id=1', 'metadata', objectMessage]
        ];

        for (const route of routes) {
            for (const [title, metadata, field, message] of cases) {
                it(`refuses a ${route} with ${title}: 400 naming ${JSON.stringify(field)}`, async () => {

                    const error = expectError(await send(world(), route, { metadata }), 400, 'validation_failed', field);
                    expect(error.details).to.equal([{ field, message }]);
                });
            }
        }

        it('keeps nothing of a refused request', async () => {

            const transactions = await world().inject({ url: '/v1/pay/wallet/transactions', headers: bearer(world().server, 'alice') });
            expect(body<List<Transaction>>(transactions).total).to.equal(3);
            const bookings = await world().inject({ url: '/v1/logistics/bookings', headers: bearer(world().server, 'alice') });
            expect(body<List<Booking>>(bookings).total).to.equal(1);
        });
    });
}


describe('metadata in the OpenAPI document', () => {

    it('says the bounds on every request and record that carries it, and the owner of a transaction', async () => {

        const server = await testServer();
        const res = await server.inject(documentPath);
        await server.stop();
        expect(res.statusCode).to.equal(200);
        const { schemas } = body<{ components: { schemas: Record<string, { properties: Record<string, Record<string, unknown>>; required?: string[] }> } }>(res).components;
        for (const name of ['GatewayRequest', 'NewBooking', 'PayTransaction', 'Booking']) {
            const { description, ...metadata } = schemas[name]!.properties.metadata!;
            // A request left without it stands for {}.
            const left = name.endsWith('Request') || name.startsWith('New') ? { default: {} } : {};
            expect(metadata, name).to.equal({ type: 'object', additionalProperties: { type: 'string', maxLength: maxMetadataValueLength, pattern: storablePattern.source }, maxProperties: maxMetadataKeys, ...left });
            expect(description, name).to.contain(`at most ${maxMetadataKeys} keys of 1 to ${maxMetadataKeyLength} characters`);
        }

        expect(schemas.PayTransaction!.required).to.include(['owner_id', 'metadata']);
        expect(schemas.Booking!.required).to.include(['customer_id', 'metadata']);
        expect(schemas.GatewayRequest!.required).to.not.include('metadata');
    });
});
