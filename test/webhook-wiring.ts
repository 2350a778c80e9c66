import Code from '@hapi/code';
import type { Server, ServerInjectOptions, ServerInjectResponse } from '@hapi/hapi';
import Lab from '@hapi/lab';
import { Webhook } from 'standardwebhooks';

import type { DeliveryEntry as Delivery } from '../lib/data-set/deliveries';
import { deliveryBody } from '../lib/data-set/dispatcher';
import { webhookId, type Event } from '../lib/outbox';
import { startReceiver, type ReceivedWebhook, type WebhookReceiver } from '../lib/webhook-receiver';
import { engineServer, engines } from './helpers/postgres';
import { adminBearer, bearer, body, type List, testServer } from './helpers/server';
import { bakery, fixedSecret, start, type Endpoint } from './helpers/webhooks';


export const lab = Lab.script();
const { describe, it, before, after, beforeEach } = lab;
const { expect } = Code;


// Endpoints are the instance's wiring, the event log and its pending deliveries its world: what a fork, a reset and a
// restore keep of each (the table in docs/testing.md).
describe('webhooks across forks, resets and restores', () => {

    let server: Server;
    let receiver: WebhookReceiver;

    const admin = (method: string, url: string, payload?: object) => server.inject({ method, url, headers: adminBearer(server), payload } as ServerInjectOptions);
    const ok = <T>(res: ServerInjectResponse, status = 200): T => {

        expect(res.statusCode, res.payload).to.equal(status);
        return body<T>(res);
    };

    const create = async (options: object = {}) => ok<{ id: string; base_path: string }>(await admin('POST', '/_instances', { clock: start, ids: 'sequential', ...options }), 201);
    const fork = async (from: string) => ok<{ id: string; base_path: string }>(await admin('POST', '/_instances', { from }), 201);
    const hooks = async (id: string, endpoints: object[]) => ok<{ endpoints: Endpoint[] }>(await admin('PUT', `/_instances/${id}/webhooks`, { endpoints })).endpoints;
    const endpointsOf = async (id: string) => ok<{ endpoints: Endpoint[] }>(await admin('GET', `/_instances/${id}/webhooks`)).endpoints.map(({ id: endpoint, url, delivered, failed }) => ({ id: endpoint, url, delivered, failed }));
    const product = async (base: string, name: string) => ok<{ id: string }>(await server.inject({ method: 'POST', url: `${base}/v1/commerce/products`, headers: bearer(server, 'ann'), payload: { name, price: 2.5, currency: 'USD', business_id: bakery } }), 201);
    const attempts = async (id: string) => ok<List<Delivery>>(await admin('GET', `/_instances/${id}/webhooks/deliveries?limit=100`)).data.map(({ event_id: event, attempt, status }) => ({ event, attempt, status }));
    const events = async (id: string) => ok<List<Event>>(await admin('GET', `/_instances/${id}/events?limit=100`)).data.map(({ id: event, data }) => ({ id: event, name: data.name }));
    const flush = async (id: string) => ok<{ attempted: number }>(await admin('POST', `/_instances/${id}/webhooks/flush`)).attempted;
    const advance = async (id: string, by: string) => ok<{ attempted: number }>(await admin('PUT', `/_instances/${id}/clock`, { advance: by })).attempted;
    const eventId = (position: number) => `00000000-0000-4000-9000-${position.toString(16).padStart(12, '0')}`;

    before(async () => {

        server = await testServer({ webhookTimeoutMs: 1000 });
        receiver = await startReceiver({ secret: fixedSecret, status: 200 });
    });

    after(async () => {

        await server.stop();
        await receiver.close();
    });

    beforeEach(() => {

        receiver.clear();
    });

    it('makes a fork with its source\'s data and event log, and no endpoint, pending delivery or attempt of it', async () => {

        const source = await create();
        const [endpoint] = await hooks(source.id, [{ url: receiver.url, secret: fixedSecret, retry_schedule: ['1h'] }]);
        receiver.respondWith(500);
        await product(source.base_path, 'Bread');
        expect(await flush(source.id)).to.equal(1);

        const copy = await fork(source.id);
        expect(await endpointsOf(copy.id)).to.equal([]);
        expect(await attempts(copy.id)).to.equal([]);
        expect(await events(copy.id)).to.equal([{ id: eventId(1), name: 'Bread' }]);
        expect(await flush(copy.id)).to.equal(0);
        expect(await advance(copy.id, '1h')).to.equal(0);
        expect(receiver.deliveries.length).to.equal(1);

        // The source's retry is its own still.
        expect(await advance(source.id, '1h')).to.equal(1);
        expect(receiver.deliveries.map(({ status }) => status)).to.equal([500, 200]);
        expect(await endpointsOf(source.id)).to.equal([{ id: endpoint!.id, url: receiver.url, delivered: 1, failed: 1 }]);
    });

    it('gives a source and its fork that share a receiver one webhook-id per event body, though their events share ids', async () => {

        const source = await create();
        await product(source.base_path, 'Bread');
        const copy = await fork(source.id);
        const [inSource] = await hooks(source.id, [{ url: receiver.url, secret: fixedSecret }]);
        const [inCopy] = await hooks(copy.id, [{ url: receiver.url, secret: fixedSecret }]);
        // Each data set counts its own endpoints.
        expect([inSource!.id, inCopy!.id]).to.equal(['we_000000000001', 'we_000000000001']);

        await product(source.base_path, 'Cake');
        await flush(source.id);
        await product(copy.base_path, 'Pie');
        await flush(copy.id);
        const got = await receiver.waitFor(2);
        expect(got.map(({ event, verified }) => ({ id: event!.id, name: event!.data.name, verified }))).to.equal([
            { id: eventId(2), name: 'Cake', verified: true },
            { id: eventId(2), name: 'Pie', verified: true }
        ]);
        expect(got[0]!.webhookId).to.not.equal(got[1]!.webhookId);
        for (const delivery of got) {
            expect(delivery.webhookId).to.equal(webhookId(delivery.event!.id, 'we_000000000001', delivery.body));
        }
    });

    it('makes the same deliveries byte for byte in two runs whose receivers listen on different ports', async () => {

        const run = async (): Promise<{ endpoints: string[]; received: Omit<ReceivedWebhook, 'receivedAt' | 'seq'>[] }> => {

            let id = '';
            // The timestamps are the instance's clock: checked against it, each delivery verifies.
            const other = await startReceiver({ secret: fixedSecret, now: () => server.app.localgate.instances.find(id)!.now() });
            try {
                const made = await create();
                id = made.id;
                const base = made.base_path;
                const set = await hooks(id, [
                    { url: `${other.url}hooks`, secret: fixedSecret, signing_clock: 'instance', retry_schedule: ['1h'] },
                    { url: `${other.url}audit?all=1`, secret: fixedSecret, signing_clock: 'instance', types: ['commerce.*'] }
                ]);
                other.respondWith(500);
                await product(base, 'Bread');
                await flush(id);
                await advance(id, '1h');
                const received = (await other.waitFor(3)).map(({ receivedAt, seq, headers: { host, ...headers }, ...rest }) => ({ ...rest, headers }));
                return { endpoints: set.map(({ id: endpoint }) => endpoint), received };
            }
            finally {
                await other.close();
            }
        };

        const first = await run();
        expect(first.endpoints).to.equal(['we_000000000001', 'we_000000000002']);
        expect(first.received.map(({ method, path, status, verified }) => [method, path, status, verified])).to.equal([['POST', '/hooks', 500, true], ['POST', '/audit?all=1', 204, true], ['POST', '/hooks', 204, true]]);
        expect(first.received.map(({ headers }) => headers['webhook-timestamp'])).to.equal(['1893456000', '1893456000', '1893459600']);
        expect(await run()).to.equal(first);
    });

    it('keeps the endpoints with their counts and the attempts on a reset, and puts back the event log it was made with, nothing pending', async () => {

        const { id, base_path: base } = await create();
        const [endpoint] = await hooks(id, [{ url: receiver.url, secret: fixedSecret, retry_schedule: ['1h'] }]);
        receiver.respondWith(500);
        await product(base, 'Bread');
        await flush(id);

        expect(ok<{ clock: string }>(await admin('POST', `/_instances/${id}/reset`)).clock).to.equal(start);
        expect(await endpointsOf(id)).to.equal([{ id: endpoint!.id, url: receiver.url, delivered: 0, failed: 1 }]);
        expect(await attempts(id)).to.equal([{ event: eventId(1), attempt: 1, status: 500 }]);
        expect(await events(id)).to.equal([]);
        // The retry of an event the reset removed is gone with it.
        expect(await advance(id, '1h')).to.equal(0);

        // The endpoint kept gets the world's next event: the first again.
        await product(base, 'Cake');
        expect(await flush(id)).to.equal(1);
        expect(receiver.deliveries.map(({ event }) => [event!.id, event!.data.name])).to.equal([[eventId(1), 'Bread'], [eventId(1), 'Cake']]);
        expect(await endpointsOf(id)).to.equal([{ id: endpoint!.id, url: receiver.url, delivered: 1, failed: 1 }]);
        expect((await hooks(id, [{ url: receiver.url }]))[0]!.id).to.equal('we_000000000002');
    });

    it('resets a fork to its source\'s event log as forked, keeping the endpoints the fork set', async () => {

        const source = await create();
        await product(source.base_path, 'Bread');
        await hooks(source.id, [{ url: receiver.url, secret: fixedSecret }]);
        const copy = await fork(source.id);
        const [endpoint] = await hooks(copy.id, [{ url: receiver.url, secret: fixedSecret, retry_schedule: ['1h'] }]);
        receiver.respondWith(500);
        await product(copy.base_path, 'Cake');
        await flush(copy.id);

        expect((await admin('POST', `/_instances/${copy.id}/reset`)).statusCode).to.equal(200);
        expect(await endpointsOf(copy.id)).to.equal([{ id: endpoint!.id, url: receiver.url, delivered: 0, failed: 1 }]);
        expect(await events(copy.id)).to.equal([{ id: eventId(1), name: 'Bread' }]);
        expect(await attempts(copy.id)).to.equal([{ event: eventId(2), attempt: 1, status: 500 }]);
        expect(await advance(copy.id, '1h')).to.equal(0);
        expect(receiver.deliveries.length).to.equal(1);
    });

    it('keeps the endpoints with their counts and the attempts on a restore, and puts back the snapshot\'s event log and what it had pending', async () => {

        const { id, base_path: base } = await create();
        const [endpoint] = await hooks(id, [{ url: receiver.url, secret: fixedSecret, retry_schedule: ['1h'] }]);
        receiver.respondWith(500);
        await product(base, 'Bread');
        await flush(id);
        const { snapshot_id: snapshot } = ok<{ snapshot_id: string }>(await admin('POST', `/_instances/${id}/snapshots`), 201);

        expect(await advance(id, '1h')).to.equal(1);
        await product(base, 'Cake');
        expect(await flush(id)).to.equal(1);
        expect((await admin('POST', `/_instances/${id}/restore`, { snapshot_id: snapshot })).statusCode).to.equal(200);
        expect(await endpointsOf(id)).to.equal([{ id: endpoint!.id, url: receiver.url, delivered: 2, failed: 1 }]);
        expect(await attempts(id)).to.equal([{ event: eventId(1), attempt: 1, status: 500 }, { event: eventId(1), attempt: 2, status: 200 }, { event: eventId(2), attempt: 1, status: 200 }]);
        expect(await events(id)).to.equal([{ id: eventId(1), name: 'Bread' }]);

        // The snapshot's world had the retry pending: it is made again, under the same webhook-id.
        expect(await advance(id, '1h')).to.equal(1);
        const got = receiver.deliveries;
        expect(got.map(({ event, status }) => [event!.data.name, status])).to.equal([['Bread', 500], ['Bread', 200], ['Cake', 200], ['Bread', 200]]);
        expect(got[3]!.webhookId).to.equal(got[0]!.webhookId);
        expect(got[3]!.body).to.equal(got[0]!.body);
    });

    it('drops on a restore what the snapshot had pending to an endpoint replaced since, and keeps the one that replaced it', async () => {

        const { id, base_path: base } = await create({ pay: true });
        await hooks(id, [{ url: receiver.url, secret: fixedSecret, retry_schedule: ['1h'] }]);
        receiver.respondWith(500);
        await product(base, 'Bread');
        await flush(id);
        const { snapshot_id: snapshot } = ok<{ snapshot_id: string }>(await admin('POST', `/_instances/${id}/snapshots`), 201);
        const [replaced] = await hooks(id, [{ url: `${receiver.url}new`, secret: fixedSecret, types: ['commerce.product.created'] }]);

        expect((await admin('POST', `/_instances/${id}/restore`, { snapshot_id: snapshot })).statusCode).to.equal(200);
        expect(await endpointsOf(id)).to.equal([{ id: replaced!.id, url: `${receiver.url}new`, delivered: 0, failed: 0 }]);
        expect(await advance(id, '1h')).to.equal(0);
        await product(base, 'Cake');
        expect(await flush(id)).to.equal(1);
        expect(receiver.deliveries.map(({ path, event }) => [path, event!.data.name])).to.equal([['/', 'Bread'], ['/new', 'Cake']]);

        // Its patterns came back with it: an inquiry is not sent to it.
        expect((await server.inject({ method: 'POST', url: `${base}/v1/commerce/inquiries`, headers: bearer(server, 'ann'), payload: { business_id: bakery, message: 'Open on Sundays?' } })).statusCode).to.equal(201);
        expect(await flush(id)).to.equal(0);

        // With every endpoint removed, the snapshot's comes back no more than its delivery does.
        expect((await admin('DELETE', `/_instances/${id}/webhooks`)).statusCode).to.equal(204);
        expect((await admin('POST', `/_instances/${id}/restore`, { snapshot_id: snapshot })).statusCode).to.equal(200);
        expect(await endpointsOf(id)).to.equal([]);
        expect(await advance(id, '1h')).to.equal(0);
        expect(receiver.deliveries.length).to.equal(2);
    });
});


