import Code from '@hapi/code';
import Lab from '@hapi/lab';
import { Webhook } from 'standardwebhooks';

import { createTestKit, startReceiver, type ReceivedWebhook, type TestKit } from '../lib/testing';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


// The webhook-handler test of docs/testing.md ("Webhooks"), as a user writes it with the kit.

describe('a webhook handler tested with the kit', () => {

    let kit: TestKit;

    before(async () => {

        kit = await createTestKit();
    });

    after(async () => {

        await kit.close();
    });

    it('credits a settled bank transfer once, though its webhook came twice', async () => {

        // The handler under test: credits the amount of each completed transaction to the order its metadata names, once,
        // keyed by the event's id, however often the event is delivered.
        const credits = new Map<string, { order: string; amount: number }>();
        let runs = 0;
        const handle = (delivery: ReceivedWebhook) => {

            runs += 1;
            const event = delivery.event;
            if (!delivery.verified || event?.type !== 'pay.transaction.completed' || credits.has(event.id)) {
                return;
            }

            credits.set(event.id, { order: (event.data.metadata as { order_id: string }).order_id, amount: Number(event.data.amount) });
        };

        const receiver = await startReceiver();
        const t = await kit.instance({ seed: 'none', pay: true, ids: 'sequential', clock: '2030-01-01T00:00:00Z' });
        const [endpoint] = await t.webhooks.set([{ url: receiver.url, secret: receiver.secret, types: ['pay.transaction.completed'] }]);
        // The first delivery of the completion reaches the receiver, but its answer is lost: localgate sends it again.
        const [rule] = t.faults.set([{ direction: 'outbound', event: 'pay.transaction.completed', drop: 'after', times: 1 }]).rules;

        const deposit = await t.inject({
            method: 'POST', url: '/v1/pay/gateway/deposit', headers: { ...t.auth('alice'), 'idempotency-key': 'deposit-1' },
            payload: { provider_id: 'bank-transfer', asset: 'USD', amount: 10000, metadata: { order_id: 'order-42' } }
        });
        expect(deposit.statusCode).to.equal(201);

        // Two days settle the transfer and send its completion; the retry is due 5 s later.
        expect(await t.clock.move({ by: '2d' })).to.equal({ now: new Date('2030-01-03T00:00:00Z'), applied: { 'pay.transaction.completed': 1 }, attempted: 1, remaining: 0 });
        expect(await t.clock.advance('5s')).to.equal({});

        for (const delivery of await receiver.waitFor(2)) {
            handle(delivery);
        }

        const completed = '00000000-0000-4000-9000-000000000002';
        expect(receiver.deliveries.map(({ verified, webhookId, event }) => ({ verified, webhookId, id: event?.id }))).to.equal([
            { verified: true, webhookId: receiver.deliveries[0]!.webhookId, id: completed },
            { verified: true, webhookId: receiver.deliveries[0]!.webhookId, id: completed }
        ]);
        expect(runs).to.equal(2);
        expect([...credits]).to.equal([[completed, { order: 'order-42', amount: 10000 }]]);

        // What localgate says it did: the first attempt answered but dropped by the rule, the second delivered.
        expect(t.webhooks.deliveries.find({ type: 'pay.transaction.completed' }).map(({ attempt, status, fault, endpoint_id: id }) => ({ attempt, status, fault, id }))).to.equal([
            { attempt: 1, status: 204, fault: rule!.id, id: endpoint!.id },
            { attempt: 2, status: 204, fault: null, id: endpoint!.id }
        ]);
        expect((await t.events.list({ type: 'pay.*' })).map(({ id, type }) => ({ id, type }))).to.equal([
            { id: '00000000-0000-4000-9000-000000000001', type: 'pay.transaction.created' },
            { id: completed, type: 'pay.transaction.completed' }
        ]);

        await t.close();
        await receiver.close();
    });

    it('gets every completion through an outage, a pause and a secret rotation: recover, resend and both signatures', async () => {

        const receiver = await startReceiver();
        const t = await kit.instance({ seed: 'none', pay: true, ids: 'sequential', clock: '2030-01-01T00:00:00Z' });
        const [endpoint] = await t.webhooks.set([{ url: receiver.url, secret: receiver.secret, types: ['pay.transaction.completed'], retry_schedule: ['1m'] }]);
        const deposit = (key: string) => t.inject({ method: 'POST', url: '/v1/pay/gateway/deposit', headers: { ...t.auth('alice'), 'idempotency-key': key }, payload: { provider_id: 'bank-transfer', asset: 'USD', amount: 10000 } });

        // The handler is down: the completion fails, its retry a minute later too, and it is given up.
        receiver.respondWith(503, { times: 2 });
        expect((await deposit('deposit-1')).statusCode).to.equal(201);
        expect(await t.clock.move({ by: '2d' })).to.include({ attempted: 1 });
        expect(await t.clock.move({ by: '1m' })).to.include({ attempted: 1 });
        expect(t.webhooks.deliveries.find({ status: 503 }).map(({ attempt, next_attempt_at: next }) => [attempt, next])).to.equal([[1, '2030-01-03T00:01:00.000Z'], [2, null]]);

        // Back up, the handler asks for what it missed since the outage began.
        expect(await t.webhooks.recover(endpoint!.id, '2030-01-01T00:00:00Z')).to.equal(1);

        // Paused while it deploys, it gets nothing; enabled, what waited arrives.
        await t.webhooks.disable(endpoint!.id);
        expect((await deposit('deposit-2')).statusCode).to.equal(201);
        expect(await t.clock.move({ by: '2d' })).to.include({ attempted: 0 });
        expect(await t.webhooks.enable(endpoint!.id)).to.include({ disabled: false, delivered: 1, failed: 2 });
        await t.webhooks.flush();

        // The secret is rolled: for an hour both sign, so the handler, still on the old one, verifies; so would the new one.
        const rotated = await t.webhooks.rotate(endpoint!.id, { overlap: '1h' });
        const [first] = await t.events.list({ type: 'pay.transaction.completed' });
        expect(await t.webhooks.resend(first!.id)).to.equal(1);

        const received = await receiver.waitFor(5);
        expect(received.map(({ verified, status, event }) => [verified, status, event?.id])).to.equal([
            [true, 503, first!.id], [true, 503, first!.id], [true, 204, first!.id], [true, 204, '00000000-0000-4000-9000-000000000005'], [true, 204, first!.id]
        ]);
        expect(new Set(received.filter(({ event }) => event?.id === first!.id).map(({ webhookId }) => webhookId)).size).to.equal(1);
        const resent = received[4]!;
        expect(new Webhook(rotated.secret).verify(resent.body, resent.headers)).to.include({ id: first!.id });

        await t.close();
        await receiver.close();
    });
});
