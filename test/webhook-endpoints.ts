import Code from '@hapi/code';
import type { Server, ServerInjectOptions, ServerInjectResponse } from '@hapi/hapi';
import Lab from '@hapi/lab';
import { Webhook } from 'standardwebhooks';

import type { DeliveryEntry as Delivery } from '../lib/data-set/deliveries';
import { expectError } from './helpers/errors';
import { engineServer, engines } from './helpers/postgres';
import { startReceiver, type Receiver } from './helpers/receiver';
import { adminBearer, bearer, body, type List, testServer } from './helpers/server';
import { bakery, fixedSecret as oldSecret, start, type Endpoint } from './helpers/webhooks';


export const lab = Lab.script();
const { describe, it, before, after, beforeEach } = lab;
const { expect } = Code;


interface Event {
    id: string;
    type: string;
    created_at: string;
}


// A server's default data set on one engine, on a frozen clock, and what a test does with it over HTTP.
function harness(engine: 'sqlite' | 'postgres', options: object = {}) {

    const world = {
        server: null as unknown as Server,
        receiver: null as unknown as Receiver,
        admin: (method: string, url: string, payload?: object) => world.server.inject({ method, url, headers: adminBearer(world.server), payload } as ServerInjectOptions),
        ok: <T>(res: ServerInjectResponse, status = 200): T => {

            expect(res.statusCode, res.payload).to.equal(status);
            return body<T>(res);
        },
        hooks: async (endpoints: object[]) => world.ok<{ endpoints: Endpoint[] }>(await world.admin('PUT', '/_webhooks', { endpoints })).endpoints,
        read: async () => world.ok<{ endpoints: Endpoint[] }>(await world.admin('GET', '/_webhooks')).endpoints,
        product: async (name: string) => world.ok<{ id: string }>(await world.server.inject({ method: 'POST', url: '/v1/commerce/products', headers: bearer(world.server, 'ann'), payload: { name, price: 2.5, currency: 'USD', business_id: bakery } }), 201),
        // The newest event of a type.
        last: async (type: string) => world.ok<List<Event>>(await world.admin('GET', `/_events?type=${type}&limit=1000`)).data.at(-1)!,
        deliveries: async () => world.ok<List<Delivery>>(await world.admin('GET', '/_webhooks/deliveries?limit=100')).data,
        flush: async () => world.ok<{ attempted: number }>(await world.admin('POST', '/_webhooks/flush')).attempted,
        advance: async (by: string) => world.ok<{ attempted: number }>(await world.admin('PUT', '/_clock', { advance: by })),
        now: async () => world.ok<{ now: string }>(await world.admin('GET', '/_clock')).now,
        resend: (eventId: string, payload?: object) => world.admin('POST', `/_events/${eventId}/resend`, payload),
        recover: (endpointId: string, since: string) => world.admin('POST', `/_webhooks/${endpointId}/recover`, { since })
    };

    before(async () => {

        world.server = await engineServer(engine, { clock: start, webhookTimeoutMs: 1000, ...options });
        world.receiver = await startReceiver();
    });

    after(async () => {

        await world.server.stop();
        await world.receiver.close();
    });

    beforeEach(async () => {

        world.receiver.received.length = 0;
        world.receiver.answers.length = 0;
        await world.admin('DELETE', '/_webhooks');
        await world.admin('DELETE', '/_webhooks/deliveries');
    });

    return world;
}