describe('webhook-ids on each engine', () => {

    for (const engine of engines) {
        it(`names the default data set's deliveries by their event, endpoint and body on ${engine}`, async () => {

            const receiver = await startReceiver({ status: 200 });
            const server = await engineServer(engine, { webhookTimeoutMs: 1000 });
            try {
                const admin = (method: string, url: string, payload?: object) => server.inject({ method, url, headers: adminBearer(server), payload } as ServerInjectOptions);
                const set = await admin('PUT', '/_webhooks', { endpoints: [{ url: receiver.url, secret: receiver.secret, types: ['commerce.product.created'] }] });
                expect(set.statusCode, set.payload).to.equal(200);
                const [endpoint] = body<{ endpoints: Endpoint[] }>(set).endpoints;
                expect(endpoint!.id).to.match(/^we_[A-Za-z0-9_-]{22}$/);
                const res = await server.inject({ method: 'POST', url: '/v1/commerce/products', headers: bearer(server, 'ann'), payload: { name: 'Bread', price: 2.5, currency: 'USD', business_id: bakery } });
                expect(res.statusCode, res.payload).to.equal(201);
                const [got] = await receiver.waitFor(1);
                expect(got!.verified).to.equal(true);
                expect(got!.webhookId).to.equal(webhookId(got!.event!.id, endpoint!.id, got!.body));
                expect(new Webhook(receiver.secret).verify(got!.body, got!.headers)).to.include({ type: 'commerce.product.created' });
            }
            finally {
                await server.stop();
                await receiver.close();
            }
        });
    }
});


describe('webhookId', () => {

    it('is the same for one event, endpoint and body, and another when any of them differs', () => {

        const event = { position: 1, id: '00000000-0000-4000-9000-000000000001', type: 'commerce.product.created' as const, created_at: start, data: '{"name":"Bread"}' };
        const text = deliveryBody(event);
        const id = webhookId(event.id, 'we_000000000001', text);
        expect(id).to.match(/^msg_[A-Za-z0-9_-]{26}$/);
        expect(webhookId(event.id, 'we_000000000001', deliveryBody({ ...event }))).to.equal(id);
        const others = [
            webhookId('00000000-0000-4000-9000-000000000002', 'we_000000000001', text),
            webhookId(event.id, 'we_000000000002', text),
            webhookId(event.id, 'we_000000000001', deliveryBody({ ...event, data: '{"name":"Cake"}' }))
        ];
        expect(new Set([id, ...others]).size).to.equal(4);
    });
});
