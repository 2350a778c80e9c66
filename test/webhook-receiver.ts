import Crypto from 'node:crypto';
import Net from 'node:net';

import Code from '@hapi/code';
import Lab from '@hapi/lab';
import { Webhook } from 'standardwebhooks';

import { createTestKit, startReceiver, type WebhookReceiver } from '../lib/testing';


export const lab = Lab.script();
const { describe, it, afterEach } = lab;
const { expect } = Code;


const secret = `whsec_${Crypto.randomBytes(24).toString('base64')}`;
const event = { id: '00000000-0000-4000-9000-000000000001', type: 'pay.transaction.created' as const, created_at: '2030-01-01T00:00:00.000Z', data: { id: 't1', amount: 100 } };


/** Headers as localgate signs a delivery: webhook-id, the timestamp in whole seconds, and the v1 signature of both and the body. */
function signed(body: string, options: { id?: string; at?: Date; key?: string } = {}): Record<string, string> {

    const { id = 'msg_one', at = new Date(), key = secret } = options;
    return {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(key).sign(id, at, body)
    };
}


function post(receiver: WebhookReceiver, body: string, headers: Record<string, string>, path = ''): Promise<Response> {

    return fetch(receiver.url + path, { method: 'POST', body, headers });
}


describe('startReceiver()', () => {

    let receiver: WebhookReceiver | undefined;

    afterEach(async () => {

        await receiver?.close();
        receiver = undefined;
    });

    it('records each delivery in arrival order, verified with the secret, its event parsed, answering 204', async () => {

        receiver = await startReceiver({ secret });
        expect(receiver.url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/$/);
        expect(receiver.secret).to.equal(secret);

        const body = JSON.stringify(event);
        const first = await post(receiver, body, signed(body, { id: 'msg_a' }), 'hooks?x=1');
        expect(first.status).to.equal(204);
        const second = await post(receiver, body, signed(body, { id: 'msg_b' }));
        expect(second.status).to.equal(204);

        const [a, b] = await receiver.waitFor(2);
        expect(a).to.include({ seq: 1, method: 'POST', path: '/hooks?x=1', body, event, webhookId: 'msg_a', verified: true, failure: null, status: 204 });
        expect(a!.headers).to.include({ 'content-type': 'application/json', 'webhook-id': 'msg_a' });
        expect(a!.receivedAt).to.be.a.date();
        expect(b).to.include({ seq: 2, path: '/', webhookId: 'msg_b', verified: true });
        expect(receiver.deliveries).to.have.length(2);
    });

    it('marks a delivery unverified, saying why: another secret, no signature headers, a stale timestamp', async () => {

        receiver = await startReceiver({ secret });
        const body = JSON.stringify(event);
        const other = `whsec_${Crypto.randomBytes(32).toString('base64')}`;
        await post(receiver, body, signed(body, { key: other }));
        await post(receiver, body, { 'content-type': 'application/json' });
        await post(receiver, body, signed(body, { at: new Date(Date.now() - 10 * 60_000) }));
        await post(receiver, body, signed(body, { at: new Date(Date.now() + 10 * 60_000) }));
        const tampered = signed(body);
        await post(receiver, JSON.stringify({ ...event, data: { id: 't1', amount: 1000 } }), tampered);

        expect(receiver.deliveries.map(({ verified, failure, status }) => ({ verified, failure, status }))).to.equal([
            { verified: false, failure: 'No matching signature found', status: 204 },
            { verified: false, failure: 'Missing required headers', status: 204 },
            { verified: false, failure: 'Message timestamp too old', status: 204 },
            { verified: false, failure: 'Message timestamp too new', status: 204 },
            { verified: false, failure: 'No matching signature found', status: 204 }
        ]);
        expect(receiver.deliveries[1]!.webhookId).to.be.null();
    });

    it('records a body that is no event with event null', async () => {

        receiver = await startReceiver({ secret });
        for (const body of ['not json', '42', '{"id":"e1"}', JSON.stringify({ ...event, type: 'pay.transaction.exploded' })]) {
            await post(receiver, body, signed(body));
        }

        expect(receiver.deliveries.map(({ event: parsed, verified }) => ({ parsed, verified }))).to.equal([
            { parsed: null, verified: true },
            { parsed: null, verified: true },
            { parsed: null, verified: true },
            { parsed: null, verified: true }
        ]);
    });

    it('answers a status it is told to the next requests, then its default again', async () => {

        receiver = await startReceiver({ secret, status: 200 });
        receiver.respondWith(500, { times: 2 });
        receiver.respondWith(410);
        const body = JSON.stringify(event);
        const statuses = [];
        for (let i = 0; i < 5; ++i) {
            statuses.push((await post(receiver, body, signed(body))).status);
        }

        expect(statuses).to.equal([500, 500, 410, 200, 200]);
        expect(receiver.deliveries.map((delivery) => delivery.status)).to.equal(statuses);
        expect(() => receiver!.respondWith(99)).to.throw(RangeError, 'status must be an HTTP status from 200 to 599, not 99');
        expect(() => receiver!.respondWith(600)).to.throw(RangeError, 'status must be an HTTP status from 200 to 599, not 600');
        expect(() => receiver!.respondWith(500.5)).to.throw(RangeError, 'status must be an HTTP status from 200 to 599, not 500.5');
        expect(() => receiver!.respondWith(500, { times: 0 })).to.throw(RangeError, 'times must be a whole number from 1, not 0');
        expect(() => receiver!.respondWith(500, { times: 1.5 })).to.throw(RangeError, 'times must be a whole number from 1, not 1.5');
    });

    it('waits for deliveries yet to come, and rejects after its timeout naming how many came', async () => {

        receiver = await startReceiver();
        expect(receiver.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
        expect(Buffer.from(receiver.secret.slice(6), 'base64')).to.have.length(32);

        const body = JSON.stringify(event);
        const waiting = receiver.waitFor(2, { timeoutMs: 5000 });
        const early = receiver.waitFor(1);
        await post(receiver, body, signed(body, { key: receiver.secret }));
        expect((await early).map((delivery) => delivery.verified)).to.equal([true]);
        await post(receiver, body, signed(body));
        expect((await waiting).map((delivery) => delivery.verified)).to.equal([true, false]);
        expect(await receiver.waitFor(1)).to.have.length(2);

        const started = Date.now();
        await expect(receiver.waitFor(3, { timeoutMs: 50 })).to.reject('Expected 3 webhook deliveries within 50 ms, got 2');
        expect(Date.now() - started).to.be.below(1000);

        receiver.clear();
        expect(receiver.deliveries).to.equal([]);
        await post(receiver, body, signed(body));
        expect(receiver.deliveries[0]!.seq).to.equal(1);
    });

    it('checks timestamps against the clock it is given, for endpoints signing on the instance clock', async () => {

        const instant = new Date('2030-01-01T00:00:00Z');
        receiver = await startReceiver({ secret, now: () => instant });
        const body = JSON.stringify(event);
        const at = (ms: number) => new Date(instant.getTime() + ms);
        await post(receiver, body, signed(body, { at: at(-60_000) }));
        await post(receiver, body, signed(body));
        await post(receiver, body, signed(body, { at: at(10 * 60_000) }));
        await post(receiver, body, signed(body, { at: at(0), key: `whsec_${Crypto.randomBytes(32).toString('base64')}` }));
        await post(receiver, body, { 'webhook-id': 'msg_x', 'webhook-timestamp': 'soon', 'webhook-signature': 'v1,abc' });
        await post(receiver, body, { 'webhook-id': 'msg_x', 'webhook-timestamp': '1893456000' });
        await post(receiver, body, { 'webhook-id': 'msg_x', 'webhook-signature': 'v1,abc' });
        await post(receiver, body, { 'webhook-timestamp': '1893456000', 'webhook-signature': 'v1,abc' });
        // Several signatures, as a sender rotating its secret sends them: one that matches is enough.
        const both = signed(body, { at: at(0) });
        await post(receiver, body, { ...both, 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')} v1a,xyz ${both['webhook-signature']}` });

        expect(receiver.deliveries.map(({ verified, failure }) => ({ verified, failure }))).to.equal([
            { verified: true, failure: null },
            { verified: false, failure: 'Message timestamp too old' },
            { verified: false, failure: 'Message timestamp too new' },
            { verified: false, failure: 'No matching signature found' },
            { verified: false, failure: 'Invalid Signature Headers' },
            { verified: false, failure: 'Missing required headers' },
            { verified: false, failure: 'Missing required headers' },
            { verified: false, failure: 'Missing required headers' },
            { verified: true, failure: null }
        ]);
    });

    it('checks each attempt of a long move against the instant it was due on the instance\'s clock, not the move\'s target', async () => {

        const kit = await createTestKit();
        const t = await kit.instance({ seed: 'none', pay: true, ids: 'sequential', clock: '2030-01-01T00:00:00Z' });
        receiver = await startReceiver({ instance: t });
        // The clock read as each delivery arrives: within a move it reads the move's target.
        const reading = await startReceiver({ secret: receiver.secret, now: () => t.clock.now() });
        await t.webhooks.set([receiver, reading].map(({ url, secret: key }) => ({ url, secret: key, types: ['pay.*'], signing_clock: 'instance' as const, retry_schedule: ['1d', '1d'] })));
        receiver.respondWith(500, { times: 2 });
        reading.respondWith(500, { times: 2 });

        const deposit = await t.inject({
            method: 'POST', url: '/v1/pay/gateway/deposit', headers: { ...t.auth('alice'), 'idempotency-key': 'deposit-1' },
            payload: { provider_id: 'bank-transfer', asset: 'USD', amount: 10000 }
        });
        expect(deposit.statusCode).to.equal(201);
        await t.webhooks.flush();
        // Three days: the creation's retries fall due on days 1 and 2, the transfer settles on day 2.
        expect(await t.clock.move({ by: '3d' })).to.equal({ now: new Date('2030-01-04T00:00:00Z'), applied: { 'pay.transaction.completed': 1 }, attempted: 6, remaining: 0 });

        const seen = (deliveries: readonly { event: { type: string } | null; headers: Record<string, string>; verified: boolean; failure: string | null }[]) => {

            return deliveries.map(({ event: sent, headers, verified, failure }) => ({ type: sent!.type, at: new Date(Number(headers['webhook-timestamp']) * 1000).toISOString(), verified, failure }))
                .sort((a, b) => a.at.localeCompare(b.at) || a.type.localeCompare(b.type));
        };

        expect(seen(receiver.deliveries)).to.equal([
            { type: 'pay.transaction.created', at: '2030-01-01T00:00:00.000Z', verified: true, failure: null },
            { type: 'pay.transaction.created', at: '2030-01-02T00:00:00.000Z', verified: true, failure: null },
            { type: 'pay.transaction.completed', at: '2030-01-03T00:00:00.000Z', verified: true, failure: null },
            { type: 'pay.transaction.created', at: '2030-01-03T00:00:00.000Z', verified: true, failure: null }
        ]);
        expect(seen(reading.deliveries)).to.equal([
            { type: 'pay.transaction.created', at: '2030-01-01T00:00:00.000Z', verified: true, failure: null },
            { type: 'pay.transaction.created', at: '2030-01-02T00:00:00.000Z', verified: false, failure: 'Message timestamp too old' },
            { type: 'pay.transaction.completed', at: '2030-01-03T00:00:00.000Z', verified: false, failure: 'Message timestamp too old' },
            { type: 'pay.transaction.created', at: '2030-01-03T00:00:00.000Z', verified: false, failure: 'Message timestamp too old' }
        ]);

        // Checked again once every attempt is journaled, a delivery holds as it did; a body that is no event is checked
        // against the clock; a message stamped with an instant at which none of its attempts was due is refused.
        const retry = receiver.deliveries.find(({ headers }) => headers['webhook-timestamp'] === String(Date.parse('2030-01-02T00:00:00Z') / 1000))!;
        await post(receiver, retry.body, retry.headers);
        await post(receiver, 'not an event', signed('not an event', { id: retry.webhookId!, at: t.clock.now(), key: receiver.secret }));
        await post(receiver, retry.body, signed(retry.body, { id: 'msg_other', at: new Date('2030-01-02T00:00:00Z'), key: receiver.secret }));
        expect(receiver.deliveries.slice(4).map(({ verified, failure }) => ({ verified, failure }))).to.equal([
            { verified: true, failure: null },
            { verified: true, failure: null },
            { verified: false, failure: 'Message timestamp too new' }
        ]);
        await reading.close();
        await kit.close();
    });

    it('answers 413 to a body over 1 MiB, recorded unverified', async () => {

        receiver = await startReceiver({ secret });
        const body = 'x'.repeat(1024 * 1024 + 1);
        const res = await post(receiver, body, signed(body));
        expect(res.status).to.equal(413);
        expect(receiver.deliveries[0]).to.include({ body: '', event: null, verified: false, failure: 'Body over 1048576 bytes', status: 413 });
    });

    it('records nothing of a sender that goes away mid-body, and keeps answering', async () => {

        receiver = await startReceiver({ secret });
        const { port } = new URL(receiver.url);
        const socket = Net.connect(Number(port), '127.0.0.1');
        await new Promise((resolve) => socket.once('connect', resolve));
        socket.write('POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 100\r\n\r\n{"id":');
        await new Promise((resolve) => setTimeout(resolve, 50));
        socket.destroy();
        await new Promise((resolve) => setTimeout(resolve, 50));

        const body = JSON.stringify(event);
        expect((await post(receiver, body, signed(body))).status).to.equal(204);
        expect(receiver.deliveries.map((delivery) => delivery.seq)).to.equal([1]);
    });

    it('refuses a secret that is not base64 as it starts', async () => {

        await expect(startReceiver({ secret: 'whsec_' })).to.reject('Secret can\'t be empty.');
    });
});
