import Code from '@hapi/code';
import type { Server, ServerInjectResponse } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { provisionPay } from '../lib';
import { renameIds } from './helpers/ids';
import { engineServer, freshDatabase, skipWithoutPostgres } from './helpers/postgres';
import { adminBearer, bearer, testServer } from './helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


// One fixture loaded into both engines; every read must then answer the same bytes. Ids mix case and punctuation, and
// records share a created_at, so that the order of ties (by id, byte by byte) is tested as well.
const stamp = '2025-01-01T00:00:00.000Z';
const later = '2025-02-01T00:00:00.000Z';

const businesses = ['b-Zed', 'b-alpha', 'B-Beta', 'b_under', 'b-9'].map((id, index) => ({
    id, name: `Shop ${id}`, description: 'A shop', category: 'food', city: 'Harbourside', phone: `+44 1 ${index}`, created_at: index % 2 ? later : stamp
}));

const products = Array.from({ length: 23 }, (_, index) => ({
    id: `p-${['a', 'B', 'c', 'D', '_'][index % 5]}${index}`,
    name: `Product ${index}`,
    description: index % 3 ? 'Plain' : 'Caf\u00e9 cr\u00e8me \u{1F370}',
    price: index * 1.25,
    currency: index % 2 ? 'USD' : 'GBP',
    business_id: businesses[index % 3]!.id,
    created_by: 'ana',
    created_at: index % 4 ? stamp : later
}));

const offers = products.slice(0, 7).map((product, index) => ({
    id: `o-${index % 2 ? 'X' : 'y'}${index}`, product_id: product.id, title: `Offer ${index}`, price: 1 + index / 4, currency: 'USD',
    valid_from: '2025-06-01T00:00:00Z', valid_until: '2025-09-01T00:00:00Z', created_at: stamp
}));

const fixture = {
    commerce: {
        businesses,
        products,
        offers,
        inquiries: [{ id: 'i-1', product_id: products[0]!.id, message: 'Vegan?', owner_id: 'ben', created_at: stamp }],
        scam_reports: [
            { id: 's-1', target_type: 'business', target_id: businesses[0]!.id, reason: 'Never opens', reporter_id: 'cat', created_at: stamp },
            { id: 's-2', target_type: 'product', target_id: products[1]!.id, reason: 'Fake', reporter_id: 'cat', created_at: stamp }
        ]
    },
    logistics: {
        locations: ['Quay', 'station', 'Airport', '_depot'].map((name, index) => ({
            id: `l-${name}`, name, address: `${index} Road`, city: 'Harbourside', latitude: 50 + index / 10, longitude: -3.5 + index / 100, created_at: stamp
        })),
        vehicles: Array.from({ length: 9 }, (_, index) => ({
            id: `v-${['A', 'b', 'C'][index % 3]}${index}`, make: 'Make', model: `Model ${index}`, year: 2015 + index, seats: 2 + index, daily_rate: 40.5 + index,
            currency: 'GBP', is_available: index % 4 !== 3, created_at: index % 2 ? later : stamp
        })),
        drivers: [{ id: 'd-1', name: 'Dee', phone: '1', license_number: 'L1', vehicle_id: 'v-A0', created_at: stamp }],
        bookings: [{
            id: 'bk-1', vehicle_id: 'v-b1', pickup_location_id: 'l-Quay', dropoff_location_id: 'l-station', pickup_at: '2030-02-01T10:00:00Z', return_at: '2030-02-01T12:00:00Z',
            customer_id: 'dot', metadata: { zeta: 'last', alpha: 'Caf\u00e9 \u{1F370}', '10': 'ten', '9': '' }, created_at: stamp
        }]
    }
};

// Every list answers 200 on both engines.
const lists = [
    '/v1/commerce/businesses', '/v1/commerce/businesses?limit=2&offset=1', '/v1/commerce/businesses?offset=10',
    '/v1/commerce/products', '/v1/commerce/products?limit=5&offset=5', `/v1/commerce/products?business_id=${businesses[1]!.id}`,
    `/v1/commerce/products?business_id=${businesses[1]!.id}&limit=3&offset=2`, '/v1/commerce/products?business_id=nobody',
    '/v1/commerce/offers', `/v1/commerce/offers?product_id=${products[0]!.id}`, '/v1/commerce/offers?limit=2&offset=3',
    '/v1/logistics/vehicles', '/v1/logistics/vehicles?available=true', '/v1/logistics/vehicles?available=false&limit=1',
    '/v1/logistics/vehicles?limit=4&offset=4', '/v1/logistics/locations', '/v1/logistics/locations?limit=1&offset=2'
];

