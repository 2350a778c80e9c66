import Code from '@hapi/code';
import type { Server, ServerInjectResponse } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { Clock, IdSource, unheard, type Commit } from '../lib/record-context';
import { settingsFromEnvironment } from '../lib';
import { eventTypesOf, matchesType, typePattern, webhookId, type StoredEndpoint, type StoredEvent } from '../lib/outbox';
import { builtInNamespaces } from '../lib/namespaces';
import { commerceNamespace } from '../lib/namespaces/commerce';
import type { DataSetDatabases, EventLog } from '../lib/storage/engine';
import { sqliteDatabase } from '../lib/storage/sqlite/engine';
import { eventWriter } from '../lib/storage/sqlite/events';
import { openSqliteNamespace } from '../lib/storage/sqlite/namespace';
import { adminBearer, bearer, body, tempDir, testServer } from './helpers/server';


export const lab = Lab.script();

// Every event type the built-in namespaces and the events feature write.
const eventTypes = eventTypesOf(builtInNamespaces);
const { describe, it, before, after } = lab;
const { expect } = Code;


interface Made {
    id: string;
    base_path: string;
}

type Json = Record<string, unknown>;

const frozen = '2030-01-01T00:00:00.000Z';
const vehicle = '67f7b2a9-5639-460c-a9f5-d114637c1b43';
const location = '8a5c2440-7943-4c0d-bdf4-9777cd05095e';
const bakery = 'd851fadb-03ca-5a24-ba16-c15cce19933b';
const eventId = (position: number): string => `00000000-0000-4000-9000-${position.toString(16).padStart(12, '0')}`;
const recordId = (counter: number): string => `00000000-0000-4000-8000-${counter.toString(16).padStart(12, '0')}`;


// Every event a data set holds, in position order, with its data parsed.
async function eventsOf(data: DataSetDatabases): Promise<(Omit<StoredEvent, 'data'> & { namespace: string; data: Json })[]> {

    const events = [];
    for (const log of await data.eventLogs()) {
        for (const event of await log.list(null, null, 1000)) {
            events.push({ ...event, namespace: log.namespace, data: JSON.parse(event.data) as Json });
        }
    }

    return events.sort((a, b) => a.position - b.position);
}


function endpoint(id: string, ordinal: number, types: string[] | null, retry: number[] = [1000]): StoredEndpoint {

    return {
        id, ordinal, url: `http://127.0.0.1:9/${id}`, types: types && types.map(typePattern), secret: 'whsec_c2VjcmV0', signing_clock: 'wall',
        retry_schedule: retry, created_at: frozen, delivered: 0, failed: 0,
        disabled_at: null, disabled_reason: null, given_up_in_a_row: 0, previous_secret: null, previous_secret_until: null
    };
}


