import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { Clock, IdSource, unheard, type Commit, type RecordContext } from '../lib/record-context';
import { eventTypesOf, matchesType, typePattern, type StoredEndpoint, type StoredEvent } from '../lib/outbox';
// The namespaces through their list, which loads them in its order (loading one alone first closes a cycle through the settings).
import { builtInNamespaces } from '../lib/namespaces';
import type { CommerceStore } from '../lib/namespaces/commerce/store';
import type { LogisticsStore } from '../lib/namespaces/logistics/store';
import type { PayStore } from '../lib/namespaces/pay/store';
import type { EventLog } from '../lib/storage/engine';
import { eventWriter, queries } from '../lib/storage/postgres/events';
import { PgNamespace } from '../lib/storage/postgres/namespace';
import { openSqliteNamespace } from '../lib/storage/sqlite/namespace';
import { freshDatabase, skipWithoutPostgres, type TestDatabase } from './helpers/postgres';


export const lab = Lab.script();

// Every event type the built-in namespaces and the events feature write.
const eventTypes = eventTypesOf(builtInNamespaces);
const { describe, it, afterEach } = lab;
const { expect } = Code;


const skip = skipWithoutPostgres('the PostgreSQL events');
const dbSettings = { poolMax: 4, connectTimeoutMs: 5000, statementTimeoutMs: 10_000 };

const demoOf = (name: string) => JSON.parse(Fs.readFileSync(Path.join(__dirname, '..', 'data', 'demo', `${name}.json`), 'utf8')) as Record<string, Record<string, unknown>[]>;
const commerceDemo = demoOf('commerce');
const logisticsDemo = demoOf('logistics');
const business = String(commerceDemo.businesses![0]!.id);
const product = String(commerceDemo.products![0]!.id);
const vehicle = String(logisticsDemo.vehicles!.find((row) => row.is_available !== false)!.id);
const location = String(logisticsDemo.locations![0]!.id);

const start = '2031-03-01T09:00:00.000Z';
const [commerceNamespace, logisticsNamespace, payNamespace] = ['commerce', 'logistics', 'pay'].map((name) => builtInNamespaces.find((namespace) => namespace.name === name)!);


/** The namespaces of one data set on one database: their stores and event logs, all on one frozen clock and id source. */
interface DataSetStores {
    context: RecordContext;
    databases: Record<'commerce' | 'logistics' | 'pay', PgNamespace>;
    commerce: CommerceStore;
    logistics: LogisticsStore;
    pay: PayStore;
    logs: Record<'commerce' | 'logistics' | 'pay', EventLog>;
}


function endpoint(id: string, ordinal: number, types: StoredEndpoint['types'], retry = [60_000]): StoredEndpoint {

    return { id, ordinal, url: `http://127.0.0.1:9/${id}`, types, secret: 'whsec_c2VjcmV0', signing_clock: 'wall', retry_schedule: retry, created_at: start, delivered: 0, failed: 0,
        disabled_at: null, disabled_reason: null, given_up_in_a_row: 0, previous_secret: null, previous_secret_until: null };
}


// Every event of a log, oldest first.
function all(log: EventLog): Promise<StoredEvent[]> {

    return log.list(null, null, 1000);
}


