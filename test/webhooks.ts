import Stream from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

import Code from '@hapi/code';
import type { Server, ServerInjectOptions, ServerInjectResponse } from '@hapi/hapi';
import Lab from '@hapi/lab';
import { Webhook } from 'standardwebhooks';

import type { DeliveryEntry as Delivery } from '../lib/data-set/deliveries';
import { mintToken } from '../lib/auth';
import { webhookId } from '../lib/outbox';
import { scrubJsonText } from '../lib/secrets';
import { expectError } from './helpers/errors';
import { engineServer, engines } from './helpers/postgres';
import { startReceiver, type Receiver } from './helpers/receiver';
import { adminBearer, bearer, body, type List, tempDir, testServer } from './helpers/server';
import { until } from './helpers/until';
import { bakery, fixedSecret, start, type Endpoint } from './helpers/webhooks';


export const lab = Lab.script();
const { describe, it, before, after, beforeEach } = lab;
const { expect } = Code;


describe('webhooks', () => {

    let server: Server;
    let receiver: Receiver;
    const logLines: string[] = [];

    const admin = (method: string, url: string, payload?: object) => server.inject({ method, url, headers: adminBearer(server), payload } as ServerInjectOptions);
    const ok = <T>(res: ServerInjectResponse, status = 200): T => {

        expect(res.statusCode, res.payload).to.equal(status);
        return body<T>(res);
    };

    const create = async (options: object = {}) => ok<{ id: string; base_path: string }>(await admin('POST', '/_instances', { clock: start, ids: 'sequential', ...options }), 201);
    const hooks = async (id: string, endpoints: object[]) => ok<{ endpoints: Endpoint[] }>(await admin('PUT', `/_instances/${id}/webhooks`, { endpoints })).endpoints;
    const product = async (base: string, name: string) => ok<{ id: string }>(await server.inject({ method: 'POST', url: `${base}/v1/commerce/products`, headers: bearer(server, 'ann'), payload: { name, price: 2.5, currency: 'USD', business_id: bakery } }), 201);
    const deliveries = async (id: string) => ok<List<Delivery>>(await admin('GET', `/_instances/${id}/webhooks/deliveries?limit=100`)).data;
    const flush = async (id: string) => ok<{ attempted: number }>(await admin('POST', `/_instances/${id}/webhooks/flush`)).attempted;
    const advance = async (id: string, by: string) => ok<{ attempted: number; applied: object }>(await admin('PUT', `/_instances/${id}/clock`, { advance: by }));

    before(async () => {

        const logStream = new Stream.Writable({
            write(chunk: Buffer, _encoding, done) {

                logLines.push(chunk.toString());
                done();
            }
        });
        server = await testServer({ webhookTimeoutMs: 300, logLevel: 'debug', logStream });
        receiver = await startReceiver();
    });

    after(async () => {

        await server.stop();
        await receiver.close();
    });

    beforeEach(() => {

        receiver.received.length = 0;
        receiver.answers.length = 0;
    });

    it('sends each event as a signed POST once its request has answered, which Standard Webhooks verifies', async () => {

        const { id, base_path: base } = await create();
        const [endpoint] = await hooks(id, [{ url: receiver.url }]);
        expect(endpoint).to.equal({ id: endpoint!.id, url: receiver.url, types: null, secret: endpoint!.secret, signing_clock: 'wall', retry_schedule: ['5s', '5m', '30m', '2h', '5h', '10h', '10h'], created_at: start,
            disabled: false, disabled_reason: null, disabled_at: null, previous_secret_until: null
        });
        expect(endpoint!.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);

        const made = await product(base, 'Bread');
        await until('the receiver to get the delivery', () => receiver.received.length === 1);
        const [got] = receiver.received;
        const event = new Webhook(endpoint!.secret).verify(got!.body, got!.headers as Record<string, string>) as { id: string; type: string; created_at: string; data: { id: string } };
        expect(event).to.equal({ id: '00000000-0000-4000-9000-000000000001', type: 'commerce.product.created', created_at: start, data: event.data });
        expect(event.data.id).to.equal(made.id);
        expect(got!.headers).to.include({ 'content-type': 'application/json', 'webhook-id': webhookId(event.id, endpoint!.id, got!.body), 'user-agent': 'localgate/0.1.0' });
        expect(Math.abs(Number(got!.headers['webhook-timestamp']) - Date.now() / 1000)).to.be.below(5);

        await flush(id);
        const [entry] = await deliveries(id);
        expect(entry).to.equal({
            id: `${webhookId(event.id, endpoint!.id, got!.body)}.1`,
            event_id: event.id,
            type: 'commerce.product.created',
            webhook_id: webhookId(event.id, endpoint!.id, got!.body),
            endpoint_id: endpoint!.id,
            url: receiver.url,
            attempt: 1,
            at: start,
            status: 200,
            duration_ms: entry!.duration_ms,
            error: null,
            fault: null,
            next_attempt_at: null,
            request: {
                headers: {
                    'content-type': 'application/json',
                    'webhook-id': webhookId(event.id, endpoint!.id, got!.body),
                    'webhook-timestamp': String(got!.headers['webhook-timestamp']),
                    'webhook-signature': String(got!.headers['webhook-signature']),
                    'user-agent': 'localgate/0.1.0',
                    'content-length': String(Buffer.byteLength(got!.body))
                },
                body: got!.body,
                body_truncated: false
            },
            response: { headers: entry!.response!.headers, body: 'thanks', body_truncated: false }
        });
        expect(entry!.response!.headers).to.equal({ 'content-type': 'text/plain', date: entry!.response!.headers.date, connection: 'keep-alive', 'keep-alive': 'timeout=5', 'transfer-encoding': 'chunked' });

        const read = ok<{ endpoints: Endpoint[] }>(await admin('GET', `/_instances/${id}/webhooks`)).endpoints;
        expect(read).to.equal([{ ...endpoint!, secret: 'whsec_********', delivered: 1, failed: 0 }]);
    });

    it('retries a failed attempt when the clock reaches its next instant, with the same webhook-id, and counts it in the clock\'s answer', async () => {

        const { id, base_path: base } = await create();
        const [endpoint] = await hooks(id, [{ url: receiver.url, retry_schedule: ['30s', '1m'], secret: fixedSecret }]);
        receiver.answers.push(500);
        await product(base, 'Bread');
        // The attempt in flight is waited for.
        await flush(id);
        let [first] = await deliveries(id);
        expect(first).to.include({ attempt: 1, status: 500, error: null, next_attempt_at: '2030-01-01T00:00:30.000Z' });

        expect(await advance(id, '29s')).to.include({ attempted: 0 });
        expect(receiver.received.length).to.equal(1);
        expect(await advance(id, '1s')).to.include({ attempted: 1 });
        expect(receiver.received.length).to.equal(2);
        expect(receiver.received[1]!.headers['webhook-id']).to.equal(receiver.received[0]!.headers['webhook-id']);
        expect(receiver.received[1]!.body).to.equal(receiver.received[0]!.body);
        const entries = await deliveries(id);
        [first] = entries;
        expect(entries.map(({ attempt, status, at, next_attempt_at: next }) => ({ attempt, status, at, next }))).to.equal([
            { attempt: 1, status: 500, at: start, next: '2030-01-01T00:00:30.000Z' },
            { attempt: 2, status: 200, at: '2030-01-01T00:00:30.000Z', next: null }
        ]);
        expect(entries[1]!.id).to.equal(`${first!.webhook_id}.2`);
        const [read] = ok<{ endpoints: Endpoint[] }>(await admin('GET', `/_instances/${id}/webhooks`)).endpoints;
        expect(read).to.include({ id: endpoint!.id, delivered: 1, failed: 1 });
    });

    it('gives a delivery up after its last attempt, writing webhook.delivery.given_up, which is never delivered', async () => {

        const { id, base_path: base } = await create();
        const [endpoint] = await hooks(id, [{ url: receiver.url, retry_schedule: ['1m'] }]);
        receiver.answers.push(503, 503, 503);
        await product(base, 'Bread');
        await flush(id);
        expect(await flush(id)).to.equal(0);
        expect(await advance(id, '2m')).to.include({ attempted: 1 });
        expect(await advance(id, '2h')).to.include({ attempted: 0 });
        expect(receiver.received.length).to.equal(2);

        const entries = await deliveries(id);
        expect(entries.map(({ attempt, status, next_attempt_at: next }) => [attempt, status, next])).to.equal([[1, 503, '2030-01-01T00:01:00.000Z'], [2, 503, null]]);
        const logs = await server.app.localgate.instances.find(id)!.data.eventLogs();
        const events = (await Promise.all(logs.map((log) => log.list(null, null, 100)))).flat();
        const givenUp = events.find(({ type }) => type === 'webhook.delivery.given_up');
        expect(givenUp).to.include({ created_at: '2030-01-01T00:01:00.000Z' });
        expect(JSON.parse(givenUp!.data)).to.equal({ webhook_id: entries[0]!.webhook_id, endpoint_id: endpoint!.id, event_id: entries[0]!.event_id, event_type: 'commerce.product.created', attempts: 2 });
        expect(ok<{ endpoints: Endpoint[] }>(await admin('GET', `/_instances/${id}/webhooks`)).endpoints[0]).to.include({ delivered: 0, failed: 2 });
    });

    it('sends only the types an endpoint asks for, and retries under the wall clock by itself', async () => {

        const { id, base_path: base } = await create({ clock: undefined });
        await hooks(id, [{ url: receiver.url, types: ['logistics.*'] }, { url: `${receiver.url}/two`, types: ['commerce.product.created'], retry_schedule: ['100ms', '0s'] }]);
        receiver.answers.push(500, 500);
        await product(base, 'Bread');
        await until('the receiver to get the delivery and both retries', () => receiver.received.length === 3);
        await flush(id);
        expect(receiver.received.map(({ path }) => path)).to.equal(['/hook/two', '/hook/two', '/hook/two']);
        expect((await deliveries(id)).map(({ status, attempt }) => [attempt, status])).to.equal([[1, 500], [2, 500], [3, 200]]);
    });

    it('times out an attempt that gets no answer within WEBHOOK_TIMEOUT_MS', async () => {

        const { id, base_path: base } = await create();
        await hooks(id, [{ url: receiver.url, retry_schedule: ['1s'] }]);
        receiver.answers.push(() => undefined);
        await product(base, 'Bread');
        await until('the receiver to get the delivery', () => receiver.received.length === 1);
        expect(await deliveries(id)).to.equal([]);
        // Flush answers once the attempt in flight has timed out.
        expect(await flush(id)).to.equal(1);
        expect(await flush(id)).to.equal(0);
        const [entry] = await deliveries(id);
        expect(entry).to.include({ status: null, error: 'timeout', next_attempt_at: '2030-01-01T00:00:01.000Z' });
        expect(entry!.duration_ms).to.be.at.least(290);
        expect(await advance(id, '1s')).to.include({ attempted: 1 });
    });

    it('drops an attempt before it leaves, or counts one the receiver answered as failed, as outbound fault rules say', async () => {

        const { id, base_path: base } = await create();
        const [endpoint] = await hooks(id, [{ url: receiver.url, retry_schedule: ['10s', '10s'] }]);
        const { rules } = ok<{ rules: { id: string; hits: number }[] }>(await admin('PUT', `/_instances/${id}/faults`, { rules: [
            { direction: 'outbound', event: 'commerce.*', endpoint_id: endpoint!.id, drop: 'before', times: 1 },
            { direction: 'outbound', event: 'commerce.product.created', drop: 'after', times: 1, latency_ms: 20 }
        ] }));
        await product(base, 'Bread');
        await flush(id);
        expect(receiver.received.length).to.equal(0);
        expect(await advance(id, '10s')).to.include({ attempted: 1 });
        expect(receiver.received.length).to.equal(1);
        expect(await advance(id, '10s')).to.include({ attempted: 1 });
        expect(receiver.received.length).to.equal(2);
        // A genuine duplicate: the same delivery, received twice.
        expect(receiver.received[1]!.headers['webhook-id']).to.equal(receiver.received[0]!.headers['webhook-id']);
        expect(receiver.received[1]!.body).to.equal(receiver.received[0]!.body);
        expect((await deliveries(id)).map(({ attempt, status, error, fault, request, response }) => ({ attempt, status, error, fault, sent: request?.body ?? null, answered: response?.body ?? null }))).to.equal([
            { attempt: 1, status: null, error: 'dropped', fault: rules[0]!.id, sent: null, answered: null },
            { attempt: 2, status: 200, error: 'dropped', fault: rules[1]!.id, sent: receiver.received[0]!.body, answered: 'thanks' },
            { attempt: 3, status: 200, error: null, fault: null, sent: receiver.received[1]!.body, answered: 'thanks' }
        ]);
        expect(ok<{ rules: { hits: number }[] }>(await admin('GET', `/_instances/${id}/faults`)).rules.map(({ hits }) => hits)).to.equal([1, 1]);
        expect(ok<{ endpoints: Endpoint[] }>(await admin('GET', `/_instances/${id}/webhooks`)).endpoints[0]).to.include({ delivered: 1, failed: 2 });
    });

    it('signs on the instance\'s clock byte for byte the same in two runs', async () => {

        const run = async () => {

            receiver.received.length = 0;
            const { id, base_path: base } = await create();
            await hooks(id, [{ url: receiver.url, secret: fixedSecret, signing_clock: 'instance', retry_schedule: ['1h'] }]);
            receiver.answers.push(500);
            await product(base, 'Bread');
            await flush(id);
            await advance(id, '1h');
            return receiver.received.map(({ headers, body: text }) => ({ id: headers['webhook-id'], timestamp: headers['webhook-timestamp'], signature: headers['webhook-signature'], body: text }));
        };

        const first = await run();
        expect(first.map(({ timestamp }) => timestamp)).to.equal(['1893456000', '1893459600']);
        expect(await run()).to.equal(first);
        expect(first[0]!.id).to.equal(first[1]!.id);
        expect(first[0]!.signature).to.not.equal(first[1]!.signature);
    });

    it('shows a secret in full only in the PUT answer: never in GET, the request journal or a log line', async () => {

        const { id, base_path: base } = await create();
        const [minted, given] = await hooks(id, [{ url: receiver.url }, { url: receiver.url, secret: fixedSecret }]);
        await product(base, 'Bread');
        await flush(id);
        const read = await admin('GET', `/_instances/${id}/webhooks`);
        const journal = await admin('GET', `/_instances/${id}/requests?limit=100`);
        const everything = [read.payload, journal.payload, (await admin('GET', `/_instances/${id}/webhooks/deliveries`)).payload, (await admin('GET', `/_instances/${id}/export`)).payload, logLines.join('\n')].join('\n');
        for (const secret of [minted!.secret, given!.secret]) {
            expect(everything).to.not.contain(secret.slice(6));
        }

        // The journal keeps the API's requests only; the live log and the journal both hide a field named secret.
        expect(body<List<{ path: string }>>(journal).data.map(({ path }) => path)).to.equal(['/v1/commerce/products']);
        expect(JSON.parse(scrubJsonText(JSON.stringify({ endpoints: [given] }), []))).to.equal({ endpoints: [{ ...given, secret: '[hidden]' }] });
    });

    it('shows what each attempt sent and what came back, with the receiver\'s credentials, the endpoint\'s secret and the server\'s hidden', async () => {

        const { id, base_path: base } = await create();
        await hooks(id, [{ url: receiver.url, secret: fixedSecret }]);
        const token = mintToken(server.app.localgate.secret, 'ann');
        receiver.answers.push((response) => response.writeHead(400, { 'content-type': 'application/json', 'set-cookie': 'sid=1', 'x-echo': fixedSecret }).end(JSON.stringify({ error: 'bad', secret: fixedSecret, token, padding: 'p'.repeat(2000) })));
        const made = await server.inject({ method: 'POST', url: `${base}/v1/commerce/products`, headers: bearer(server, 'ann'), payload: { name: 'Bread', description: `key ${server.app.localgate.secret} and ${token}`, price: 2.5, currency: 'USD', business_id: bakery } });
        expect(made.statusCode).to.equal(201);
        await flush(id);

        const res = await admin('GET', `/_instances/${id}/webhooks/deliveries`);
        expect(res.statusCode).to.equal(200);
        const [entry] = body<List<Delivery>>(res).data;
        expect(entry!.status).to.equal(400);
        expect(entry!.request!.body).to.contain('"description":"key [hidden] and [hidden]"');
        expect(entry!.request!.body_truncated).to.equal(false);
        expect(entry!.request!.headers['webhook-signature']).to.equal(String(receiver.received[0]!.headers['webhook-signature']));
        expect(entry!.response!.headers).to.include({ 'content-type': 'application/json', 'set-cookie': '[hidden]', 'x-echo': '[hidden]' });
        expect(entry!.response!.body).to.startWith('{"error":"bad","secret":"[hidden]","token":"[hidden]","padding":"ppp');
        expect(entry!.response!.body.length).to.equal(1024);
        expect(entry!.response!.body_truncated).to.equal(true);
        for (const secret of [fixedSecret.slice(6), server.app.localgate.secret, token]) {
            expect(res.payload).to.not.contain(secret);
        }
    });

    it('hides the secret a rotation replaced wherever a receiver echoes it, while both sign', async () => {

        const { id, base_path: base } = await create();
        const [endpoint] = await hooks(id, [{ url: receiver.url, secret: fixedSecret }]);
        ok(await admin('POST', `/_instances/${id}/webhooks/${endpoint!.id}/rotate`, { overlap: '1h' }));
        receiver.answers.push((response) => response.writeHead(200, { 'x-echo': fixedSecret.slice(6) }).end(fixedSecret));
        await product(base, 'Bread');
        await flush(id);
        const res = await admin('GET', `/_instances/${id}/webhooks/deliveries`);
        expect(res.statusCode).to.equal(200);
        const [entry] = body<List<Delivery>>(res).data;
        expect(entry!.request!.headers['webhook-signature']).to.match(/^v1,\S+ v1,\S+$/);
        expect(entry!.response).to.equal({ headers: { ...entry!.response!.headers, 'x-echo': '[hidden]' }, body: '[hidden]', body_truncated: false });
        expect(res.payload).to.not.contain(fixedSecret.slice(6));
    });

    it('keeps the attempts in order, pages them, counts and finds them by pattern, and forgets them', async () => {

        const { id, base_path: base } = await create();
        const [one, two] = await hooks(id, [{ url: receiver.url, retry_schedule: ['1m'] }, { url: `${receiver.url}/two`, types: ['commerce.*'] }]);
        receiver.answers.push(500);
        await product(base, 'Bread');
        await flush(id);
        await advance(id, '1m');
        const all = await deliveries(id);
        expect(all.length).to.equal(3);
        const page = ok<List<Delivery>>(await admin('GET', `/_instances/${id}/webhooks/deliveries?limit=1&offset=1`));
        expect(page).to.equal({ data: [all[1]!], count: 1, total: 3 });

        const count = async (pattern?: object) => ok<{ count: number }>(await admin('POST', `/_instances/${id}/webhooks/deliveries/count`, pattern)).count;
        expect(await count()).to.equal(3);
        expect(await count({})).to.equal(3);
        expect(await count({ type: 'commerce.*' })).to.equal(3);
        expect(await count({ type: 'commerce.product.created' })).to.equal(3);
        expect(await count({ type: 'pay.*' })).to.equal(0);
        expect(await count({ type: 'commerce.inquiry.created' })).to.equal(0);
        expect(await count({ endpoint_id: one!.id })).to.equal(2);
        expect(await count({ endpoint_id: two!.id, attempt: 1, status: 200 })).to.equal(1);
        expect(await count({ status: null })).to.equal(0);
        expect(await count({ webhook_id: all[0]!.webhook_id, attempt: 2 })).to.equal(1);
        const found = ok<{ deliveries: Delivery[] }>(await admin('POST', `/_instances/${id}/webhooks/deliveries/find`, { status: 500 }));
        expect(found).to.equal({ deliveries: [all.find(({ status }) => status === 500)!] });

        expectError(await admin('POST', `/_instances/${id}/webhooks/deliveries/count`, { type: 'nothing.*' }), 400, 'validation_failed', 'type');
        expectError(await admin('POST', `/_instances/${id}/webhooks/deliveries/find`, { status: '500' }), 400, 'validation_failed', 'status');

        expect((await admin('DELETE', `/_instances/${id}/webhooks/deliveries`)).statusCode).to.equal(204);
        expect(await deliveries(id)).to.equal([]);
    });

    it('replaces the endpoints, dropping what was pending to the old ones, and removes them all', async () => {

        const { id, base_path: base } = await create();
        await hooks(id, [{ url: receiver.url, retry_schedule: ['1m'] }]);
        receiver.answers.push(500);
        await product(base, 'Bread');
        await flush(id);
        const [replaced] = await hooks(id, [{ url: `${receiver.url}/new`, retry_schedule: ['0s', '1500ms', '2h', '1d', '7d'] }]);
        expect(replaced!.retry_schedule).to.equal(['0ms', '1500ms', '2h', '1d', '7d']);
        expect(await advance(id, '1h')).to.include({ attempted: 0 });
        expect(receiver.received.length).to.equal(1);

        expect((await admin('DELETE', `/_instances/${id}/webhooks`)).statusCode).to.equal(204);
        expect(ok<{ endpoints: Endpoint[] }>(await admin('GET', `/_instances/${id}/webhooks`))).to.equal({ endpoints: [] });
        await product(base, 'Cake');
        expect(await flush(id)).to.equal(0);
    });

    it('serves the default data set at /_webhooks', async () => {

        const [endpoint] = ok<{ endpoints: Endpoint[] }>(await admin('PUT', '/_webhooks', { endpoints: [{ url: receiver.url, types: ['commerce.product.created'] }] })).endpoints;
        await product('', 'Bread');
        await until('the receiver to get the delivery', () => receiver.received.length === 1);
        expect(ok<{ attempted: number }>(await admin('POST', '/_webhooks/flush')).attempted).to.be.within(0, 1);
        expect(ok<{ endpoints: Endpoint[] }>(await admin('GET', '/_webhooks')).endpoints[0]).to.include({ id: endpoint!.id, delivered: 1 });
        expect(ok<List<Delivery>>(await admin('GET', '/_webhooks/deliveries')).total).to.equal(1);
        expect(ok<{ count: number }>(await admin('POST', '/_webhooks/deliveries/count', { type: '*' })).count).to.equal(1);
        expect(ok<{ deliveries: Delivery[] }>(await admin('POST', '/_webhooks/deliveries/find', {})).deliveries.length).to.equal(1);
        expect((await admin('DELETE', '/_webhooks/deliveries')).statusCode).to.equal(204);
        expect((await admin('DELETE', '/_webhooks')).statusCode).to.equal(204);
        expect(ok<{ now: string; attempted: number }>(await admin('PUT', '/_clock', { advance: '1s' })).attempted).to.equal(0);
    });

    it('refuses what an endpoint cannot be, naming the field', async () => {

        const { id } = await create();
        const refusals: [object, string, string][] = [
            [{ url: 'http://example.com/hook' }, 'endpoints.0.url', 'endpoints[0].url must be an http: or https: URL without a user name or password, to a host WEBHOOK_HOSTS allows (127.0.0.1, localhost, ::1, host.docker.internal; any 127.x.x.x counts as 127.0.0.1): set WEBHOOK_HOSTS to allow another'],
            [{ url: 'ftp://127.0.0.1/hook' }, 'endpoints.0.url', 'endpoints[0].url must be an http: or https: URL without a user name or password, to a host WEBHOOK_HOSTS allows (127.0.0.1, localhost, ::1, host.docker.internal; any 127.x.x.x counts as 127.0.0.1): set WEBHOOK_HOSTS to allow another'],
            [{ url: 'not a url' }, 'endpoints.0.url', 'endpoints[0].url must be an http: or https: URL without a user name or password, to a host WEBHOOK_HOSTS allows (127.0.0.1, localhost, ::1, host.docker.internal; any 127.x.x.x counts as 127.0.0.1): set WEBHOOK_HOSTS to allow another'],
            [{ url: 'http://user:pw@127.0.0.1/hook' }, 'endpoints.0.url', 'endpoints[0].url must be an http: or https: URL without a user name or password, to a host WEBHOOK_HOSTS allows (127.0.0.1, localhost, ::1, host.docker.internal; any 127.x.x.x counts as 127.0.0.1): set WEBHOOK_HOSTS to allow another'],
            [{ url: 'http://:pw@127.0.0.1/hook' }, 'endpoints.0.url', 'endpoints[0].url must be an http: or https: URL without a user name or password, to a host WEBHOOK_HOSTS allows (127.0.0.1, localhost, ::1, host.docker.internal; any 127.x.x.x counts as 127.0.0.1): set WEBHOOK_HOSTS to allow another'],
            [{}, 'endpoints.0.url', 'endpoints[0].url is required'],
            [{ url: receiver.url, types: ['pay.nothing'] }, 'endpoints.0.types.0', 'endpoints[0].types[0] must be an event type (such as pay.transaction.completed) or a prefix ending with * that matches one (pay.*, *)'],
            [{ url: receiver.url, types: ['weather.*'] }, 'endpoints.0.types.0', 'endpoints[0].types[0] must be an event type (such as pay.transaction.completed) or a prefix ending with * that matches one (pay.*, *)'],
            [{ url: receiver.url, types: 'pay.*' }, 'endpoints.0.types', 'endpoints[0].types must be an array'],
            [{ url: receiver.url, secret: 'hunter2' }, 'endpoints.0.secret', 'endpoints[0].secret must be whsec_ followed by the base64 of 24 to 64 bytes'],
            [{ url: receiver.url, secret: `whsec_${Buffer.alloc(16).toString('base64')}` }, 'endpoints.0.secret', 'endpoints[0].secret must be whsec_ followed by the base64 of 24 to 64 bytes'],
            [{ url: receiver.url, signing_clock: 'server' }, 'endpoints.0.signing_clock', 'endpoints[0].signing_clock must be one of [wall, instance]'],
            [{ url: receiver.url, retry_schedule: ['5 minutes'] }, 'endpoints.0.retry_schedule.0', 'endpoints[0].retry_schedule[0] must be a duration of at most 7d, such as 500ms, 5s, 5m, 2h or 1d'],
            [{ url: receiver.url, retry_schedule: ['8d'] }, 'endpoints.0.retry_schedule.0', 'endpoints[0].retry_schedule[0] must be a duration of at most 7d, such as 500ms, 5s, 5m, 2h or 1d'],
            ...['604800001ms', '604801s', '10081m', '169h'].map((delay): [object, string, string] => [{ url: receiver.url, retry_schedule: [delay] }, 'endpoints.0.retry_schedule.0', 'endpoints[0].retry_schedule[0] must be a duration of at most 7d, such as 500ms, 5s, 5m, 2h or 1d']),
            [{ url: 'http://127.0.0.1:65536/hook' }, 'endpoints.0.url', 'endpoints[0].url must be an http: or https: URL without a user name or password, to a host WEBHOOK_HOSTS allows (127.0.0.1, localhost, ::1, host.docker.internal; any 127.x.x.x counts as 127.0.0.1): set WEBHOOK_HOSTS to allow another'],
            [{ url: 'http://127.0.0.256/hook' }, 'endpoints.0.url', 'endpoints[0].url must be an http: or https: URL without a user name or password, to a host WEBHOOK_HOSTS allows (127.0.0.1, localhost, ::1, host.docker.internal; any 127.x.x.x counts as 127.0.0.1): set WEBHOOK_HOSTS to allow another'],
            [{ url: 'http://127.0.0.1/hook%zz' }, 'endpoints.0.url', 'endpoints[0].url must be an http: or https: URL without a user name or password, to a host WEBHOOK_HOSTS allows (127.0.0.1, localhost, ::1, host.docker.internal; any 127.x.x.x counts as 127.0.0.1): set WEBHOOK_HOSTS to allow another'],
            [{ url: receiver.url, retry_schedule: Array.from({ length: 21 }, () => '1s') }, 'endpoints.0.retry_schedule', 'endpoints[0].retry_schedule must contain less than or equal to 20 items']
        ];

        for (const [endpoint, field, message] of refusals) {
            const error = expectError(await admin('PUT', `/_instances/${id}/webhooks`, { endpoints: [endpoint] }), 400, 'validation_failed', field);
            expect(error.details![0]!.message).to.equal(message);
        }

        expectError(await admin('PUT', `/_instances/${id}/webhooks`, { endpoints: Array.from({ length: 17 }, () => ({ url: receiver.url })) }), 400, 'validation_failed', 'endpoints');
        expectError(await admin('PUT', `/_instances/${id}/webhooks`, {}), 400, 'validation_failed', 'endpoints');
        const loopbacks = await hooks(id, [{ url: 'http://127.0.0.9:1/hook' }, { url: 'http://[::1]:65535/hook?to=me' }, { url: 'http://localhost/hooks/a%20b?to=%C3%A9' }, { url: 'https://host.docker.internal/hook', retry_schedule: ['604800000ms', '604800s', '10080m', '168h', '7d'] }]);
        expect(loopbacks.map(({ url }) => url)).to.equal(['http://127.0.0.9:1/hook', 'http://[::1]:65535/hook?to=me', 'http://localhost/hooks/a%20b?to=%C3%A9', 'https://host.docker.internal/hook']);
        expect(loopbacks[3]!.retry_schedule).to.equal(['7d', '7d', '7d', '7d', '7d']);
    });

    it('answers 401 without a token, 403 to a token that is not an admin\'s, and 404 for an instance there is not', async () => {

        const paths: [string, string][] = [['PUT', '/webhooks'], ['GET', '/webhooks'], ['DELETE', '/webhooks'], ['POST', '/webhooks/flush'], ['GET', '/webhooks/deliveries'], ['DELETE', '/webhooks/deliveries'], ['POST', '/webhooks/deliveries/count'], ['POST', '/webhooks/deliveries/find']];
        const { id } = await create();
        for (const [method, path] of paths) {
            expectError(await server.inject({ method, url: `/_instances/${id}${path}` }), 401);
            expectError(await server.inject({ method, url: `/_instances/${id}${path}`, headers: bearer(server, 'ann') }), 403);
            expectError(await server.inject({ method, url: `/_${path.slice(1)}`, headers: bearer(server, 'ann') }), 403);
            const payload = method === 'PUT' ? { endpoints: [] } : undefined;
            expectError(await admin(method, `/_instances/00000000-0000-4000-8000-00000000dead${path}`, payload), 404, 'instance_not_found');
        }

        // A request refused before it found its data set notices nothing.
        expectError(await server.inject({ url: '/v1/commerce/products', headers: { 'x-localgate-instance': 'gone' } }), 404, 'instance_not_found');
    });
});


