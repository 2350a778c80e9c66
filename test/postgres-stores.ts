import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import type { Server, ServerInjectResponse } from '@hapi/hapi';
import Lab from '@hapi/lab';
import Pg from 'pg';

import { Clock, IdSource, unheard, type RecordContext } from '../lib/record-context';
import type { DomainError } from '../lib/errors';
import type { NewBooking } from '../lib/namespaces/logistics/store';
import { PgCommerceStore } from '../lib/namespaces/commerce/postgres';
import { PgLogisticsStore } from '../lib/namespaces/logistics/postgres';
import { PgNamespace } from '../lib/storage/postgres/namespace';
import { SqliteCommerceStore } from '../lib/namespaces/commerce/sqlite';
import { openSqliteNamespace, type SqliteNamespace } from '../lib/storage/sqlite/namespace';
import { SqliteLogisticsStore } from '../lib/namespaces/logistics/sqlite';
import { engineServer, freshDatabase, insertRecords, skipWithoutPostgres } from './helpers/postgres';
import { bookingLifecycle, frozenContext, offerStatusesOverTime } from './helpers/lifecycle';
import { bearer } from './helpers/server';
import { commerceNamespace } from '../lib/namespaces/commerce';
import { logisticsNamespace } from '../lib/namespaces/logistics';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


const migrationsRoot = Path.join(__dirname, '..', 'migrations');
const skip = skipWithoutPostgres('the PostgreSQL stores');

const commerceDemo = JSON.parse(Fs.readFileSync(Path.join(__dirname, '..', 'data', 'demo', 'commerce.json'), 'utf8')) as Record<string, { id: string; is_available?: boolean; product_id?: string; business_id?: string }[]>;
const logisticsDemo = JSON.parse(Fs.readFileSync(Path.join(__dirname, '..', 'data', 'demo', 'logistics.json'), 'utf8')) as Record<string, { id: string; is_available?: boolean }[]>;

const product = commerceDemo.products![0]!;
const business = commerceDemo.businesses![0]!;
const offer = commerceDemo.offers![0]!;
const vehicle = logisticsDemo.vehicles!.find((row) => row.is_available !== false)!;
const unavailable = logisticsDemo.vehicles!.find((row) => row.is_available === false)!;
const [quay, station] = logisticsDemo.locations!;
const unknownId = '00000000-0000-4000-8000-000000000000';
const dbSettings = { poolMax: 4, connectTimeoutMs: 5000, statementTimeoutMs: 10_000 };


interface Answer {
    statusCode: number;
    total: string | undefined;
    payload: string;
}


