import Code from '@hapi/code';
import Lab from '@hapi/lab';

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

        // The handler under test: credits the amount of each completed transaction once, keyed by the event's id,
        // however often the event is delivered.
        const credits = new Map<string, number>();
        let runs = 0;
        const handle = (delivery: ReceivedWebhook) => {

            runs += 1;
            const event = delivery.event;
            if (!delivery.verified || event?.type !== 'pay.transaction.completed' || credits.has(event.id)) {
                return;
            }

            credits.set(event.id, Number(event.data.amount));
        };

        const receiver = await startReceiver();
        const t = await kit.instance({ seed: 'none', pay: true, ids: 'sequential', clock: '2030-01-01T00:00:00Z' });
        const [endpoint] = await t.webhooks.set([{ url: receiver.url, secret: receiver.secret, types: ['pay.transaction.completed'] }]);
        // The first delivery of the completion reaches the receiver, but its answer is lost: localgate sends it again.
        const [rule] = t.faults.set([{ direction: 'outbound', event: 'pay.transaction.completed', drop: 'after', times: 1 }]).rules;

        const deposit = await t.inject({
            method: 'POST', url: '/v1/pay/gateway/deposit', headers: { ...t.auth('alice'), 'idempotency-key': 'deposit-1' },
            payload: { provider_id: 'bank-transfer', asset: 'USD', amount: 10000 }
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
        expect([...credits]).to.equal([[completed, 10000]]);

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
});