describe('events on SQLite', () => {

    let server: Server;

    before(async () => {

        server = await testServer();
        await server.initialize();
    });

    after(() => server.stop());

    const admin = () => adminBearer(server);
    // These tests read and drive the outbox by hand: each instance's dispatcher is stopped, so that it claims nothing.
    const make = async (payload: Json = {}): Promise<Made> => {

        const made = body<Made>(await server.inject({ method: 'POST', url: '/_instances', headers: admin(), payload: { clock: frozen, ids: 'sequential', ...payload } }));
        server.app.localgate.instances.find(made.id)!.services.dispatcher.close();
        return made;
    };

    const dataOf = (made: Made): DataSetDatabases => server.app.localgate.instances.find(made.id)!.data;
    const as = (made: Made, subject: string, method: string, url: string, payload?: object, headers: Json = {}): Promise<ServerInjectResponse> => server.inject({ method, url: `${made.base_path}${url}`, headers: { ...bearer(server, subject), ...headers }, ...(payload ? { payload } : {}) });
    const move = (made: Made, advance: string) => server.inject({ method: 'PUT', url: `/_instances/${made.id}/clock`, headers: admin(), payload: { advance } });
    const deposit = (made: Made, key: string, payload: Json) => as(made, 'erin', 'POST', '/v1/pay/gateway/deposit', payload, { 'idempotency-key': key });
    const booking = { vehicle_id: vehicle, pickup_location_id: location, dropoff_location_id: location, pickup_at: '2030-01-01T10:00:00.000Z', return_at: '2030-01-01T12:00:00.000Z' };

    it('writes commerce events with the record the route answers, and flags a business once, at its first report', async () => {

        const made = await make();
        const businesses = body<{ data: Json[] }>(await as(made, 'ann', 'GET', '/v1/commerce/businesses?limit=100')).data;
        const clean = businesses.find((business) => business.scam_report_count === 0)!;

        const product = await as(made, 'ann', 'POST', '/v1/commerce/products', { name: 'Fudge', description: 'Sweet.', price: 5.5, currency: 'USD', business_id: bakery });
        expect(product.statusCode).to.equal(201);
        const inquiry = await as(made, 'ann', 'POST', '/v1/commerce/inquiries', { business_id: bakery, message: 'Open on Sunday?' });
        const report = await as(made, 'ann', 'POST', '/v1/commerce/scam-reports', { target_type: 'business', target_id: clean.id, reason: 'Took my money' });
        expect(report.statusCode).to.equal(201);
        const second = await as(made, 'bob', 'POST', '/v1/commerce/scam-reports', { target_type: 'business', target_id: clean.id, reason: 'Same here' });
        const productReport = await as(made, 'bob', 'POST', '/v1/commerce/scam-reports', { target_type: 'product', target_id: body(product).id, reason: 'Fake' });
        const flagged = body(await as(made, 'ann', 'GET', `/v1/commerce/businesses/${String(clean.id)}`));

        const events = await eventsOf(dataOf(made));
        expect(events.map(({ position, id, type, created_at: createdAt, namespace }) => ({ position, id, type, created_at: createdAt, namespace }))).to.equal([
            { position: 1, id: eventId(1), type: 'commerce.product.created', created_at: frozen, namespace: 'commerce' },
            { position: 2, id: eventId(2), type: 'commerce.inquiry.created', created_at: frozen, namespace: 'commerce' },
            { position: 3, id: eventId(3), type: 'commerce.scam_report.created', created_at: frozen, namespace: 'commerce' },
            { position: 4, id: eventId(4), type: 'commerce.business.flagged', created_at: frozen, namespace: 'commerce' },
            { position: 5, id: eventId(5), type: 'commerce.scam_report.created', created_at: frozen, namespace: 'commerce' },
            { position: 6, id: eventId(6), type: 'commerce.scam_report.created', created_at: frozen, namespace: 'commerce' }
        ]);
        expect(events.map((event) => event.data)).to.equal([body(product), body(inquiry), body(report), { ...flagged, scam_report_count: 1 }, body(second), body(productReport)]);
        // Record ids are the records' counter alone: events take nothing from it.
        expect([body(product).id, body(inquiry).id, body(report).id, body(second).id]).to.equal([recordId(1), recordId(2), recordId(3), recordId(4)]);
        expect(flagged.scam_report_count).to.equal(2);
    });

    it('writes logistics events: created and cancelled at the clock, started and completed at their due instants', async () => {

        const made = await make();
        const first = body(await as(made, 'ann', 'POST', '/v1/logistics/bookings', booking));
        const other = body(await as(made, 'ann', 'POST', '/v1/logistics/bookings', { ...booking, pickup_at: '2030-01-02T10:00:00.000Z', return_at: '2030-01-02T12:00:00.000Z' }));
        const cancelled = await as(made, 'ann', 'POST', `/v1/logistics/bookings/${String(other.id)}/cancel`);
        expect(cancelled.statusCode).to.equal(200);
        expect((await move(made, '13h')).statusCode).to.equal(200);

        const events = await eventsOf(dataOf(made));
        expect(events.map(({ position, type, created_at: createdAt }) => [position, type, createdAt])).to.equal([
            [1, 'logistics.booking.created', frozen],
            [2, 'logistics.booking.created', frozen],
            [3, 'logistics.booking.cancelled', frozen],
            [4, 'logistics.booking.started', '2030-01-01T10:00:00.000Z'],
            [5, 'logistics.booking.completed', '2030-01-01T12:00:00.000Z']
        ]);
        expect(events.map((event) => event.data)).to.equal([first, other, body(cancelled), { ...first, status: 'active' }, { ...first, status: 'completed' }]);
    });

    it('writes pay events: an instant move created then completed at one instant, a pending one settled at its due instant', async () => {

        const made = await make({ pay: true });
        const instant = await deposit(made, 'k1', { provider_id: 'sandbox', asset: 'USD', amount: 500 });
        const pending = await deposit(made, 'k2', { provider_id: 'bank-transfer', asset: 'USD', amount: 700 });
        const returned = await deposit(made, 'k3', { provider_id: 'bank-transfer', asset: 'USD', amount: 799 });
        expect([instant.statusCode, pending.statusCode, returned.statusCode]).to.equal([201, 201, 201]);
        expect((await move(made, '3d')).statusCode).to.equal(200);
        const settled = (id: unknown) => as(made, 'erin', 'GET', `/v1/pay/wallet/transactions/${String(id)}`).then(body);

        const events = await eventsOf(dataOf(made));
        const due = '2030-01-03T00:00:00.000Z';
        expect(events.map(({ position, type, created_at: createdAt, namespace }) => [position, type, createdAt, namespace])).to.equal([
            [1, 'pay.transaction.created', frozen, 'pay'],
            [2, 'pay.transaction.completed', frozen, 'pay'],
            [3, 'pay.transaction.created', frozen, 'pay'],
            [4, 'pay.transaction.created', frozen, 'pay'],
            [5, 'pay.transaction.completed', due, 'pay'],
            [6, 'pay.transaction.failed', due, 'pay']
        ]);
        expect(events.map((event) => event.data)).to.equal([
            body(instant), body(instant), body(pending), body(returned), await settled(body(pending).id), await settled(body(returned).id)
        ]);
        expect(events[5]!.data).to.include({ status: 'failed', failure_code: 'returned' });
    });

    it('writes no event for a write that is rolled back or refused: a refused booking, a 409, a replayed key, a declined card', async () => {

        const made = await make({ pay: true });
        expect((await as(made, 'ann', 'POST', '/v1/logistics/bookings', { ...booking, vehicle_id: 'nope' })).statusCode).to.equal(422);
        expect((await as(made, 'ann', 'POST', '/v1/logistics/bookings', booking)).statusCode).to.equal(201);
        expect((await as(made, 'bob', 'POST', '/v1/logistics/bookings', booking)).statusCode).to.equal(409);
        expect((await as(made, 'ann', 'POST', '/v1/commerce/scam-reports', { target_type: 'business', target_id: bakery, reason: 'x' })).statusCode).to.equal(201);
        expect((await as(made, 'ann', 'POST', '/v1/commerce/scam-reports', { target_type: 'business', target_id: bakery, reason: 'x' })).statusCode).to.equal(409);
        expect((await deposit(made, 'same', { provider_id: 'sandbox', asset: 'USD', amount: 500 })).statusCode).to.equal(201);
        const replayed = await deposit(made, 'same', { provider_id: 'sandbox', asset: 'USD', amount: 500 });
        expect(replayed.headers['idempotent-replayed']).to.equal('true');
        expect((await deposit(made, 'declined', { provider_id: 'card', asset: 'USD', amount: 502 })).statusCode).to.equal(402);

        expect((await eventsOf(dataOf(made))).map(({ type }) => type)).to.equal([
            'logistics.booking.created', 'commerce.scam_report.created', 'commerce.business.flagged', 'pay.transaction.created', 'pay.transaction.completed'
        ]);
    });

    it('orders events across namespaces on one frozen instant by position, and lists them after a position and by type', async () => {

        const made = await make({ pay: true });
        await as(made, 'ann', 'POST', '/v1/logistics/bookings', booking);
        await as(made, 'ann', 'POST', '/v1/commerce/inquiries', { business_id: bakery, message: 'Hi' });
        await deposit(made, 'k', { provider_id: 'sandbox', asset: 'USD', amount: 5 });
        await as(made, 'ann', 'POST', '/v1/commerce/inquiries', { business_id: bakery, message: 'Again' });

        const events = await eventsOf(dataOf(made));
        expect(events.map(({ position, namespace }) => [position, namespace])).to.equal([[1, 'logistics'], [2, 'commerce'], [3, 'pay'], [4, 'pay'], [5, 'commerce']]);
        expect(events.map(({ id }) => id)).to.equal([1, 2, 3, 4, 5].map(eventId));

        const [commerce, logistics, pay] = await dataOf(made).eventLogs();
        expect([commerce!.namespace, logistics!.namespace, pay!.namespace]).to.equal(['commerce', 'logistics', 'pay']);
        expect((await commerce!.list(2, null, 10)).map(({ position }) => position)).to.equal([5]);
        expect((await commerce!.list(null, null, 1)).map(({ position }) => position)).to.equal([2]);
        expect((await pay!.list(null, [typePattern('pay.transaction.completed')], 10)).map(({ position }) => position)).to.equal([4]);
        expect((await pay!.list(null, [typePattern('pay.*')], 10)).map(({ position }) => position)).to.equal([3, 4]);
        expect((await pay!.list(null, [typePattern('commerce.*'), typePattern('pay.transaction.created')], 10)).map(({ position }) => position)).to.equal([3]);
        expect(await pay!.positionOf(eventId(4))).to.equal(4);
        expect(await pay!.positionOf(eventId(5))).to.equal(null);
        expect([await commerce!.lastPosition(), await logistics!.lastPosition(), await pay!.lastPosition()]).to.equal([5, 1, 4]);
        // Made once per database: asked again, the data set answers the same logs.
        expect(await dataOf(made).eventLogs()).to.equal([commerce, logistics, pay]);
    });

    it('follows the databases after a restore, and a reset instance writes the event ids a fresh one does', async () => {

        const made = await make({ pay: true });
        const inquire = () => as(made, 'ann', 'POST', '/v1/commerce/inquiries', { business_id: bakery, message: 'Hi' });
        await inquire();
        await as(made, 'ann', 'POST', '/v1/logistics/bookings', booking);
        const snapshot = body<{ snapshot_id: string }>(await server.inject({ method: 'POST', url: `/_instances/${made.id}/snapshots`, headers: admin() }));
        await deposit(made, 'k', { provider_id: 'sandbox', asset: 'USD', amount: 5 });
        await inquire();
        expect((await eventsOf(dataOf(made))).map(({ position }) => position)).to.equal([1, 2, 3, 4, 5]);

        expect((await server.inject({ method: 'POST', url: `/_instances/${made.id}/restore`, headers: admin(), payload: { snapshot_id: snapshot.snapshot_id } })).statusCode).to.equal(200);
        expect(server.app.localgate.instances.find(made.id)!.services.ids.lastEventPosition).to.equal(2);
        await deposit(made, 'k2', { provider_id: 'sandbox', asset: 'USD', amount: 5 });
        expect((await eventsOf(dataOf(made))).map(({ position, namespace }) => [position, namespace])).to.equal([[1, 'commerce'], [2, 'logistics'], [3, 'pay'], [4, 'pay']]);

        expect((await server.inject({ method: 'POST', url: `/_instances/${made.id}/reset`, headers: admin() })).statusCode).to.equal(200);
        await inquire();
        const fresh = await make({ pay: true });
        await as(fresh, 'ann', 'POST', '/v1/commerce/inquiries', { business_id: bakery, message: 'Hi' });
        const [afterReset] = await eventsOf(dataOf(made));
        const [ofFresh] = await eventsOf(dataOf(fresh));
        expect(afterReset!.id).to.equal(eventId(1));
        expect(ofFresh).to.equal(afterReset);
    });

    it('starts a fork and an instance handed out from the pool after the events their data holds', async () => {

        const made = await make();
        await as(made, 'ann', 'POST', '/v1/commerce/inquiries', { business_id: bakery, message: 'Hi' });
        await as(made, 'ann', 'POST', '/v1/logistics/bookings', booking);
        const fork = body<Made>(await server.inject({ method: 'POST', url: '/_instances', headers: admin(), payload: { from: made.id } }));
        await as(fork, 'ann', 'POST', '/v1/commerce/inquiries', { business_id: bakery, message: 'Again' });
        expect((await eventsOf(dataOf(fork))).map(({ position, id }) => [position, id])).to.equal([[1, eventId(1)], [2, eventId(2)], [3, eventId(3)]]);

        // Deleted, its data goes back to the pool rolled back; the next instance of its kind starts from no events.
        expect((await server.inject({ method: 'DELETE', url: `/_instances/${made.id}`, headers: admin() })).statusCode).to.equal(204);
        const next = await make();
        await as(next, 'ann', 'POST', '/v1/commerce/inquiries', { business_id: bakery, message: 'Hi' });
        expect((await eventsOf(dataOf(next))).map(({ position }) => position)).to.equal([1]);
    });

    it('creates deliveries only for the endpoints whose types match, none for the dispatcher\'s own events', async () => {

        const made = await make({ pay: true });
        const logs = await dataOf(made).eventLogs();
        const endpoints = [endpoint('all', 0, null), endpoint('pay', 1, ['pay.*']), endpoint('products', 2, ['commerce.product.created']), endpoint('every', 3, ['*'])];
        for (const log of logs) {
            await log.replaceEndpoints(endpoints);
        }

        await as(made, 'ann', 'POST', '/v1/commerce/inquiries', { business_id: bakery, message: 'Hi' });
        await deposit(made, 'k', { provider_id: 'bank-transfer', asset: 'USD', amount: 5 });
        await as(made, 'ann', 'POST', '/v1/commerce/products', { name: 'Fudge', description: 'Sweet.', price: 5.5, currency: 'USD', business_id: bakery });
        const deliveries = (namespace: string) => sqliteDatabase(dataOf(made), namespace).prepare('SELECT event_position, endpoint_id, attempts, state, due_at FROM webhook_deliveries ORDER BY event_position, endpoint_id').all();
        expect(deliveries('commerce')).to.equal([
            { event_position: 1, endpoint_id: 'all', attempts: 0, state: 'pending', due_at: frozen },
            { event_position: 1, endpoint_id: 'every', attempts: 0, state: 'pending', due_at: frozen },
            { event_position: 3, endpoint_id: 'all', attempts: 0, state: 'pending', due_at: frozen },
            { event_position: 3, endpoint_id: 'every', attempts: 0, state: 'pending', due_at: frozen },
            { event_position: 3, endpoint_id: 'products', attempts: 0, state: 'pending', due_at: frozen }
        ]);
        expect(deliveries('pay').map((row) => Object.values(row as Json).slice(0, 2))).to.equal([[2, 'all'], [2, 'every'], [2, 'pay']]);

        const pay = logs[2]!;
        expect(await pay.endpoints()).to.equal(endpoints);
        const [claimed] = await pay.claimDue(new Date(frozen), 1, new Date(Date.now() + 60_000));
        const outcome = { position: 2, endpoint_id: claimed!.endpoint.id, attempt: 1, delivered: false, next_due_at: null, given_up: { created_at: frozen, data: { webhook_id: 'msg_x', endpoint_id: 'all', event_id: eventId(2), event_type: 'pay.transaction.created', attempts: 1 } } };
        expect(await pay.record(outcome)).to.equal(0);
        // The given-up event is listed but never delivered.
        const [givenUp] = await pay.list(2, null, 10);
        expect(givenUp).to.include({ position: 4, type: 'webhook.delivery.given_up' });
        expect(JSON.parse(givenUp!.data)).to.equal(outcome.given_up.data);
        expect(deliveries('pay').map((row) => Object.values(row as Json).slice(0, 4))).to.equal([[2, 'all', 1, 'given_up'], [2, 'every', 0, 'pending'], [2, 'pay', 0, 'pending']]);

        // Replaced: the endpoints removed lose their deliveries; the ones kept keep theirs and their counts.
        await pay.replaceEndpoints([{ ...endpoint('pay', 0, ['pay.transaction.*']), url: 'http://localhost/new' }]);
        expect(await pay.endpoints()).to.equal([{ ...endpoint('pay', 0, ['pay.transaction.*']), url: 'http://localhost/new' }]);
        expect(deliveries('pay').map((row) => Object.values(row as Json).slice(0, 2))).to.equal([[2, 'pay']]);
    });

    it('filters a list by type as the shared model matches types', async () => {

        const namespace = openSqliteNamespace(commerceNamespace, undefined, { storage: 'memory', dataDir: ':memory:', seed: false });
        const context = { clock: new Clock(new Date(frozen)), ids: new IdSource('sequential'), committed: unheard };
        const log = namespace.eventLog('commerce', context);
        for (const type of eventTypes) {
            eventWriter(namespace.db).write(context, { type, created_at: frozen, data: {} });
        }

        for (const asked of [['*'], ['pay.*'], ['pay.transaction.failed', 'logistics.*'], ['commerce.business.flagged'], ['webhook.*']]) {
            const patterns = asked.map(typePattern);
            expect((await log.list(null, patterns, 100)).map(({ type }) => type)).to.equal(eventTypes.filter((type) => matchesType(type, patterns)));
        }

        expect(eventTypes.filter((type) => matchesType(type, null))).to.equal([...eventTypes]);
        // One webhook-id per event, endpoint and body, the same for each attempt.
        expect(webhookId(eventId(1), 'a', '{}')).to.equal(webhookId(eventId(1), 'a', '{}'));
        expect(new Set([webhookId(eventId(1), 'a', '{}'), webhookId(eventId(1), 'b', '{}'), webhookId(eventId(2), 'a', '{}'), webhookId(eventId(1), 'a', '[]')]).size).to.equal(4);
        await namespace.close();
    });

    it('tells the context what each write transaction committed, once it has, and nothing of one rolled back', async () => {

        const namespace = openSqliteNamespace(commerceNamespace, undefined, { storage: 'memory', dataDir: ':memory:', seed: false });
        const told: Commit[] = [];
        const context = { clock: new Clock(new Date(frozen)), ids: new IdSource('sequential'), committed: (commit: Commit) => told.push(commit) };
        const log = namespace.eventLog('commerce', context);
        const writer = eventWriter(namespace.db);
        await log.replaceEndpoints([endpoint('a', 0, ['commerce.product.created'], [])]);
        // What the context had heard inside each transaction: nothing of the transaction itself.
        const inside: number[] = [];
        const write = writer.writing(context, (type: typeof eventTypes[number], due: Date | null) => {

            writer.write(context, { type, created_at: frozen, data: {} });
            if (due) {
                // The earliest is kept, whatever the order noted.
                writer.due(new Date(due.getTime() + 1));
                writer.due(due);
                writer.due(new Date(due.getTime() + 2));
            }

            inside.push(told.length);
        });

        write('commerce.inquiry.created', null);
        write('commerce.product.created', new Date('2030-01-02T00:00:00.000Z'));
        expect(inside).to.equal([0, 1]);
        const rolledBack = writer.writing(context, () => {

            writer.write(context, { type: 'commerce.product.created', created_at: frozen, data: {} });
            throw new Error('rolled back');
        });
        expect(rolledBack).to.throw('rolled back');
        // A transaction that writes nothing tells nothing; one that only makes a record pending tells its instant.
        writer.writing(context, () => undefined)();
        writer.writing(context, () => writer.due(new Date('2030-01-03T00:00:00.000Z')))();
        expect(told).to.equal([{ events: 1, deliveries: false, due: null }, { events: 1, deliveries: true, due: new Date('2030-01-02T00:00:00.000Z') }, { events: 0, deliveries: false, due: new Date('2030-01-03T00:00:00.000Z') }]);

        // An attempt given up writes its event in the record's transaction, told as it commits.
        const [claimed] = await log.claimDue(new Date(frozen), 10, new Date(Date.now() + 60_000));
        const givenUp = { created_at: frozen, data: { webhook_id: 'w', endpoint_id: 'a', event_id: claimed!.event.id, event_type: claimed!.event.type, attempts: 1 } };
        expect(await log.record({ position: claimed!.event.position, endpoint_id: 'a', attempt: 1, delivered: false, next_due_at: null, given_up: givenUp })).to.equal(0);
        expect(told.slice(3)).to.equal([{ events: 1, deliveries: false, due: null }]);
        expect((await log.list(null, null, 10)).map(({ type }) => type)).to.equal(['commerce.inquiry.created', 'commerce.product.created', 'webhook.delivery.given_up']);
        await namespace.close();
    });

    it('claims due attempts earliest first, leases them, and records each attempt once', async () => {

        const made = await make();
        const [commerce] = await dataOf(made).eventLogs();
        const log: EventLog = commerce!;
        await log.replaceEndpoints([endpoint('b', 1, null, [60_000, 60_000]), endpoint('a', 0, ['commerce.inquiry.created'])]);
        expect(await log.nextDue()).to.equal(null);
        await as(made, 'ann', 'POST', '/v1/commerce/inquiries', { business_id: bakery, message: 'Hi' });
        await move(made, '1s');
        await as(made, 'ann', 'POST', '/v1/commerce/inquiries', { business_id: bakery, message: 'Later' });
        expect(await log.nextDue()).to.equal(new Date(frozen));

        const lease = new Date(Date.now() + 60_000);
        const claimed = await log.claimDue(new Date('2030-01-01T00:00:01.000Z'), 3, lease);
        expect(claimed.map(({ event, endpoint: { id }, attempt, due_at: due }) => [event.position, id, attempt, due])).to.equal([
            [1, 'a', 1, frozen], [1, 'b', 1, frozen], [2, 'a', 1, '2030-01-01T00:00:01.000Z']
        ]);
        expect(claimed[0]!.event).to.include({ id: eventId(1), type: 'commerce.inquiry.created', created_at: frozen });
        expect(claimed[1]!.endpoint.retry_schedule).to.equal([60_000, 60_000]);
        // Leased: not claimed again until the lease passes; the one left is.
        expect((await log.claimDue(new Date('2030-01-01T00:00:01.000Z'), 10, lease)).map(({ event, endpoint: { id } }) => [event.position, id])).to.equal([[2, 'b']]);
        expect(await log.claimDue(new Date('2030-01-01T00:00:01.000Z'), 10, lease)).to.equal([]);

        const failed = { position: 1, endpoint_id: 'b', attempt: 1, delivered: false, next_due_at: '2030-01-01T00:01:00.000Z', given_up: null };
        expect(await log.record(failed)).to.equal(0);
        expect(await log.record(failed)).to.equal(null);
        expect(await log.record({ position: 1, endpoint_id: 'a', attempt: 1, delivered: true, next_due_at: null, given_up: null })).to.equal(0);
        expect((await log.endpoints()).map(({ id, delivered, failed: failures }) => [id, delivered, failures])).to.equal([['a', 1, 0], ['b', 0, 1]]);

        // A lease past its instant frees the row; the retry is due at its own instant and claimed as the second attempt.
        sqliteDatabase(dataOf(made), 'commerce').prepare(`UPDATE webhook_deliveries SET leased_until = '2000-01-01T00:00:00.000Z'`).run();
        const retried = await log.claimDue(new Date('2030-01-01T00:01:00.000Z'), 10, lease);
        expect(retried.map(({ event, endpoint: { id }, attempt, due_at: due }) => [event.position, id, attempt, due])).to.equal([
            [2, 'a', 1, '2030-01-01T00:00:01.000Z'], [2, 'b', 1, '2030-01-01T00:00:01.000Z'], [1, 'b', 2, '2030-01-01T00:01:00.000Z']
        ]);
    });

    it('renews the leases held on attempts not made yet, but not one recorded since or claimed again once its lease had passed', async () => {

        const made = await make();
        const [commerce] = await dataOf(made).eventLogs();
        const log: EventLog = commerce!;
        await log.replaceEndpoints([endpoint('a', 0, null), endpoint('b', 1, null)]);
        await as(made, 'ann', 'POST', '/v1/commerce/inquiries', { business_id: bakery, message: 'Hi' });
        await as(made, 'ann', 'POST', '/v1/commerce/inquiries', { business_id: bakery, message: 'Again' });

        // A claim whose lease has passed by the time its attempts' turns come.
        const claimed = await log.claimDue(new Date(frozen), 10, new Date(Date.now() - 1));
        const held = claimed.map(({ event, endpoint: { id }, attempt, leased_until: lease }) => ({ position: event.position, endpoint_id: id, attempt, leased_until: lease }));
        expect(held.map(({ position, endpoint_id: id }) => `${position} ${id}`)).to.equal(['1 a', '1 b', '2 a', '2 b']);
        await log.record({ position: 1, endpoint_id: 'a', attempt: 1, delivered: true, next_due_at: null, given_up: null });
        // Another claimer takes the next one over: its lease had passed.
        const far = new Date(Date.now() + 60_000);
        expect((await log.claimDue(new Date(frozen), 1, far)).map(({ event, endpoint: { id }, leased_until: lease }) => [event.position, id, lease])).to.equal([[1, 'b', far.toISOString()]]);

        const renewed = await log.renewLeases(held, far);
        expect(renewed).to.equal([held[2]!, held[3]!]);
        // Renewed: nobody claims them; a renewal under a lease the rows no longer hold, or for another attempt, renews nothing.
        expect(await log.claimDue(new Date(frozen), 10, far)).to.equal([]);
        expect(await log.renewLeases(renewed, far)).to.equal([]);
        const now = renewed.map((lease) => ({ ...lease, leased_until: far.toISOString() }));
        expect(await log.renewLeases([{ ...now[0]!, attempt: 2 }], new Date(Date.now() + 1000))).to.equal([]);
        expect(await log.renewLeases(now, new Date(Date.now() + 1000))).to.equal(now);
        expect(await log.renewLeases(now, far)).to.equal([]);
    });

    it('tells the data set\'s listeners after a batch of transitions wrote events, and not after a move that wrote none', async () => {

        const made = await make();
        await as(made, 'ann', 'POST', '/v1/logistics/bookings', booking);
        const services = server.app.localgate.instances.find(made.id)!.services;
        let heard = 0;
        const stop = services.onEvents(() => {

            heard += 1;
        });

        await move(made, '11h');
        expect(heard).to.equal(1);
        await move(made, '1m');
        expect(heard).to.equal(1);
        stop();
        await move(made, '2h');
        expect(heard).to.equal(1);
        expect((await eventsOf(dataOf(made))).map(({ type }) => type)).to.equal(['logistics.booking.created', 'logistics.booking.started', 'logistics.booking.completed']);
    });

    it('keeps the default data set\'s positions across a restart on files', async () => {

        const dataDir = tempDir();
        const inquire = (started: Server) => started.inject({ method: 'POST', url: '/v1/commerce/inquiries', headers: bearer(started, 'ann'), payload: { business_id: bakery, message: 'Hi' } });
        const first = await testServer({ dataDir });
        await first.initialize();
        await inquire(first);
        await first.stop();

        const second = await testServer({ dataDir });
        await second.initialize();
        expect(second.app.localgate.settings.eventsKept).to.equal(10_000);
        await inquire(second);
        expect((await eventsOf(second.app.localgate.data)).map(({ position }) => position)).to.equal([1, 2]);
        await second.stop();
    });
});