for (const engine of engines) {
    describe(`resending an event on ${engine}`, () => {

        const w = harness(engine);

        it('makes a new attempt of one event now with the same webhook-id, to each endpoint it matches or to the one named', async () => {

            const [all, products] = await w.hooks([{ url: w.receiver.url }, { url: `${w.receiver.url}/products`, types: ['commerce.product.*'] }]);
            await w.product('Bread');
            await w.flush();
            const event = await w.last('commerce.product.created');
            expect(w.receiver.received.length).to.equal(2);
            const [first] = w.receiver.received;

            expect(w.ok(await w.resend(event.id))).to.equal({ attempted: 2 });
            expect(w.receiver.received.length).to.equal(4);
            const again = w.receiver.received.slice(2).find(({ path }) => path === '/hook')!;
            expect(again.headers['webhook-id']).to.equal(first!.headers['webhook-id']);
            expect(again.body).to.equal(first!.body);
            expect(new Webhook(all!.secret).verify(again.body, again.headers as Record<string, string>)).to.include({ id: event.id });

            expect(w.ok(await w.resend(event.id, { endpoint_id: products!.id }))).to.equal({ attempted: 1 });
            expect(w.receiver.received.at(-1)!.path).to.equal('/hook/products');
            const attempts = (await w.deliveries()).filter(({ endpoint_id: id }) => id === products!.id);
            expect(attempts.map(({ attempt, status, at, next_attempt_at: next }) => [attempt, status, at, next])).to.equal([[1, 200, start, null], [2, 200, start, null], [3, 200, start, null]]);
            expect((await w.read()).map(({ delivered }) => delivered)).to.equal([2, 3]);
        });

        it('gives an endpoint set after the event its first attempt, and retries a failed resend as its schedule says', async () => {

            await w.product('Rye');
            const event = await w.last('commerce.product.created');
            const [late] = await w.hooks([{ url: w.receiver.url, retry_schedule: ['1m'] }]);
            expect(await w.flush()).to.equal(0);

            w.receiver.answers.push(500);
            expect(w.ok(await w.resend(event.id))).to.equal({ attempted: 1 });
            const now = await w.now();
            expect(await w.advance('1m')).to.include({ attempted: 1 });
            const attempts = await w.deliveries();
            expect(attempts.map(({ attempt, status, endpoint_id: id }) => [attempt, status, id])).to.equal([[1, 500, late!.id], [2, 200, late!.id]]);
            expect(attempts[0]!.next_attempt_at).to.equal(new Date(Date.parse(now) + 60_000).toISOString());
        });

        it('answers attempted 0 when no endpoint matches, and keeps a disabled endpoint\'s resend pending until it is enabled', async () => {

            await w.product('Spelt');
            const event = await w.last('commerce.product.created');
            await w.hooks([{ url: w.receiver.url, types: ['logistics.*'] }]);
            expect(w.ok(await w.resend(event.id))).to.equal({ attempted: 0 });

            const [paused] = await w.hooks([{ url: w.receiver.url, disabled: true }]);
            expect(w.ok(await w.resend(event.id))).to.equal({ attempted: 0 });
            expect(w.receiver.received.length).to.equal(0);
            w.ok(await w.admin('PATCH', `/_webhooks/${paused!.id}`, { disabled: false }));
            await w.flush();
            expect(w.receiver.received.length).to.equal(1);
            expect(JSON.parse(w.receiver.received[0]!.body)).to.include({ id: event.id });
        });

        it('refuses an event it cannot send again, naming the field', async () => {

            const [bakeryOnly] = await w.hooks([{ url: w.receiver.url, types: ['logistics.*'], retry_schedule: [] }]);
            await w.product('Oat');
            const event = await w.last('commerce.product.created');
            expectError(await w.resend('evt_none'), 404, 'event_not_found', 'event_id');
            expectError(await w.resend(event.id, { endpoint_id: 'we_none' }), 422, 'endpoint_not_found', 'endpoint_id');
            expectError(await w.resend(event.id, { endpoint_id: bakeryOnly!.id }), 422, 'event_type_not_matched', 'endpoint_id');
            expectError(await w.resend(event.id, { endpoint_id: 7 }), 400, 'validation_failed', 'endpoint_id');

            // A given-up event is the dispatcher's own: never delivered, so never sent again.
            await w.hooks([{ url: w.receiver.url, retry_schedule: [] }]);
            w.receiver.answers.push(500);
            await w.product('Barley');
            await w.flush();
            const givenUp = await w.last('webhook.delivery.given_up');
            expectError(await w.resend(givenUp.id), 422, 'event_not_delivered', 'event_id');
        });
    });
}