describe('webhooks across a restart', () => {

    it('sends the deliveries a stopped process left pending as the default data set opens', async () => {

        const receiver = await startReceiver();
        const dataDir = tempDir();
        const options = { dataDir, storage: 'file' as const, webhookTimeoutMs: 300 };
        let server = await testServer(options);
        const admin = (method: string, url: string, payload?: object) => server.inject({ method, url, headers: adminBearer(server), payload } as ServerInjectOptions);
        expect((await admin('PUT', '/_webhooks', { endpoints: [{ url: receiver.url, retry_schedule: ['100ms'] }] })).statusCode).to.equal(200);
        receiver.answers.push(500);
        const res = await server.inject({ method: 'POST', url: '/v1/commerce/products', headers: bearer(server, 'ann'), payload: { name: 'Bread', price: 2.5, currency: 'USD', business_id: bakery } });
        expect(res.statusCode).to.equal(201);
        await admin('POST', '/_webhooks/flush');
        await server.stop();
        expect(receiver.received.length).to.equal(1);
        await sleep(150);

        server = await testServer({ ...options, jwtSecret: server.app.localgate.settings.jwtSecret });
        expect(receiver.received.length).to.equal(2);
        expect(receiver.received[1]!.headers['webhook-id']).to.equal(receiver.received[0]!.headers['webhook-id']);
        expect(answered(await admin('GET', '/_webhooks/deliveries'))).to.include({ total: 1 });
        await server.stop();
        await receiver.close();
    });
});