describe('EVENTS_KEPT', () => {

    it('is 10,000 unless set, from 100 to 1,000,000', () => {

        expect(settingsFromEnvironment({}).eventsKept).to.equal(10_000);
        expect(settingsFromEnvironment({ EVENTS_KEPT: '100' }).eventsKept).to.equal(100);
        expect(() => settingsFromEnvironment({ EVENTS_KEPT: '99' })).to.throw(/EVENTS_KEPT/);
        expect(() => settingsFromEnvironment({ EVENTS_KEPT: '1000001' })).to.throw(/EVENTS_KEPT/);
    });

    it('prunes each time a database\'s positions pass a multiple of 100, keeping the events with a delivery pending', async () => {

        const namespace = openSqliteNamespace(commerceNamespace, undefined, { storage: 'memory', dataDir: ':memory:', seed: false, eventsKept: 100 });
        const context = { clock: new Clock(new Date(frozen)), ids: new IdSource('sequential'), committed: unheard };
        const log = namespace.eventLog('commerce', context);
        const writer = eventWriter(namespace.db);
        const write = (count: number) => {

            for (let i = 0; i < count; ++i) {
                writer.write(context, { type: 'commerce.inquiry.created', created_at: frozen, data: { i } });
            }
        };

        write(5);
        await log.replaceEndpoints([endpoint('a', 0, ['commerce.product.created'])]);
        writer.write(context, { type: 'commerce.product.created', created_at: frozen, data: {} });
        // Another database took positions 7 to 150: this one passes 100 and 200 with its next writes only.
        context.ids.lastEventPosition = 150;
        write(1);
        // Position 151 pruned below 51: the event with a delivery pending stays.
        expect((await log.list(null, null, 1000)).map(({ position }) => position)).to.equal([6, 151]);
        write(99);
        // Position 200 pruned below 100 again; 250 passes no multiple.
        const kept = (await log.list(null, null, 1000)).map(({ position }) => position);
        expect(kept[0]).to.equal(6);
        expect(kept.length).to.equal(101);
        expect(kept.at(-1)).to.equal(250);
        await namespace.close();
    });
});