// Each read with the status both engines must answer: two engines agreeing on a wrong status is a failure too.
const singles: [string, number][] = [
    [`/v1/commerce/businesses/${businesses[0]!.id}`, 200], [`/v1/commerce/products/${products[1]!.id}`, 200], [`/v1/commerce/products/${products[0]!.id}`, 200],
    ['/v1/logistics/vehicles/v-A0', 200], ['/v1/logistics/vehicles/v-C5', 200],
    ['/v1/commerce/products/nothing', 404], ['/v1/commerce/businesses/nothing', 404], ['/v1/logistics/vehicles/nothing', 404],
    ['/v1/commerce/products?limit=0', 400], ['/v1/logistics/vehicles?available=maybe', 400], ['/v1/commerce/offers?product_id=', 400]
];


// Both engines answer the status the case states, then the same bytes.
function same(label: string, status: number, sqlite: ServerInjectResponse, postgres: ServerInjectResponse): void {

    expect(sqlite.statusCode, `${label} on SQLite`).to.equal(status);
    expect(postgres.statusCode, `${label} on PostgreSQL`).to.equal(status);
    expect(postgres.headers['x-total-count'], label).to.equal(sqlite.headers['x-total-count']);
    expect(postgres.payload, label).to.equal(sqlite.payload);
}


describe('one fixture on SQLite and on PostgreSQL', { skip: skipWithoutPostgres('the engine parity tests') }, () => {

    const servers: Record<'sqlite' | 'postgres', Server> = {} as Record<'sqlite' | 'postgres', Server>;

    before(async () => {

        for (const engine of ['sqlite', 'postgres'] as const) {
            servers[engine] = await engineServer(engine, { seed: false });
            expect(await servers[engine].app.localgate.data.loadFixture(fixture, 'parity')).to.equal({ commerce: 38, logistics: 15 });
        }
    });

    after(async () => {

        await Promise.all(Object.values(servers).map((server) => server.stop()));
    });

    const both = async (request: Parameters<Server['inject']>[0] | ((server: Server) => Parameters<Server['inject']>[0])) => {

        const of = (server: Server) => (typeof request === 'function' ? request(server) : request);
        return [await servers.sqlite.inject(of(servers.sqlite)), await servers.postgres.inject(of(servers.postgres))] as const;
    };

    it('answers every list with the same records, order, total and X-Total-Count', async () => {

        for (const url of lists) {
            const [sqlite, postgres] = await both(url);
            same(url, 200, sqlite, postgres);
        }
    });

    it('answers every single record and every lookup error the same', async () => {

        for (const [url, status] of singles) {
            const [sqlite, postgres] = await both(url);
            same(url, status, sqlite, postgres);
        }
    });

    it('answers the caller\'s own records the same, and hides everyone else\'s the same way', async () => {

        const reads = [
            ['/v1/commerce/inquiries/i-1', 'ben', 200], ['/v1/commerce/inquiries/i-1', 'eve', 404], ['/v1/commerce/scam-reports/s-2', 'cat', 200],
            ['/v1/commerce/scam-reports/s-2', 'ben', 404], ['/v1/logistics/bookings/bk-1', 'dot', 200], ['/v1/logistics/bookings', 'dot', 200],
            ['/v1/logistics/bookings/bk-1', 'ann', 404]
        ] as const;

        for (const [url, subject, status] of reads) {
            const [sqlite, postgres] = await both((server) => ({ url, headers: bearer(server, subject) }));
            same(`${url} as ${subject}`, status, sqlite, postgres);
        }
    });

    it('refuses the same writes with the same status, code and message', async () => {

        const booking = { vehicle_id: 'v-A0', pickup_location_id: 'l-Quay', dropoff_location_id: 'l-station', pickup_at: '2030-01-01T10:00:00Z', return_at: '2030-01-01T12:00:00Z' };
        const writes = [
            { method: 'POST', url: '/v1/logistics/bookings', payload: { ...booking, vehicle_id: 'v-A3' }, status: 409 },
            { method: 'POST', url: '/v1/logistics/bookings', payload: { ...booking, vehicle_id: 'nothing' }, status: 422 },
            { method: 'POST', url: '/v1/logistics/bookings', payload: { ...booking, dropoff_location_id: 'nowhere' }, status: 422 },
            { method: 'POST', url: '/v1/logistics/bookings', payload: { ...booking, metadata: { ['k'.repeat(41)]: 'v', order_id: 7 } }, status: 400 },
            { method: 'POST', url: '/v1/commerce/products', payload: { name: 'X', description: 'Y', price: 1, currency: 'USD', business_id: 'nobody' }, status: 422 },
            { method: 'POST', url: '/v1/commerce/scam-reports', payload: { target_type: 'business', target_id: businesses[0]!.id, reason: 'Again' }, status: 409 },
            { method: 'POST', url: '/v1/commerce/scam-reports', payload: { target_type: 'offer', target_id: 'nothing', reason: 'Fake' }, status: 422 },
            { method: 'POST', url: '/v1/commerce/inquiries', payload: { business_id: 'nobody', message: 'Hello?' }, status: 422 }
        ];

        for (const { status, ...write } of writes) {
            const [sqlite, postgres] = await both((server) => ({ ...write, headers: bearer(server, 'cat') }));
            same(`${write.method} ${write.url} ${JSON.stringify(write.payload)}`, status, sqlite, postgres);
        }
    });

    it('accepts the same writes and answers them in the same shape, then refuses the overlap the same way', async () => {

        const booking = { vehicle_id: 'v-A0', pickup_location_id: 'l-Quay', dropoff_location_id: 'l-station', pickup_at: '2030-01-01T10:00:00Z', return_at: '2030-01-01T12:00:00Z' };
        const [sqlite, postgres] = await both((server) => ({ method: 'POST', url: '/v1/logistics/bookings', payload: booking, headers: bearer(server, 'ann') }));
        expect(sqlite.statusCode).to.equal(201);
        expect(postgres.statusCode).to.equal(201);
        const strip = (res: ServerInjectResponse) => ({ ...JSON.parse(res.payload) as object, id: 'id', created_at: 'created_at' });
        expect(strip(postgres)).to.equal(strip(sqlite));

        const [again, againOnPostgres] = await both((server) => ({ method: 'POST', url: '/v1/logistics/bookings', payload: { ...booking, pickup_at: '2030-01-01T11:00:00Z' }, headers: bearer(server, 'bob') }));
        same('overlap', 409, again, againOnPostgres);
    });
});