describe('webhooks on each engine', () => {

    for (const engine of engines) {
        it(`gives a delivery up when its next attempt would fall due after 9999-12-31, never sending it at once, on ${engine}`, { timeout: 20_000 }, async () => {

            const receiver = await startReceiver();
            const server = await engineServer(engine, { webhookTimeoutMs: 500 });
            try {
                const admin = (method: string, url: string, payload?: object) => server.inject({ method, url, headers: adminBearer(server), payload } as ServerInjectOptions);
                expect((await admin('PUT', '/_clock', { now: '9999-12-31T23:59:00Z' })).statusCode).to.equal(200);
                // The second retry is due at the last instant a record holds, the third would be past it.
                const [endpoint] = (answered(await admin('PUT', '/_webhooks', { endpoints: [{ url: receiver.url, retry_schedule: ['30s', '29999ms', '1ms'] }] })) as { endpoints: Endpoint[] }).endpoints;
                receiver.answers.push(500, 500, 500, 500);
                const res = await server.inject({ method: 'POST', url: '/v1/commerce/products', headers: bearer(server, 'ann'), payload: { name: 'Bread', price: 2.5, currency: 'USD', business_id: bakery } });
                expect(res.statusCode, res.payload).to.equal(201);
                await admin('POST', '/_webhooks/flush');
                expect(answered(await admin('PUT', '/_clock', { now: '9999-12-31T23:59:59.999Z' }))).to.include({ attempted: 2 });
                expect(receiver.received.length).to.equal(3);

                const entries = (answered(await admin('GET', '/_webhooks/deliveries?limit=100')) as unknown as List<Delivery>).data;
                expect(entries.map(({ attempt, at, next_attempt_at: next }) => [attempt, at, next])).to.equal([
                    [1, '9999-12-31T23:59:00.000Z', '9999-12-31T23:59:30.000Z'],
                    [2, '9999-12-31T23:59:30.000Z', '9999-12-31T23:59:59.999Z'],
                    [3, '9999-12-31T23:59:59.999Z', null]
                ]);
                const events = (answered(await admin('GET', '/_events?limit=100')) as unknown as List<{ type: string; created_at: string; data: object }>).data;
                const givenUp = events.filter(({ type }) => type === 'webhook.delivery.given_up');
                expect(givenUp.map(({ created_at: at, data }) => [at, data])).to.equal([['9999-12-31T23:59:59.999Z', { webhook_id: entries[0]!.webhook_id, endpoint_id: endpoint!.id, event_id: entries[0]!.event_id, event_type: 'commerce.product.created', attempts: 3 }]]);
                expect(await admin('POST', '/_webhooks/flush')).to.include({ statusCode: 200 });
                expect(receiver.received.length).to.equal(3);
            }
            finally {
                await server.stop();
                await receiver.close();
            }
        });

        it(`sends the default data set's events signed, and retries them, on ${engine}`, async () => {

            const receiver = await startReceiver();
            const server = await engineServer(engine, { webhookTimeoutMs: 500 });
            try {
                const admin = (method: string, url: string, payload?: object) => server.inject({ method, url, headers: adminBearer(server), payload } as ServerInjectOptions);
                const [endpoint] = (answered(await admin('PUT', '/_webhooks', { endpoints: [{ url: receiver.url, retry_schedule: ['100ms'] }] })) as { endpoints: Endpoint[] }).endpoints;
                receiver.answers.push(500);
                const res = await server.inject({ method: 'POST', url: '/v1/commerce/products', headers: bearer(server, 'ann'), payload: { name: 'Bread', price: 2.5, currency: 'USD', business_id: bakery } });
                expect(res.statusCode, res.payload).to.equal(201);
                await until('the receiver to get the failed delivery and its retry', () => receiver.received.length === 2);
                const [first, second] = receiver.received;
                const verifier = new Webhook(endpoint!.secret);
                expect(verifier.verify(second!.body, second!.headers as Record<string, string>)).to.include({ type: 'commerce.product.created' });
                expect(second!.headers['webhook-id']).to.equal(first!.headers['webhook-id']);
                await admin('POST', '/_webhooks/flush');
                expect((answered(await admin('GET', '/_webhooks')) as { endpoints: Endpoint[] }).endpoints[0]).to.include({ delivered: 1, failed: 1 });
            }
            finally {
                await server.stop();
                await receiver.close();
            }
        });
    }
});


function answered(res: ServerInjectResponse): Record<string, unknown> {

    expect(res.statusCode, res.payload).to.equal(200);
    return body(res);
}

