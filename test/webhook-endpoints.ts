import Code from '@hapi/code';
import type { Server, ServerInjectOptions, ServerInjectResponse } from '@hapi/hapi';
import Lab from '@hapi/lab';
import { Webhook } from 'standardwebhooks';

import type { DeliveryEntry as Delivery } from '../lib/events/deliveries';
import { expectError } from './helpers/errors';
import { engineServer, engines } from './helpers/postgres';
import { startReceiver, type Receiver } from './helpers/receiver';
import { adminBearer, bearer, body, type List } from './helpers/server';


export const lab = Lab.script();
const { describe, it, before, after, beforeEach } = lab;
const { expect } = Code;


// Ids of the shipped demo data.
const bakery = 'd851fadb-03ca-5a24-ba16-c15cce19933b';
const start = '2030-01-01T00:00:00.000Z';

interface Endpoint {
    id: string;
    url: string;
    types: string[] | null;
    secret: string;
    disabled: boolean;
    disabled_reason: string | null;
    disabled_at: string | null;
    previous_secret_until: string | null;
    delivered?: number;
    failed?: number;
}

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