describe('provisioned pay on SQLite and on PostgreSQL', { skip: skipWithoutPostgres('the pay parity tests') }, () => {

    const servers: Record<'sqlite' | 'postgres', Server> = {} as Record<'sqlite' | 'postgres', Server>;

    before(async () => {

        servers.sqlite = await testServer({ memoryPay: true, seed: false });
        const database = await freshDatabase();
        const credentials = await provisionPay(database.url);
        servers.postgres = await testServer({
            databaseUrl: database.url,
            seed: false,
            pay: { url: credentials.PAY_DB_URL, publishableKey: credentials.PAY_DB_PUBLISHABLE_KEY, secretKey: credentials.PAY_DB_SECRET_KEY }
        });
        servers.postgres.ext('onPostStop', () => database.drop());
    });

    after(async () => {

        await Promise.all(Object.values(servers).map((server) => server.stop()));
    });

    const both = async (request: (server: Server) => Parameters<Server['inject']>[0]) => [await servers.sqlite.inject(request(servers.sqlite)), await servers.postgres.inject(request(servers.postgres))] as const;

    it('answers status, tokens, providers and lookups with the same bytes', async () => {

        const reads = [
            ['/v1/pay/status', 200], ['/v1/pay/tokens', 200], ['/v1/pay/tokens/mit', 200], ['/v1/pay/tokens/NOPE', 404],
            ['/v1/pay/gateway/providers', 200], ['/v1/pay/wallet/transactions?limit=1', 200]
        ] as const;

        for (const [url, status] of reads) {
            const [sqlite, postgres] = await both((server) => ({ url, headers: bearer(server, 'pat') }));
            same(url, status, sqlite, postgres);
        }
    });

    it('refuses the same moves the same way, and makes the same moves in the same shape', { timeout: 20_000 }, async () => {

        const moves = [
            ['withdraw', { provider_id: 'sandbox', asset: 'USD', amount: 500 }, 409],
            ['deposit', { provider_id: 'nobody', asset: 'USD', amount: 500 }, 422],
            ['deposit', { provider_id: 'sandbox', asset: 'NST', amount: 5 }, 409],
            ['deposit', { provider_id: 'sandbox', asset: 'USD', amount: 2500 }, 201],
            ['withdraw', { provider_id: 'sandbox', asset: 'USD', amount: 1000 }, 201],
            ['deposit', { provider_id: 'bank-transfer', asset: 'USD', amount: 700, metadata: { order_id: 'o-1', 'Ünï': '東京 🚐' } }, 201],
            ['withdraw', { provider_id: 'bank-transfer', asset: 'USD', amount: 300 }, 201],
            ['withdraw', { provider_id: 'sandbox', asset: 'USD', amount: 1, metadata: { order_id: 1 } }, 400],
            ['withdraw', { provider_id: 'sandbox', asset: 'USD', amount: 1201 }, 409],
            ['deposit', { provider_id: 'card', asset: 'USD', amount: 402 }, 402]
        ] as const;

        for (const [index, [direction, payload, status]] of moves.entries()) {
            const request = (server: Server) => ({ method: 'POST', url: `/v1/pay/gateway/${direction}`, payload, headers: { ...bearer(server, 'pat'), 'idempotency-key': `parity-${index}` } });
            const [sqlite, postgres] = await both(request);
            expect(sqlite.statusCode, `${direction} ${index} on SQLite`).to.equal(status);
            expect(postgres.statusCode, `${direction} ${index} on PostgreSQL`).to.equal(status);
            // A transaction's settlement is compared as how long after its created_at it falls.
            const strip = (res: ServerInjectResponse) => {

                const answer = JSON.parse(res.payload) as { created_at?: string; settles_at?: string; settled_at?: string | null };
                const since = (instant?: string | null) => (typeof instant === 'string' ? Date.parse(instant) - Date.parse(answer.created_at!) : instant);
                return { ...answer, id: 'id', created_at: 'created_at', settles_at: since(answer.settles_at), settled_at: since(answer.settled_at) };
            };

            expect(strip(postgres), `${direction} ${index}`).to.equal(strip(sqlite));
            const [replayed, replayedOnPostgres] = await both(request);
            expect([replayed.statusCode, replayedOnPostgres.statusCode], `${direction} ${index} replayed`).to.equal([status, status]);
            expect(strip(replayedOnPostgres)).to.equal(strip(replayed));
        }

        const [sqlite, postgres] = await both((server) => ({ url: '/v1/pay/wallet', headers: bearer(server, 'pat') }));
        const strip = (res: ServerInjectResponse) => ({ ...JSON.parse(res.payload) as object, id: 'id', created_at: 'created_at' });
        expect([sqlite.statusCode, postgres.statusCode]).to.equal([200, 200]);
        expect(strip(postgres)).to.equal(strip(sqlite));
    });
});