describe('events on PostgreSQL', { skip }, () => {

    const databases: TestDatabase[] = [];
    const opened: { close(): Promise<void> }[] = [];

    afterEach(async () => {

        await Promise.all(opened.splice(0).map((namespace) => namespace.close()));
        await Promise.all(databases.splice(0).map((database) => database.drop()));
    });

    async function fresh(): Promise<string> {

        const database = await freshDatabase();
        databases.push(database);
        return database.url;
    }

    async function open(url: string, eventsKept?: number): Promise<DataSetStores['databases']> {

        const [commerce, logistics, pay] = await Promise.all([commerceNamespace!, logisticsNamespace!, payNamespace!].map(async (namespace) => {

            const database = await PgNamespace.open(namespace, url, dbSettings, true, eventsKept);
            opened.push(database);
            return database;
        }));

        return { commerce: commerce!, logistics: logistics!, pay: pay! };
    }

    // One data set's stores over a database (a fresh one unless named), as one process holds them.
    async function dataSet(url?: string, context: RecordContext = { clock: new Clock(new Date(start)), ids: new IdSource('sequential'), committed: unheard }): Promise<DataSetStores> {

        const namespaces = await open(url ?? await fresh());
        return {
            context,
            databases: namespaces,
            commerce: namespaces.commerce.store(context) as CommerceStore,
            logistics: namespaces.logistics.store(context) as LogisticsStore,
            pay: namespaces.pay.store(context) as PayStore,
            logs: {
                commerce: namespaces.commerce.eventLog('commerce', context),
                logistics: namespaces.logistics.eventLog('logistics', context),
                pay: namespaces.pay.eventLog('pay', context)
            }
        };
    }

    // A booking of the demo vehicle from 10:00 to 12:00 on a day of March 2031 (0: the 2nd).
    function book(store: LogisticsStore, day: number): ReturnType<LogisticsStore['createBooking']> {

        const at = (hour: number) => new Date(Date.UTC(2031, 2, 2 + day, hour)).toISOString();
        return store.createBooking('booker', { vehicle_id: vehicle, pickup_location_id: location, dropoff_location_id: location, pickup_at: at(10), return_at: at(12), notes: '', metadata: {} });
    }

    // A number of changes, each writing one event: products of the demo business.
    async function products(store: CommerceStore, count: number): Promise<void> {

        for (let i = 0; i < count; ++i) {
            await store.createProduct({ name: `Product ${i}`, description: '', price: 1, currency: 'USD', business_id: business }, 'seller');
        }
    }

    it('writes the event of each change with the record as its owner reads it, in the data set\'s order across namespaces', async () => {

        const { commerce, logistics, pay, logs, context } = await dataSet();
        const told: Commit[] = [];
        context.committed = (commit) => told.push(commit);
        const made = await commerce.createProduct({ name: 'Tea', description: 'Green', price: 4.5, currency: 'GBP', business_id: business }, 'seller');
        const inquiry = await commerce.createInquiry({ product_id: product, message: 'Loose leaf?' }, 'buyer');
        const onProduct = await commerce.createScamReport({ target_type: 'product', target_id: product, reason: 'Fake' }, 'reporter');
        const first = await commerce.createScamReport({ target_type: 'business', target_id: business, reason: 'Never opens' }, 'reporter');
        const flagged = await commerce.getBusiness(business);
        // A second reporter finds the business flagged already: no second crossing.
        const again = await commerce.createScamReport({ target_type: 'business', target_id: business, reason: 'Closed' }, 'other');

        const booking = await book(logistics, 0);
        const cancelled = await logistics.cancelBooking('booker', (await book(logistics, 2)).id);
        context.clock.freeze(new Date('2031-03-03T00:00:00.000Z'));
        await logistics.applyDue(context.clock.now(), 10);

        context.clock.freeze(new Date(start));
        const instant = await pay.deposit('payer', { idempotencyKey: 'k1', providerId: 'sandbox', asset: 'USD', amount: 100, metadata: {} });
        const replayed = await pay.deposit('payer', { idempotencyKey: 'k1', providerId: 'sandbox', asset: 'USD', amount: 100, metadata: {} });
        expect(replayed.replayed).to.be.true();
        const declined = await pay.deposit('payer', { idempotencyKey: 'k2', providerId: 'card', asset: 'USD', amount: 402, metadata: {} });
        expect('refusal' in declined).to.be.true();
        const pending = await pay.deposit('payer', { idempotencyKey: 'k3', providerId: 'bank-transfer', asset: 'USD', amount: 700, metadata: {} });
        const returned = await pay.deposit('payer', { idempotencyKey: 'k4', providerId: 'bank-transfer', asset: 'USD', amount: 399, metadata: {} });
        await pay.applyDue(new Date('2031-03-10T00:00:00.000Z'), 10);

        const events = [...await all(logs.commerce), ...await all(logs.logistics), ...await all(logs.pay)];
        const shown = events.map(({ position, id, type, created_at: createdAt, data }) => ({ position, id, type, created_at: createdAt, data: JSON.parse(data) as unknown }));
        const transaction = (outcome: typeof instant) => ('transaction' in outcome ? outcome.transaction : null);
        const settled = (outcome: typeof instant) => pay.getTransaction('payer', transaction(outcome)!.id);
        const expected = [
            ['commerce.product.created', start, made],
            ['commerce.inquiry.created', start, inquiry],
            ['commerce.scam_report.created', start, onProduct],
            ['commerce.scam_report.created', start, first],
            ['commerce.business.flagged', start, flagged],
            ['commerce.scam_report.created', start, again],
            ['logistics.booking.created', start, booking],
            ['logistics.booking.created', start, { ...cancelled, status: 'confirmed' }],
            ['logistics.booking.cancelled', start, cancelled],
            ['logistics.booking.started', '2031-03-02T10:00:00.000Z', { ...booking, status: 'active' }],
            ['logistics.booking.completed', '2031-03-02T12:00:00.000Z', { ...booking, status: 'completed' }],
            ['pay.transaction.created', start, transaction(instant)],
            ['pay.transaction.completed', start, transaction(instant)],
            ['pay.transaction.created', start, transaction(pending)],
            ['pay.transaction.created', start, transaction(returned)],
            ['pay.transaction.completed', '2031-03-03T09:00:00.000Z', await settled(pending)],
            ['pay.transaction.failed', '2031-03-03T09:00:00.000Z', await settled(returned)]
        ];

        expect(shown.map(({ type, created_at: createdAt, data }) => [type, createdAt, data])).to.equal(expected);
        expect(shown.map(({ position }) => position)).to.equal(expected.map((_, index) => index + 1));
        expect(shown.map(({ id }) => id)).to.equal(expected.map((_, index) => `00000000-0000-4000-9000-${(index + 1).toString(16).padStart(12, '0')}`));
        expect(told.reduce((sum, commit) => sum + commit.events, 0)).to.equal(17);
        expect(await logs.logistics.lastPosition()).to.equal(11);
        expect(await logs.pay.positionOf(shown[16]!.id)).to.equal(17);
        expect(await logs.commerce.positionOf(shown[16]!.id)).to.be.null();
    });

    it('writes no event for a refused or rolled-back change, and none for a seed', async () => {

        const { commerce, databases: namespaces, logs, context } = await dataSet();
        expect(await logs.commerce.lastPosition()).to.equal(0);
        await expect(commerce.createProduct({ name: 'X', description: '', price: 1, currency: 'USD', business_id: 'nobody' }, 'seller')).to.reject();
        await expect(namespaces.commerce.db.transaction(async (tx) => {

            await eventWriter(namespaces.commerce.db).write(tx, context, { type: 'commerce.product.created', created_at: start, data: {} });
            throw new Error('rolled back');
        })).to.reject('rolled back');

        expect(await all(logs.commerce)).to.equal([]);
        await products(commerce, 1);
        // The rolled-back write took a position of the sequence: positions have gaps, never repeats.
        expect((await all(logs.commerce)).map(({ position }) => position)).to.equal([2]);
    });

    it('lists after a position, by exact types and prefixes, up to a limit', async () => {

        const { commerce, logistics, logs } = await dataSet();
        await products(commerce, 3);
        await commerce.createInquiry({ business_id: business, message: 'Open?' }, 'buyer');
        await book(logistics, 0);

        const types = async (after: number | null, patterns: string[] | null, limit = 100) => (await logs.commerce.list(after, patterns && patterns.map(typePattern), limit)).map(({ position, type }) => `${position} ${type}`);
        expect(await types(null, null)).to.equal(['1 commerce.product.created', '2 commerce.product.created', '3 commerce.product.created', '4 commerce.inquiry.created']);
        expect(await types(2, null)).to.equal(['3 commerce.product.created', '4 commerce.inquiry.created']);
        expect(await types(null, null, 1)).to.equal(['1 commerce.product.created']);
        expect(await types(null, ['commerce.inquiry.created'])).to.equal(['4 commerce.inquiry.created']);
        expect(await types(1, ['commerce.product.*'])).to.equal(['2 commerce.product.created', '3 commerce.product.created']);
        expect(await types(null, ['*'], 2)).to.equal(['1 commerce.product.created', '2 commerce.product.created']);
        expect(await types(null, ['logistics.*', 'pay.transaction.created'])).to.equal([]);
        expect(await types(4, null)).to.equal([]);
        expect((await logs.logistics.list(null, null, 10)).map(({ position }) => position)).to.equal([5]);
    });

    it('filters a list by type as the shared model matches types', async () => {

        const { databases: namespaces, logs, context } = await dataSet();
        const { db } = namespaces.commerce;
        await db.transaction(async (tx) => {

            for (const type of eventTypes) {
                await eventWriter(db).write(tx, context, { type, created_at: start, data: {} });
            }
        });

        for (const asked of [['*'], ['pay.*'], ['pay.transaction.failed', 'logistics.*'], ['commerce.business.flagged'], ['webhook.*'], ['commerce.']]) {
            const patterns = asked.map(typePattern);
            expect((await logs.commerce.list(null, patterns, 100)).map(({ type }) => type), asked.join()).to.equal(eventTypes.filter((type) => matchesType(type, patterns)));
        }
    });

    it('writes deliveries to the endpoints whose patterns match, due at the event\'s instant, and none of the dispatcher\'s own', async () => {

        const { commerce, logistics, logs, databases: namespaces, context } = await dataSet();
        const endpoints = [endpoint('every', 0, null), endpoint('products', 1, [{ pattern: 'commerce.product.created', prefix: false }]),
            endpoint('commerce', 2, [{ pattern: 'commerce.', prefix: true }, { pattern: 'commerce.', prefix: true }]), endpoint('pay', 3, [{ pattern: 'pay.', prefix: true }]),
            endpoint('star', 4, [{ pattern: '', prefix: true }])];
        await Promise.all(Object.values(logs).map((log) => log.replaceEndpoints(endpoints)));
        expect(await logs.pay.endpoints()).to.equal(endpoints);

        await products(commerce, 1);
        await commerce.createInquiry({ business_id: business, message: 'Open?' }, 'buyer');
        await book(logistics, 0);
        await namespaces.logistics.db.transaction((tx) => eventWriter(namespaces.logistics.db).write(tx, context, { type: 'webhook.delivery.given_up', created_at: start, data: {} }));

        const deliveries = (namespace: PgNamespace) => {

            return namespace.db.rows<[], { row: string }>({ name: '', text: `SELECT event_position || ' ' || endpoint_id || ' ' || attempts || ' ' || state || ' ' || due_at || ' ' || coalesce(leased_until, '-') AS row
                FROM webhook_deliveries ORDER BY event_position, endpoint_id` });
        };

        expect((await deliveries(namespaces.commerce)).map(({ row }) => row)).to.equal([
            `1 commerce 0 pending ${start} -`, `1 every 0 pending ${start} -`, `1 products 0 pending ${start} -`, `1 star 0 pending ${start} -`,
            `2 commerce 0 pending ${start} -`, `2 every 0 pending ${start} -`, `2 star 0 pending ${start} -`
        ]);
        expect((await deliveries(namespaces.logistics)).map(({ row }) => row)).to.equal([`3 every 0 pending ${start} -`, `3 star 0 pending ${start} -`]);
        expect(await logs.logistics.nextDue()).to.equal(new Date(start));
        expect(await logs.pay.nextDue()).to.be.null();

        // Replacing keeps an endpoint that stays (its deliveries and counts) and drops the others' deliveries.
        const kept = { ...endpoint('every', 0, [{ pattern: 'logistics.', prefix: true }]), url: 'http://localhost:9/moved' };
        await logs.commerce.replaceEndpoints([kept, endpoint('new', 1, null)]);
        expect(await logs.commerce.endpoints()).to.equal([kept, endpoint('new', 1, null)]);
        expect((await deliveries(namespaces.commerce)).map(({ row }) => row)).to.equal([`1 every 0 pending ${start} -`, `2 every 0 pending ${start} -`]);
        await logs.commerce.replaceEndpoints([]);
        expect(await logs.commerce.endpoints()).to.equal([]);
        expect(await deliveries(namespaces.commerce)).to.equal([]);
        expect(await logs.commerce.nextDue()).to.be.null();
    });

    it('claims due attempts earliest first, ties by position then endpoint order, each leased until its lease ends', async () => {

        const { commerce, logs, context } = await dataSet();
        await logs.commerce.replaceEndpoints([endpoint('b', 0, null), endpoint('a', 1, null)]);
        await products(commerce, 2);
        context.clock.freeze(new Date('2031-03-01T08:00:00.000Z'));
        await products(commerce, 1);

        const wallSoon = new Date(Date.now() + 60_000);
        const claimed = (attempts: { event: StoredEvent; endpoint: StoredEndpoint; attempt: number; due_at: string }[]) => attempts.map(({ event, endpoint: { id }, attempt, due_at: dueAt }) => `${event.position} ${id} ${attempt} ${dueAt}`);
        expect(claimed(await logs.commerce.claimDue(new Date('2031-03-01T07:59:59.999Z'), 10, wallSoon))).to.equal([]);
        expect(claimed(await logs.commerce.claimDue(new Date(start), 3, wallSoon))).to.equal(['3 b 1 2031-03-01T08:00:00.000Z', '3 a 1 2031-03-01T08:00:00.000Z', `1 b 1 ${start}`]);
        // Leased: the next claim skips them until the lease ends.
        const rest = await logs.commerce.claimDue(new Date(start), 10, new Date(Date.now() - 1));
        expect(claimed(rest)).to.equal([`1 a 1 ${start}`, `2 b 1 ${start}`, `2 a 1 ${start}`]);
        expect(rest[0]!.event).to.equal((await all(logs.commerce))[0]!);
        expect(rest[0]!.endpoint).to.equal(endpoint('a', 1, null));
        // A lease that has ended (the last claim's) lets them be claimed again.
        expect(claimed(await logs.commerce.claimDue(new Date(start), 10, wallSoon))).to.equal([`1 a 1 ${start}`, `2 b 1 ${start}`, `2 a 1 ${start}`]);
        expect(await logs.commerce.claimDue(new Date(start), 10, wallSoon)).to.equal([]);
    });

    it('renews the leases a process holds on attempts not made yet, but not one recorded since or claimed by another process once its lease had passed', async () => {

        const url = await fresh();
        const one = await dataSet(url);
        const two = await dataSet(url);
        await one.logs.commerce.replaceEndpoints([endpoint('a', 0, null), endpoint('b', 1, null)]);
        await products(one.commerce, 2);

        // A claim whose lease has passed by the time its attempts' turns come.
        const claimed = await one.logs.commerce.claimDue(new Date(start), 10, new Date(Date.now() - 1));
        const held = claimed.map(({ event, endpoint: { id }, attempt, leased_until: lease }) => ({ position: event.position, endpoint_id: id, attempt, leased_until: lease }));
        expect(held.map(({ position, endpoint_id: id }) => `${position} ${id}`)).to.equal(['1 a', '1 b', '2 a', '2 b']);
        await one.logs.commerce.record({ position: 1, endpoint_id: 'a', attempt: 1, delivered: true, next_due_at: null, given_up: null });
        // The other process takes the next one over: its lease had passed.
        const far = new Date(Date.now() + 60_000);
        expect((await two.logs.commerce.claimDue(new Date(start), 1, far)).map(({ event, endpoint: { id }, leased_until: lease }) => [event.position, id, lease])).to.equal([[1, 'b', far.toISOString()]]);

        const renewed = await one.logs.commerce.renewLeases(held, far);
        expect(renewed).to.equal([held[2]!, held[3]!]);
        // Renewed: the other process claims none of them; a renewal under a lease the rows no longer hold, or for
        // another attempt, renews nothing.
        expect(await two.logs.commerce.claimDue(new Date(start), 10, far)).to.equal([]);
        expect(await one.logs.commerce.renewLeases(renewed, far)).to.equal([]);
        const now = renewed.map((lease) => ({ ...lease, leased_until: far.toISOString() }));
        expect(await one.logs.commerce.renewLeases([{ ...now[0]!, attempt: 2 }], new Date(Date.now() + 1000))).to.equal([]);
        expect(await one.logs.commerce.renewLeases(now, new Date(Date.now() + 1000))).to.equal(now);
        expect(await one.logs.commerce.renewLeases(now, far)).to.equal([]);
    });

    it('records an attempt once: delivered, due again, or given up with its event written in the same transaction', async () => {

        const { commerce, logs } = await dataSet();
        await logs.commerce.replaceEndpoints([endpoint('ok', 0, null), endpoint('down', 1, null, [5000])]);
        await products(commerce, 1);
        const lease = new Date(Date.now() + 60_000);
        await logs.commerce.claimDue(new Date(start), 10, lease);

        const delivered = { position: 1, endpoint_id: 'ok', attempt: 1, delivered: true, next_due_at: null, given_up: null };
        expect(await logs.commerce.record(delivered)).to.equal(0);
        expect(await logs.commerce.record(delivered)).to.equal(null);

        const retry = { position: 1, endpoint_id: 'down', attempt: 1, delivered: false, next_due_at: '2031-03-01T09:00:05.000Z', given_up: null };
        expect(await logs.commerce.record(retry)).to.equal(0);
        expect(await logs.commerce.record({ ...retry, attempt: 3 })).to.equal(null);
        expect(await logs.commerce.nextDue()).to.equal(new Date('2031-03-01T09:00:05.000Z'));
        // Recorded: the lease is gone, and the next attempt is claimed once due.
        expect(await logs.commerce.claimDue(new Date(start), 10, lease)).to.equal([]);
        const [second] = await logs.commerce.claimDue(new Date('2031-03-01T09:00:05.000Z'), 10, lease);
        expect(second).to.include({ attempt: 2, due_at: '2031-03-01T09:00:05.000Z' });

        const data = { webhook_id: 'msg_x', endpoint_id: 'down', event_id: second!.event.id, event_type: 'commerce.product.created', attempts: 2 };
        const givenUp = { position: 1, endpoint_id: 'down', attempt: 2, delivered: false, next_due_at: null, given_up: { created_at: '2031-03-01T09:00:05.000Z', data } };
        expect(await logs.commerce.record(givenUp)).to.equal(0);
        expect(await logs.commerce.record(givenUp)).to.equal(null);

        const events = await all(logs.commerce);
        expect(events.map(({ type }) => type)).to.equal(['commerce.product.created', 'webhook.delivery.given_up']);
        expect(events[1]).to.include({ position: 2, created_at: '2031-03-01T09:00:05.000Z', data: JSON.stringify(data) });
        expect((await logs.commerce.endpoints()).map(({ id, delivered: yes, failed }) => [id, yes, failed])).to.equal([['ok', 1, 0], ['down', 0, 2]]);
        expect(await logs.commerce.nextDue()).to.be.null();
    });

    it('prunes the events more than EVENTS_KEPT positions old as a write passes a multiple of 100, but those with a delivery pending', async () => {

        // EVENTS_KEPT 3: the pools' writers keep what their namespace was opened with.
        const namespaces = await open(await fresh(), 3);
        const context = { clock: new Clock(new Date(start)), ids: new IdSource('sequential'), committed: unheard };
        expect(eventWriter(namespaces.commerce.db, 10_000)).to.shallow.equal(eventWriter(namespaces.commerce.db));
        const log = namespaces.commerce.eventLog('commerce', context);
        const store = namespaces.commerce.store(context) as CommerceStore;

        const inquiries = endpoint('i', 0, [{ pattern: 'commerce.inquiry.created', prefix: false }]);
        await products(store, 2);
        await log.replaceEndpoints([inquiries]);
        await store.createInquiry({ business_id: business, message: 'Open?' }, 'buyer');
        await log.replaceEndpoints([inquiries, endpoint('p', 1, [{ pattern: 'commerce.product.', prefix: true }])]);
        await products(store, 1);
        await log.claimDue(new Date(start), 10, new Date(Date.now() + 60_000));
        expect(await log.record({ position: 4, endpoint_id: 'p', attempt: 1, delivered: true, next_due_at: null, given_up: null })).to.equal(0);

        // Another namespace on the database took positions 5 to 98 of the shared sequence; commerce's next write is 99.
        await namespaces.logistics.db.exec(`SELECT setval('public.localgate_event_positions', 98)`);
        await products(store, 1);
        expect((await all(log)).map(({ position }) => position)).to.equal([1, 2, 3, 4, 99]);
        // 100 passes the multiple: before 97, only the event with a delivery pending (3) stays.
        await products(store, 1);
        expect((await all(log)).map(({ position }) => position)).to.equal([3, 99, 100]);
    });

    it('numbers the events of the namespaces on one database from one sequence, made once whichever migrates first', async () => {

        const url = await fresh();
        // Two processes start at once: each namespace's events migration creates the sequence if it is missing.
        const [first, second] = await Promise.all([dataSet(url), dataSet(url, { clock: new Clock(new Date(start)), ids: new IdSource(), committed: unheard })]);
        await products(first.commerce, 1);
        await book(second.logistics, 0);
        await products(second.commerce, 1);
        expect((await all(first.logs.commerce)).map(({ position }) => position)).to.equal([1, 3]);
        expect(await first.logs.logistics.lastPosition()).to.equal(2);
    });

    it('places the events of a namespace on SQLite after those its data set wrote on PostgreSQL', async () => {

        const { context, commerce, logs } = await dataSet();
        const sqlite = openSqliteNamespace(logisticsNamespace!, undefined, { storage: 'memory', dataDir: ':memory:', seed: true });
        opened.push(sqlite);
        await products(commerce, 3);
        await book(sqlite.store(context) as LogisticsStore, 0);
        expect((await all(logs.commerce)).map(({ position }) => position)).to.equal([1, 2, 3]);
        expect((await all(sqlite.eventLog('logistics', context))).map(({ position }) => position)).to.equal([4]);
    });

    it('hands out positions in commit order: a writer waits for the one that took the last position to commit', async () => {

        const url = await fresh();
        const one = await dataSet(url);
        const two = await dataSet(url, { clock: new Clock(new Date(start)), ids: new IdSource(), committed: unheard });
        let commit = () => undefined as void;
        const held = new Promise<void>((resolve) => {

            commit = resolve;
        });

        const order: string[] = [];
        let taken = () => undefined as void;
        const positioned = new Promise<void>((resolve) => {

            taken = resolve;
        });

        const first = one.databases.commerce.db.transaction(async (tx) => {

            await eventWriter(one.databases.commerce.db).write(tx, one.context, { type: 'commerce.product.created', created_at: start, data: {} });
            taken();
            await held;
            order.push('first commits');
        });

        await positioned;
        const second = products(two.commerce, 1).then(() => order.push('second commits'));
        // The second writer waits on the first's transaction, whatever the time given.
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(order).to.equal([]);
        commit();
        await Promise.all([first, second]);
        expect(order).to.equal(['first commits', 'second commits']);
        expect((await all(one.logs.commerce)).map(({ position }) => position)).to.equal([1, 2]);
    });

    it('writes an event while endpoints are replaced and an outcome is recorded at once, without a deadlock', { timeout: 30_000 }, async () => {

        const url = await fresh();
        const one = await dataSet(url);
        const two = await dataSet(url, { clock: new Clock(new Date(start)), ids: new IdSource(), committed: unheard });
        await one.logs.commerce.replaceEndpoints([endpoint('a', 0, null, [])]);
        await products(one.commerce, 1);

        let resume = () => undefined as void;
        const held = new Promise<void>((resolve) => {

            resume = resolve;
        });

        let recorded = () => undefined as void;
        const counted = new Promise<void>((resolve) => {

            recorded = resolve;
        });

        // A record that gives up (as the event log's record does, paused between its two statements): it holds the
        // endpoints' table, then takes the order lock for its event.
        let runs = 0;
        const record = one.databases.commerce.db.transaction(async (tx) => {

            runs += 1;
            await tx.row(queries.record, 1, 'a', 1, 'given_up', null, 0, 1);
            recorded();
            await held;
            await eventWriter(one.databases.commerce.db).write(tx, one.context, { type: 'webhook.delivery.given_up', created_at: start, data: {} });
        });

        await counted;
        // A replacement waits for the record's table lock; a product's event waits for the replacement.
        const replaced = two.logs.commerce.replaceEndpoints([endpoint('a', 0, null, []), endpoint('b', 1, null)]);
        await new Promise((resolve) => setTimeout(resolve, 100));
        const created = products(two.commerce, 1);
        await new Promise((resolve) => setTimeout(resolve, 200));
        resume();
        await Promise.all([record, replaced, created]);

        // Each ran once, in the order each waited: the product's event matches the endpoints the replacement set.
        expect(runs).to.equal(1);
        const events = await all(one.logs.commerce);
        expect(events.map(({ position, type }) => [position, type])).to.equal([[1, 'commerce.product.created'], [2, 'webhook.delivery.given_up'], [3, 'commerce.product.created']]);
        const due = await one.logs.commerce.claimDue(new Date(start), 10, new Date(Date.now() + 60_000));
        expect(due.map(({ event, endpoint: { id } }) => [event.position, id])).to.equal([[3, 'a'], [3, 'b']]);
    });

    it('claims each attempt in one process only when two processes claim at once', { timeout: 30_000 }, async () => {

        const url = await fresh();
        const one = await dataSet(url);
        const two = await dataSet(url);
        await one.logs.commerce.replaceEndpoints([endpoint('a', 0, null), endpoint('b', 1, null)]);
        await products(one.commerce, 60);

        const lease = new Date(Date.now() + 60_000);
        const drain = async (log: EventLog) => {

            const claimed: string[] = [];
            let batch = await log.claimDue(new Date(start), 7, lease);
            while (batch.length) {
                claimed.push(...batch.map(({ event, endpoint: { id } }) => `${event.position} ${id}`));
                batch = await log.claimDue(new Date(start), 7, lease);
            }

            return claimed;
        };

        const [mine, theirs] = await Promise.all([drain(one.logs.commerce), drain(two.logs.commerce)]);
        const every = [...mine, ...theirs];
        expect(every.length).to.equal(120);
        expect(new Set(every).size).to.equal(120);
        expect(mine.length).to.be.above(0);
        expect(theirs.length).to.be.above(0);

        // Both record the first attempt of one delivery: one of them records it.
        const outcome = { position: 1, endpoint_id: 'a', attempt: 1, delivered: true, next_due_at: null, given_up: null };
        expect((await Promise.all([one.logs.commerce.record(outcome), two.logs.commerce.record(outcome)])).map((before) => before === null).sort()).to.equal([false, true]);
    });
});