// A booking body on a day of its own, so that tests sharing the servers never collide.
function booking(day: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {

    const date = new Date(Date.UTC(2031, 0, 1 + day)).toISOString().slice(0, 10);
    return { vehicle_id: vehicle.id, pickup_location_id: quay!.id, dropoff_location_id: station!.id, pickup_at: `${date}T10:00:00Z`, return_at: `${date}T12:00:00Z`, ...overrides };
}


// The same, as the store takes it: timestamps in toISOString() form.
function slot(day: number): NewBooking {

    const { pickup_at: pickupAt, return_at: returnAt, ...rest } = booking(day) as Record<string, string>;
    return { ...rest, pickup_at: new Date(pickupAt!).toISOString(), return_at: new Date(returnAt!).toISOString(), notes: '', metadata: {} } as NewBooking;
}


function answer(res: ServerInjectResponse): Answer {

    return { statusCode: res.statusCode, total: res.headers['x-total-count'] as string | undefined, payload: res.payload };
}


// A created record without what only its own server decides: its id and created_at.
function made(payload: string): unknown {

    const parse = (record: Record<string, unknown>) => ({ ...record, id: typeof record.id, created_at: typeof record.created_at });
    const value = JSON.parse(payload) as Record<string, unknown> & { data?: Record<string, unknown>[] };
    return value.data ? { ...value, data: value.data.map(parse) } : parse(value);
}


describe('migrations', () => {

    it('every SQLite migration has a PostgreSQL twin of the same name', () => {

        for (const namespace of Fs.readdirSync(Path.join(migrationsRoot, 'sqlite'))) {
            const sqlite = Fs.readdirSync(Path.join(migrationsRoot, 'sqlite', namespace)).filter((file) => file.endsWith('.sql'));
            const postgresDir = Path.join(migrationsRoot, 'postgres', namespace);
            const postgres = Fs.existsSync(postgresDir) ? Fs.readdirSync(postgresDir).filter((file) => file.endsWith('.sql')) : [];
            expect(postgres, namespace).to.equal(sqlite);
        }
    });
});


describe('PostgreSQL stores through the routes', { skip }, () => {

    let pg: Server;
    let lite: Server;

    before(async () => {

        [pg, lite] = await Promise.all([engineServer('postgres'), engineServer('sqlite')]);
    });

    after(async () => {

        await Promise.all([pg?.stop(), lite?.stop()]);
    });

    // The same request on both servers, by the same caller.
    async function both(method: string, url: string, subject = 'alice', payload?: Record<string, unknown>): Promise<[Answer, Answer]> {

        const [onPg, onLite] = await Promise.all([pg, lite].map((server) => server.inject({ method, url, payload, headers: bearer(server, subject) })));
        return [answer(onPg!), answer(onLite!)];
    }

    async function same(method: string, url: string, subject?: string, payload?: Record<string, unknown>): Promise<Answer> {

        const [onPg, onLite] = await both(method, url, subject, payload);
        expect(onPg, `${method} ${url}`).to.equal(onLite);
        return onPg;
    }

    it('lists and reads seeded records byte for byte as SQLite, paging and totals included', async () => {

        const urls = [
            '/v1/logistics/vehicles', '/v1/logistics/vehicles?limit=5&offset=3', '/v1/logistics/vehicles?available=true', '/v1/logistics/vehicles?available=false&limit=1',
            '/v1/logistics/vehicles?offset=1000', `/v1/logistics/vehicles/${vehicle.id}`, `/v1/logistics/vehicles/${unknownId}`,
            '/v1/logistics/locations', '/v1/logistics/locations?limit=2&offset=2', '/v1/logistics/bookings',
            '/v1/commerce/products', '/v1/commerce/products?limit=7&offset=30', '/v1/commerce/products?offset=500', `/v1/commerce/products?business_id=${business.id}`,
            `/v1/commerce/products?business_id=${unknownId}`, `/v1/commerce/products/${product.id}`, `/v1/commerce/products/${unknownId}`,
            '/v1/commerce/businesses', '/v1/commerce/businesses?limit=3&offset=8', `/v1/commerce/businesses/${business.id}`, `/v1/commerce/businesses/${unknownId}`,
            '/v1/commerce/offers', '/v1/commerce/offers?limit=4&offset=2', `/v1/commerce/offers?product_id=${offer.product_id}`, `/v1/commerce/offers?product_id=${unknownId}`,
            `/v1/commerce/inquiries/${unknownId}`, `/v1/commerce/scam-reports/${unknownId}`, `/v1/logistics/bookings/${unknownId}`
        ];

        for (const url of urls) {
            const res = await same('GET', url);
            expect(res.statusCode).to.be.below(500);
        }
    });

    it('books as SQLite does: created, listed, refused for overlap, unknown references and unavailable vehicles', async () => {

        const [first, firstLite] = await both('POST', '/v1/logistics/bookings', 'booker', booking(1, { notes: 'window seat' }));
        expect(first.statusCode).to.equal(201);
        expect(made(first.payload)).to.equal(made(firstLite.payload));
        const created = JSON.parse(first.payload) as { id: string; created_at: string };
        expect(created.created_at).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

        const [second, secondLite] = await both('POST', '/v1/logistics/bookings', 'booker', booking(1, { pickup_at: '2031-01-02T12:00:00Z', return_at: '2031-01-02T13:00:00Z' }));
        expect(second.statusCode).to.equal(201);
        expect(made(second.payload)).to.equal(made(secondLite.payload));
        expect((JSON.parse(second.payload) as { created_at: string }).created_at > created.created_at).to.be.true();

        const overlap = await same('POST', '/v1/logistics/bookings', 'other', booking(1, { pickup_at: '2031-01-02T11:59:00Z' }));
        expect(overlap.statusCode).to.equal(409);
        expect(overlap.payload).to.contain('booking_overlap');

        expect((await same('POST', '/v1/logistics/bookings', 'other', booking(2, { vehicle_id: unknownId }))).statusCode).to.equal(422);
        expect((await same('POST', '/v1/logistics/bookings', 'other', booking(2, { pickup_location_id: unknownId }))).statusCode).to.equal(422);
        expect((await same('POST', '/v1/logistics/bookings', 'other', booking(2, { dropoff_location_id: unknownId }))).statusCode).to.equal(422);
        expect((await same('POST', '/v1/logistics/bookings', 'other', booking(2, { vehicle_id: unavailable.id }))).statusCode).to.equal(409);

        const [list, listLite] = await both('GET', '/v1/logistics/bookings?limit=1&offset=1', 'booker');
        expect(list.total).to.equal('2');
        expect(made(list.payload)).to.equal(made(listLite.payload));
        expect((await same('GET', '/v1/logistics/bookings?offset=5', 'booker')).payload).to.equal('{"data":[],"count":0,"total":2}');

        const mine = await pg.inject({ method: 'GET', url: `/v1/logistics/bookings/${created.id}`, headers: bearer(pg, 'booker') });
        expect(mine.payload).to.equal(first.payload);
        expect((await pg.inject({ method: 'GET', url: `/v1/logistics/bookings/${created.id}`, headers: bearer(pg, 'other') })).statusCode).to.equal(404);
    });

    it('ignores cancelled bookings when checking for overlap', async () => {

        // The cancelled one is written below the API, by another customer.
        const { pickup_at: pickupAt, return_at: returnAt } = slot(30);
        await insertRecords(pg, 'logistics', 'bookings', [{
            id: Crypto.randomUUID(), vehicle_id: vehicle.id, pickup_location_id: quay!.id, dropoff_location_id: quay!.id,
            pickup_at: pickupAt, return_at: returnAt, notes: '', customer_id: 'dave', status: 'cancelled', created_at: new Date().toISOString()
        }]);

        const res = await pg.inject({ method: 'POST', url: '/v1/logistics/bookings', headers: bearer(pg, 'alice'), payload: booking(30) });
        expect(res.statusCode).to.equal(201);
        expect(JSON.parse(res.payload)).to.include({ status: 'confirmed', customer_id: 'alice' });
    });

    it('creates products, inquiries and scam reports as SQLite does, counters and refusals included', async () => {

        const newProduct = { name: 'Harbour loaf', description: 'Sourdough', price: 4.5, currency: 'EUR', business_id: business.id };
        const [createdProduct, createdLite] = await both('POST', '/v1/commerce/products', 'seller', newProduct);
        expect(createdProduct.statusCode).to.equal(201);
        expect(made(createdProduct.payload)).to.equal(made(createdLite.payload));
        expect((await same('POST', '/v1/commerce/products', 'seller', { ...newProduct, business_id: unknownId })).statusCode).to.equal(422);
        expect((await same('GET', '/v1/commerce/products?limit=1')).total).to.equal(String(commerceDemo.products!.length + 1));
        expect((await same('GET', `/v1/commerce/products?business_id=${business.id}&limit=1`)).statusCode).to.equal(200);

        for (const payload of [{ product_id: product.id, message: 'Still fresh?' }, { business_id: business.id, message: 'Open on Sunday?' }]) {
            const [inquiry, inquiryLite] = await both('POST', '/v1/commerce/inquiries', 'buyer', payload);
            expect(inquiry.statusCode).to.equal(201);
            expect(made(inquiry.payload)).to.equal(made(inquiryLite.payload));
            const { id } = JSON.parse(inquiry.payload) as { id: string };
            expect((await pg.inject({ method: 'GET', url: `/v1/commerce/inquiries/${id}`, headers: bearer(pg, 'buyer') })).payload).to.equal(inquiry.payload);
        }

        expect((await same('POST', '/v1/commerce/inquiries', 'buyer', { product_id: unknownId, message: 'Hello?' })).statusCode).to.equal(422);
        expect((await same('POST', '/v1/commerce/inquiries', 'buyer', { business_id: unknownId, message: 'Hello?' })).statusCode).to.equal(422);

        for (const [targetType, target] of [['product', product], ['business', business], ['offer', offer]] as const) {
            const report = { target_type: targetType, target_id: target.id, reason: 'Never delivered' };
            const [created, createdReportLite] = await both('POST', '/v1/commerce/scam-reports', 'reporter', report);
            expect(created.statusCode).to.equal(201);
            expect(made(created.payload)).to.equal(made(createdReportLite.payload));
            const { id } = JSON.parse(created.payload) as { id: string };
            expect((await pg.inject({ method: 'GET', url: `/v1/commerce/scam-reports/${id}`, headers: bearer(pg, 'reporter') })).payload).to.equal(created.payload);

            const duplicate = await same('POST', '/v1/commerce/scam-reports', 'reporter', report);
            expect(duplicate.statusCode).to.equal(409);
            expect(duplicate.payload).to.contain('duplicate_scam_report');
            expect((await same('POST', '/v1/commerce/scam-reports', 'reporter', { ...report, target_id: unknownId })).statusCode).to.equal(422);
        }

        // The counters the triggers keep read the same on both.
        await same('GET', `/v1/commerce/products/${product.id}`);
        await same('GET', `/v1/commerce/businesses/${business.id}`);
        await same('GET', `/v1/commerce/offers?product_id=${offer.product_id}`);
    });
});


describe('PostgreSQL stores on a frozen clock', { skip }, () => {

    let databases: Awaited<ReturnType<typeof freshDatabase>>[] = [];
    let namespaces: (PgNamespace | SqliteNamespace)[] = [];

    after(async () => {

        await Promise.all(namespaces.map((namespace) => namespace.close()));
        await Promise.all(databases.map((database) => database.drop()));
        namespaces = [];
        databases = [];
    });

    // A context whose clock stands still and whose ids count from the given number on.
    function frozen(counter = 0): RecordContext {

        const ids = new IdSource('sequential');
        ids.counter = counter;
        return { clock: new Clock(new Date('2031-03-01T09:00:00.000Z')), ids, committed: unheard };
    }

    async function fresh(): Promise<string> {

        const database = await freshDatabase();
        databases.push(database);
        return database.url;
    }

    const units = { commerce: commerceNamespace, logistics: logisticsNamespace };

    async function open(namespace: 'commerce' | 'logistics', url: string): Promise<[PgNamespace, SqliteNamespace]> {

        const pair: [PgNamespace, SqliteNamespace] = [
            await PgNamespace.open(units[namespace], url, dbSettings, true),
            openSqliteNamespace(units[namespace], undefined, { storage: 'memory', dataDir: ':memory:', seed: true })
        ];

        namespaces.push(...pair);
        return pair;
    }

    it('makes the same records, ids and times as SQLite', async () => {

        const url = await fresh();
        const [pgCommerce, liteCommerce] = await open('commerce', url);
        const [pgLogistics, liteLogistics] = await open('logistics', url);
        const stores = [
            { commerce: new PgCommerceStore(pgCommerce.db, frozen()), logistics: new PgLogisticsStore(pgLogistics.db, frozen()) },
            { commerce: new SqliteCommerceStore(liteCommerce.db, frozen()), logistics: new SqliteLogisticsStore(liteLogistics.db, frozen()) }
        ];

        const results = await Promise.all(stores.map(async ({ commerce, logistics }) => [
            await commerce.createProduct({ name: 'Kit', description: '', price: 1250, currency: 'JPY', business_id: business.id }, 'seller'),
            await commerce.createProduct({ name: 'Kit 2', description: '', price: 12.5, currency: 'USD', business_id: business.id }, 'seller'),
            await commerce.createInquiry({ product_id: product.id, message: 'Hi' }, 'buyer'),
            await commerce.createScamReport({ target_type: 'offer', target_id: offer.id, reason: 'Fake' }, 'reporter'),
            await logistics.createBooking('booker', slot(40)),
            await logistics.createBooking('booker', slot(41)),
            await logistics.listBookings('booker', { limit: 10, offset: 0 })
        ]));

        expect(JSON.stringify(results[0])).to.equal(JSON.stringify(results[1]));
        const stamps = results[0]!.flatMap((result) => ('data' in result ? result.data : [result])).map((record) => record.created_at);
        expect(stamps).to.equal(stamps.map(() => '2031-03-01T09:00:00.000Z'));
    });

    it('answers the constraints that back the rules with the rules\' own errors', async () => {

        const url = await fresh();
        const [pgCommerce] = await open('commerce', url);
        const [pgLogistics] = await open('logistics', url);
        const commerce = new PgCommerceStore(pgCommerce.db, frozen());
        const logistics = new PgLogisticsStore(pgLogistics.db, frozen());

        // A writer that takes no lock and checks nothing holds a conflicting row while the store decides.
        const bypass = async (schema: string, text: string, values: unknown[], work: () => Promise<unknown>): Promise<unknown> => {

            const client = new Pg.Client({ connectionString: url, options: `-c search_path=${schema},public` });
            await client.connect();
            try {
                await client.query('BEGIN');
                await client.query('SET LOCAL session_replication_role = replica');
                await client.query(text, values);
                const outcome = work().then(() => null, (err: unknown) => err);
                // Committed once the store waits on the row.
                for (let i = 0; ; ++i) {
                    const waiting = await client.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND application_name = 'localgate ${schema}'`);
                    if (waiting.rowCount || i > 200) {
                        break;
                    }

                    await new Promise((resolve) => setTimeout(resolve, 10));
                }

                await client.query('COMMIT');
                return await outcome;
            }
            finally {
                await client.end();
            }
        };

        const taken50 = slot(50);
        const overlap = await bypass('logistics', `INSERT INTO bookings (id, vehicle_id, pickup_location_id, dropoff_location_id, pickup_at, return_at, notes, customer_id, status, created_at)
            VALUES ('raw', $1, $2, $2, '2031-02-20T09:00:00.000Z', '2031-02-20T11:00:00.000Z', '', 'raw', 'confirmed', '2031-01-01T00:00:00.000Z')`,
        [vehicle.id, quay!.id], () => logistics.createBooking('booker', taken50)) as DomainError;
        expect(overlap.code).to.equal('booking_overlap');

        const duplicate = await bypass('commerce', `INSERT INTO scam_reports (id, target_type, target_id, reason, reporter_id, created_at)
            VALUES ('raw', 'product', $1, 'Fake', 'reporter', '2031-01-01T00:00:00.000Z')`,
        [product.id], () => commerce.createScamReport({ target_type: 'product', target_id: product.id, reason: 'Fake' }, 'reporter')) as DomainError;
        expect(duplicate.code).to.equal('duplicate_scam_report');

        // Other violations stay the engine's generic answers: an id already taken (the refused writes above used id 1).
        await logistics.createBooking('booker', slot(52));
        const taken = await new PgLogisticsStore(pgLogistics.db, frozen(1)).createBooking('booker', slot(51)).catch((err: unknown) => err) as DomainError;
        expect(taken.code).to.equal('conflict');
        await commerce.createScamReport({ target_type: 'business', target_id: business.id, reason: 'Fake' }, 'reporter');
        const reportTaken = await new PgCommerceStore(pgCommerce.db, frozen(1)).createScamReport({ target_type: 'offer', target_id: offer.id, reason: 'Fake' }, 'reporter').catch((err: unknown) => err) as DomainError;
        expect(reportTaken.code).to.equal('conflict');
    });

    it('moves bookings and reads offers with the clock as SQLite does: reads, due instants and transitions', async () => {

        const url = await fresh();
        const [pgCommerce, liteCommerce] = await open('commerce', url);
        const [pgLogistics, liteLogistics] = await open('logistics', url);
        const contexts = [0, 1].map(() => [frozenContext('2031-03-01T09:00:00.000Z'), frozenContext('2026-01-01T00:00:00.000Z')] as const);
        const [onPg, onLite] = await Promise.all([
            Promise.all([bookingLifecycle(new PgLogisticsStore(pgLogistics.db, contexts[0]![0]), contexts[0]![0].clock), offerStatusesOverTime(new PgCommerceStore(pgCommerce.db, contexts[0]![1]), contexts[0]![1].clock)]),
            Promise.all([bookingLifecycle(new SqliteLogisticsStore(liteLogistics.db, contexts[1]![0]), contexts[1]![0].clock), offerStatusesOverTime(new SqliteCommerceStore(liteCommerce.db, contexts[1]![1]), contexts[1]![1].clock)])
        ]);

        expect(JSON.stringify(onPg)).to.equal(JSON.stringify(onLite));
        expect(await pgLogistics.db.rows({ name: '', text: 'SELECT status, count(*)::int AS n FROM bookings GROUP BY status ORDER BY status' })).to.equal([{ status: 'cancelled', n: 1 }, { status: 'completed', n: 2 }]);
        // An offer's end is a read: nothing is stored.
        expect(await pgCommerce.db.rows({ name: '', text: 'SELECT DISTINCT status FROM offers' })).to.equal([{ status: 'valid' }]);
    });

    it('applies each transition once when two processes\' stores apply at once over one schema', { timeout: 20_000 }, async () => {

        const url = await fresh();
        const [first] = await open('logistics', url);
        const second = await PgNamespace.open(logisticsNamespace, url, dbSettings, true);
        namespaces.push(second);

        // Forty bookings of one vehicle, a day each, all in the clock's past by the time they are applied.
        const booker = new PgLogisticsStore(first.db, frozen());
        for (let i = 0; i < 40; ++i) {
            await booker.createBooking('booker', slot(60 + i));
        }

        const until = new Date('2040-01-01T00:00:00.000Z');
        const stores = [new PgLogisticsStore(first.db, frozen()), new PgLogisticsStore(second.db, frozen())];
        const applied = (await Promise.all(stores.map((store) => store.applyDue(until, 1000)))).flat();

        const keys = applied.map((transition) => `${transition.type} ${transition.id}`);
        expect(new Set(keys).size).to.equal(keys.length);
        expect(keys.filter((key) => key.startsWith('logistics.booking.started')).length).to.equal(40);
        expect(keys.filter((key) => key.startsWith('logistics.booking.completed')).length).to.equal(40);
        expect(await stores[0]!.nextDue()).to.be.null();
        expect(await stores[1]!.nextDue()).to.be.null();
        expect(await first.db.rows({ name: '', text: 'SELECT DISTINCT status FROM bookings' })).to.equal([{ status: 'completed' }]);
    });
});