describe('the events of one scenario on SQLite and on PostgreSQL', { skip: skipWithoutPostgres('the events parity tests') }, () => {

    const clock = '2031-03-01T09:00:00.000Z';
    const servers: Record<'sqlite' | 'postgres', Server> = {} as Record<'sqlite' | 'postgres', Server>;

    before(async () => {

        servers.sqlite = await testServer({ memoryPay: true, clock });
        const database = await freshDatabase();
        const credentials = await provisionPay(database.url);
        servers.postgres = await testServer({
            databaseUrl: database.url,
            clock,
            pay: { url: credentials.PAY_DB_URL, publishableKey: credentials.PAY_DB_PUBLISHABLE_KEY, secretKey: credentials.PAY_DB_SECRET_KEY }
        });
        servers.postgres.ext('onPostStop', () => database.drop());
    });

    after(async () => {

        await Promise.all(Object.values(servers).map((server) => server.stop()));
    });

    // Every change the API makes an event of, and some it refuses or replays, then a move of the clock past the
    // transitions they made due; answers each event as listed ({id, type, created_at, data}), in the data set's order.
    async function scenario(server: Server): Promise<string[]> {

        const send = async (status: number, as: string, method: string, url: string, payload?: object, key?: string) => {

            const res = await server.inject({ method, url, payload, headers: { ...bearer(server, as), ...(key ? { 'idempotency-key': key } : {}) } });
            expect(res.statusCode, `${method} ${url} as ${as}`).to.equal(status);
            return JSON.parse(res.payload || '{}') as { id: string; data: { id: string }[] };
        };

        const [business] = (await send(200, 'ann', 'GET', '/v1/commerce/businesses?limit=1')).data;
        const [vehicle] = (await send(200, 'ann', 'GET', '/v1/logistics/vehicles?available=true&limit=1')).data;
        const [location] = (await send(200, 'ann', 'GET', '/v1/logistics/locations?limit=1')).data;
        const product = await send(201, 'ann', 'POST', '/v1/commerce/products', { name: 'Tea', description: 'Green', price: 4.5, currency: 'GBP', business_id: business!.id });
        await send(201, 'ben', 'POST', '/v1/commerce/inquiries', { product_id: product.id, message: 'Loose leaf?' });
        await send(422, 'ben', 'POST', '/v1/commerce/products', { name: 'X', description: '', price: 1, currency: 'USD', business_id: 'nobody' });
        for (const [reporter, status] of [['cat', 201], ['dan', 201], ['cat', 409]] as const) {
            await send(status, reporter, 'POST', '/v1/commerce/scam-reports', { target_type: 'business', target_id: business!.id, reason: 'Never opens' });
        }

        const slot = { vehicle_id: vehicle!.id, pickup_location_id: location!.id, dropoff_location_id: location!.id };
        await send(201, 'eve', 'POST', '/v1/logistics/bookings', { ...slot, pickup_at: '2031-03-02T10:00:00Z', return_at: '2031-03-02T12:00:00Z', metadata: { rental: 'RA-1', 'Städte': 'Köln 🚐', '2': 'two' } });
        const cancelled = await send(201, 'eve', 'POST', '/v1/logistics/bookings', { ...slot, pickup_at: '2031-03-05T10:00:00Z', return_at: '2031-03-05T12:00:00Z', metadata: { why: '' } });
        await send(200, 'eve', 'POST', `/v1/logistics/bookings/${cancelled.id}/cancel`);

        await send(201, 'pat', 'POST', '/v1/pay/gateway/deposit', { provider_id: 'sandbox', asset: 'USD', amount: 2500 }, 'k1');
        await send(201, 'pat', 'POST', '/v1/pay/gateway/deposit', { provider_id: 'sandbox', asset: 'USD', amount: 2500 }, 'k1');
        await send(402, 'pat', 'POST', '/v1/pay/gateway/deposit', { provider_id: 'card', asset: 'USD', amount: 402 }, 'k2');
        await send(201, 'pat', 'POST', '/v1/pay/gateway/deposit', { provider_id: 'bank-transfer', asset: 'USD', amount: 700, metadata: { order_id: 'o-3', note: 'Grüße' } }, 'k3');
        await send(201, 'pat', 'POST', '/v1/pay/gateway/deposit', { provider_id: 'bank-transfer', asset: 'USD', amount: 700, metadata: { note: 'Grüße', order_id: 'o-3' } }, 'k3');
        await send(201, 'pat', 'POST', '/v1/pay/gateway/withdraw', { provider_id: 'bank-transfer', asset: 'USD', amount: 399, metadata: { payout: 'p-4' } }, 'k4');
        expect((await server.inject({ method: 'PUT', url: '/_clock', payload: { advance: '3d' }, headers: adminBearer(server) })).statusCode).to.equal(200);

        const logs = await server.app.localgate.data.eventLogs();
        const events = (await Promise.all(logs.map((log) => log.list(null, null, 1000)))).flat().sort((a, b) => a.position - b.position);
        return renameIds(events.map(({ id, type, created_at: createdAt, data }) => `${JSON.stringify({ id, type, created_at: createdAt })} ${data}`));
    }

    it('writes the same events, in the same order, with the same data byte for byte once ids are named by first appearance', { timeout: 30_000 }, async () => {

        const sqlite = await scenario(servers.sqlite);
        const postgres = await scenario(servers.postgres);
        expect(sqlite.map((event) => JSON.parse(event.split(' ')[0]!).type)).to.equal([
            'commerce.product.created', 'commerce.inquiry.created', 'commerce.scam_report.created', 'commerce.business.flagged', 'commerce.scam_report.created',
            'logistics.booking.created', 'logistics.booking.created', 'logistics.booking.cancelled',
            'pay.transaction.created', 'pay.transaction.completed', 'pay.transaction.created', 'pay.transaction.created',
            // Applied in due order across namespaces: the withdrawal returned a day on, the booking, the deposit two days on.
            'pay.transaction.failed', 'logistics.booking.started', 'logistics.booking.completed', 'pay.transaction.completed'
        ]);
        expect(postgres).to.equal(sqlite);
    });
});