for (const engine of engines) {
    describe(`pausing an endpoint on ${engine}`, () => {

        const w = harness(engine, { webhookDisableAfter: 2 });

        it('keeps a disabled endpoint\'s deliveries pending until it is enabled, then sends them in due order', async () => {

            const [paused, open] = await w.hooks([{ url: `${w.receiver.url}/paused`, disabled: true }, { url: `${w.receiver.url}/open` }]);
            const now = await w.now();
            expect(paused).to.include({ disabled: true, disabled_reason: 'paused', disabled_at: now });
            expect(open).to.include({ disabled: false, disabled_reason: null, disabled_at: null });

            const first = await w.product('Bread');
            await w.advance('1m');
            const second = await w.product('Rye');
            await w.flush();
            expect(w.receiver.received.map(({ path }) => path)).to.equal(['/hook/open', '/hook/open']);
            expect(await w.flush()).to.equal(0);

            const enabled = w.ok<Endpoint>(await w.admin('PATCH', `/_webhooks/${paused!.id}`, { disabled: false }));
            expect(enabled).to.include({ id: paused!.id, secret: 'whsec_********', disabled: false, disabled_reason: null, disabled_at: null, delivered: 0, failed: 0 });
            await w.flush();
            const sent = w.receiver.received.filter(({ path }) => path === '/hook/paused').map(({ body: text }) => (JSON.parse(text) as { data: { id: string } }).data.id);
            expect(sent).to.equal([first.id, second.id]);

            const again = w.ok<Endpoint>(await w.admin('PATCH', `/_webhooks/${paused!.id}`, { disabled: true }));
            expect(again).to.include({ disabled: true, disabled_reason: 'paused', disabled_at: await w.now(), delivered: 2 });
            await w.advance('1m');
            // Pausing a paused endpoint keeps when it was paused.
            expect(w.ok<Endpoint>(await w.admin('PATCH', `/_webhooks/${paused!.id}`, { disabled: true }))).to.include({ disabled_at: again.disabled_at });
            await w.product('Spelt');
            await w.flush();
            expect(w.receiver.received.filter(({ path }) => path === '/hook/paused').length).to.equal(2);
        });

        it('disables an endpoint that gave up WEBHOOK_DISABLE_AFTER deliveries in a row, a delivery between resetting the count', async () => {

            const [endpoint] = await w.hooks([{ url: w.receiver.url, retry_schedule: [] }]);
            // Given up, delivered, given up: one in a row.
            w.receiver.answers.push(500, 200, 500);
            for (const name of ['A', 'B', 'C']) {
                await w.product(name);
                await w.flush();
            }

            expect((await w.read())[0]).to.include({ disabled: false, delivered: 1, failed: 2 });
            await w.advance('1m');
            w.receiver.answers.push(500);
            await w.product('D');
            await w.flush();
            const at = await w.now();
            expect((await w.read())[0]).to.include({ disabled: true, disabled_reason: 'given_up', disabled_at: at, failed: 3 });

            // What follows waits, and goes once the endpoint is enabled.
            await w.product('E');
            expect(await w.flush()).to.equal(0);
            expect(w.receiver.received.length).to.equal(4);
            w.ok(await w.admin('PATCH', `/_webhooks/${endpoint!.id}`, { disabled: false }));
            await w.flush();
            expect(w.receiver.received.length).to.equal(5);
            expect(JSON.parse(w.receiver.received[4]!.body)).to.include({ type: 'commerce.product.created' });
            expect((await w.read())[0]).to.include({ disabled: false, delivered: 2, failed: 3 });
        });

        it('refuses a change it cannot make, naming the field', async () => {

            const [endpoint] = await w.hooks([{ url: w.receiver.url }]);
            expectError(await w.admin('PATCH', '/_webhooks/we_none', { disabled: true }), 404, 'endpoint_not_found', 'endpoint_id');
            expectError(await w.admin('PATCH', `/_webhooks/${endpoint!.id}`, {}), 400, 'validation_failed', 'disabled');
            expectError(await w.admin('PATCH', `/_webhooks/${endpoint!.id}`, { disabled: 'no' }), 400, 'validation_failed', 'disabled');
            expectError(await w.admin('PUT', '/_webhooks', { endpoints: [{ url: w.receiver.url, disabled: 1 }] }), 400, 'validation_failed', 'endpoints.0.disabled');
        });
    });

    describe(`rotating a secret on ${engine}`, () => {

        const w = harness(engine);

        it('signs with the old secret and the new one for the overlap, then with the new one, each verified by Standard Webhooks', async () => {

            const [endpoint] = await w.hooks([{ url: w.receiver.url, secret: oldSecret }]);
            const now = await w.now();
            const rotated = w.ok<Endpoint>(await w.admin('POST', `/_webhooks/${endpoint!.id}/rotate`, { overlap: '1h' }));
            expect(rotated).to.include({ id: endpoint!.id, previous_secret_until: new Date(Date.parse(now) + 3_600_000).toISOString(), disabled: false });
            expect(rotated.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
            expect(rotated.secret).to.not.equal(oldSecret);
            expect((await w.read())[0]).to.include({ secret: 'whsec_********', previous_secret_until: rotated.previous_secret_until });

            await w.product('Bread');
            await w.flush();
            const [during] = w.receiver.received;
            expect(during!.headers['webhook-signature']).to.match(/^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
            const headers = during!.headers as Record<string, string>;
            expect(new Webhook(oldSecret).verify(during!.body, headers)).to.include({ type: 'commerce.product.created' });
            expect(new Webhook(rotated.secret).verify(during!.body, headers)).to.include({ type: 'commerce.product.created' });

            await w.advance('1h');
            await w.product('Rye');
            await w.flush();
            const [, later] = w.receiver.received;
            expect(later!.headers['webhook-signature']).to.match(/^v1,[A-Za-z0-9+/]{43}=$/);
            expect(new Webhook(rotated.secret).verify(later!.body, later!.headers as Record<string, string>)).to.include({ type: 'commerce.product.created' });
            expect(() => new Webhook(oldSecret).verify(later!.body, later!.headers as Record<string, string>)).to.throw('No matching signature found');
        });

        it('keeps the old secret 24 hours by default, and refuses what it cannot rotate', async () => {

            const [endpoint] = await w.hooks([{ url: w.receiver.url }]);
            const now = await w.now();
            const rotated = w.ok<Endpoint>(await w.admin('POST', `/_webhooks/${endpoint!.id}/rotate`));
            expect(rotated.previous_secret_until).to.equal(new Date(Date.parse(now) + 86_400_000).toISOString());
            expectError(await w.admin('POST', '/_webhooks/we_none/rotate'), 404, 'endpoint_not_found', 'endpoint_id');
            expectError(await w.admin('POST', `/_webhooks/${endpoint!.id}/rotate`, { overlap: '8d' }), 400, 'validation_failed', 'overlap');
        });
    });

    describe(`recovering an endpoint's deliveries on ${engine}`, () => {

        const w = harness(engine);

        it('sends again each failed or given-up delivery whose event is since the instant, and counts them', async () => {

            const [endpoint] = await w.hooks([{ url: w.receiver.url, retry_schedule: ['1h'] }]);
            // Before since: given up.
            w.receiver.answers.push(500, 500);
            await w.product('Old');
            await w.flush();
            await w.advance('1h');
            const since = await w.now();
            // Since: one given up (its retry failed too), one failed and waiting for its retry, one delivered.
            w.receiver.answers.push(500);
            await w.product('Given up');
            await w.flush();
            await w.advance('30m');
            w.receiver.answers.push(500);
            await w.product('Waiting');
            await w.flush();
            await w.product('Delivered');
            await w.flush();
            w.receiver.answers.push(500);
            expect(await w.advance('31m')).to.include({ attempted: 1 });
            const sentBefore = w.receiver.received.length;
            const names = (from: number) => w.receiver.received.slice(from).map(({ body: text }) => (JSON.parse(text) as { data: { name: string } }).data.name);

            expect(w.ok(await w.recover(endpoint!.id, since))).to.equal({ attempted: 2 });
            expect(names(sentBefore)).to.equal(['Given up', 'Waiting']);
            const attempts = (await w.deliveries()).slice(-2);
            expect(attempts.map(({ attempt, status, next_attempt_at: next }) => [attempt, status, next])).to.equal([[3, 200, null], [2, 200, null]]);
            expect(w.ok(await w.recover(endpoint!.id, since))).to.equal({ attempted: 0 });
            expect(w.ok(await w.recover(endpoint!.id, start))).to.equal({ attempted: 1 });
            expect(names(sentBefore + 2)).to.equal(['Old']);
            expect((await w.read())[0]).to.include({ delivered: 4, failed: 5 });
        });

        it('refuses what it cannot recover, naming the field', async () => {

            const [endpoint] = await w.hooks([{ url: w.receiver.url }]);
            expectError(await w.recover('we_none', start), 404, 'endpoint_not_found', 'endpoint_id');
            expectError(await w.recover(endpoint!.id, 'yesterday'), 400, 'validation_failed', 'since');
            expectError(await w.admin('POST', `/_webhooks/${endpoint!.id}/recover`, {}), 400, 'validation_failed', 'since');
        });
    });
}


describe('endpoints of an instance', () => {

    let server: Server;
    let receiver: Receiver;

    before(async () => {

        server = await testServer({ webhookDisableAfter: 0 });
        receiver = await startReceiver();
    });

    after(async () => {

        await server.stop();
        await receiver.close();
    });

    const admin = async <T>(method: string, url: string, payload?: object, status = 200): Promise<T> => {

        const res = await server.inject({ method, url, headers: adminBearer(server), payload } as ServerInjectOptions);
        expect(res.statusCode, res.payload).to.equal(status);
        return body<T>(res);
    };

    it('pauses, rotates, resends and recovers under /_instances/{id}, and never disables with WEBHOOK_DISABLE_AFTER 0', async () => {

        const { id, base_path: served } = await admin<{ id: string; base_path: string }>('POST', '/_instances', { clock: start }, 201);
        const base = `/_instances/${id}`;
        const { endpoints: [endpoint] } = await admin<{ endpoints: Endpoint[] }>('PUT', `${base}/webhooks`, { endpoints: [{ url: receiver.url, retry_schedule: [] }] });
        receiver.answers.push(500, 500, 500, 500, 500, 500);
        for (let i = 0; i < 6; i += 1) {
            const res = await server.inject({ method: 'POST', url: `${served}/v1/commerce/products`, headers: bearer(server, 'ann'), payload: { name: `P${i}`, price: 1, currency: 'USD', business_id: bakery } });
            expect(res.statusCode).to.equal(201);
            await admin('POST', `${base}/webhooks/flush`);
        }

        expect((await admin<{ endpoints: Endpoint[] }>('GET', `${base}/webhooks`)).endpoints[0]).to.include({ disabled: false, failed: 6 });
        expect(await admin('PATCH', `${base}/webhooks/${endpoint!.id}`, { disabled: true })).to.include({ disabled: true });
        expect(await admin('PATCH', `${base}/webhooks/${endpoint!.id}`, { disabled: false })).to.include({ disabled: false });
        const rotated = await admin<Endpoint>('POST', `${base}/webhooks/${endpoint!.id}/rotate`, { overlap: '0s' });
        expect(rotated.previous_secret_until).to.equal(start);
        expect(await admin('POST', `${base}/webhooks/${endpoint!.id}/recover`, { since: start })).to.equal({ attempted: 6 });
        const events = await admin<List<Event>>('GET', `${base}/events?type=commerce.product.created`);
        expect(await admin('POST', `${base}/events/${events.data[0]!.id}/resend`, { endpoint_id: endpoint!.id })).to.equal({ attempted: 1 });
        // With no overlap left, the new secret alone signs.
        const last = receiver.received.at(-1)!;
        expect(new Webhook(rotated.secret).verify(last.body, last.headers as Record<string, string>)).to.include({ id: events.data[0]!.id });
        expect(last.headers['webhook-signature']).to.match(/^v1,\S+$/);
        expect(await admin('POST', '/_instances/none/events/x/resend', undefined, 404)).to.include({ code: 'instance_not_found' });
    });
});


describe('an endpoint\'s given-up deliveries across namespaces', () => {

    let server: Server;
    let receiver: Receiver;

    before(async () => {

        server = await testServer({ webhookDisableAfter: 2 });
        receiver = await startReceiver();
    });

    after(async () => {

        await server.stop();
        await receiver.close();
    });

    it('counts them in a row whichever namespace wrote the event, a delivery in another resetting the count', async () => {

        const made = await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server), payload: { clock: start, pay: true } });
        const { id, base_path: served } = body<{ id: string; base_path: string }>(made);
        const admin = (method: string, url: string, payload?: object) => server.inject({ method, url: `/_instances/${id}${url}`, headers: adminBearer(server), payload } as ServerInjectOptions);
        await admin('PUT', '/webhooks', { endpoints: [{ url: receiver.url, types: ['commerce.*', 'pay.*'], retry_schedule: [] }] });
        const product = () => server.inject({ method: 'POST', url: `${served}/v1/commerce/products`, headers: bearer(server, 'ann'), payload: { name: 'Bread', price: 1, currency: 'USD', business_id: bakery } });
        const deposit = (key: string) => server.inject({ method: 'POST', url: `${served}/v1/pay/gateway/deposit`, headers: { ...bearer(server, 'alice'), 'idempotency-key': key }, payload: { provider_id: 'bank-transfer', asset: 'USD', amount: 100 } });
        const state = async () => body<{ endpoints: Endpoint[] }>(await admin('GET', '/webhooks')).endpoints[0];

        // Commerce gives up, pay delivers, commerce gives up: one in a row.
        receiver.answers.push(500, 200, 500);
        expect((await product()).statusCode).to.equal(201);
        await admin('POST', '/webhooks/flush');
        expect((await deposit('d-1')).statusCode).to.equal(201);
        await admin('POST', '/webhooks/flush');
        expect((await product()).statusCode).to.equal(201);
        await admin('POST', '/webhooks/flush');
        expect(await state()).to.include({ disabled: false, delivered: 1, failed: 2 });

        // Pay gives up: two in a row, and the endpoint is disabled.
        receiver.answers.push(500);
        expect((await deposit('d-2')).statusCode).to.equal(201);
        await admin('POST', '/webhooks/flush');
        expect(await state()).to.include({ disabled: true, disabled_reason: 'given_up', disabled_at: start, failed: 3 });
    });
});
