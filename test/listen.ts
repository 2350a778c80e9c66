import Http from 'node:http';
import type { AddressInfo } from 'node:net';

import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { mintToken } from '../lib/auth';
import { mintSecret } from '../lib/signing';
import { deliveryLine, EventStreamParser, forwards, LineTooLong, listen, maxLineBytes, reconnectDelayMs, streamUrl, typesOf, type ListenOptions } from '../lib/listen';
import { createTestKit, startReceiver, type TestKit } from '../lib/testing';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


interface Lines {
    out: string[];
    err: string[];
    io: { out(line: string): void; err(line: string): void };
    // Resolves once a line of err matches.
    said(pattern: RegExp): Promise<void>;
}

function lines(): Lines {

    const out: string[] = [];
    const err: string[] = [];
    let waiters: { pattern: RegExp; resolve: () => void }[] = [];
    const heard = () => {

        waiters = waiters.filter(({ pattern, resolve }) => {

            if ([...out, ...err].some((line) => pattern.test(line))) {
                resolve();
                return false;
            }

            return true;
        });
    };

    return {
        out,
        err,
        io: {
            out: (line) => {

                out.push(line);
                heard();
            },
            err: (line) => {

                err.push(line);
                heard();
            }
        },
        said(pattern) {

            return new Promise<void>((resolve) => {

                waiters.push({ pattern, resolve });
                heard();
            });
        }
    };
}


// A stand-in for a server's stream: each connection is handed to the test, which writes what it wants.
async function fakeStream(handle: (request: Http.IncomingMessage, response: Http.ServerResponse, count: number) => void) {

    let count = 0;
    const server = Http.createServer((request, response) => {

        count += 1;
        handle(request, response, count);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close() {

            return new Promise<void>((resolve) => {

                server.close(() => resolve());
                server.closeAllConnections();
            });
        }
    };
}


// A port nothing listens on: one just freed.
async function freePort(): Promise<number> {

    const server = Http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
}


const event = (id: string, type = 'pay.transaction.completed') => `id: ${id}\nevent: ${type}\ndata: {"id":"${id}","type":"${type}","created_at":"2030-01-01T00:00:00.000Z","data":{}}\n\n`;


describe('localgate listen', () => {

    describe('its parts', () => {

        it('reads events of a stream split anywhere, skipping comments, retry lines and events without an id', () => {

            const parser = new EventStreamParser();
            const text = `retry: 2000\n\n: heartbeat\n\n${event('a')}id: b\r\nevent: pay.transaction.created\r\ndata: one\r\ndata:two\r\nunknown: x\r\nflag\r\n\r\nevent: x\ndata: y\n\nid: c\ndata: z\n\nid: d\nevent: e\n\n`;
            const events = [...text].flatMap((character) => parser.push(character));
            expect(events).to.equal([
                { id: 'a', type: 'pay.transaction.completed', data: '{"id":"a","type":"pay.transaction.completed","created_at":"2030-01-01T00:00:00.000Z","data":{}}' },
                { id: 'b', type: 'pay.transaction.created', data: 'one\ntwo' }
            ]);
        });

        it('refuses a line over the bound, whether it came whole or is still coming', () => {

            const long = 'x'.repeat(maxLineBytes + 1);
            expect(() => new EventStreamParser().push(`data: ${long}\n`)).to.throw(LineTooLong, /over 1048576 bytes/);
            const parser = new EventStreamParser();
            expect(parser.push(long.slice(0, maxLineBytes))).to.equal([]);
            expect(() => parser.push('xx')).to.throw(LineTooLong);
        });

        it('waits longer after each failure in a row, up to 10 s', () => {

            expect([0, 1, 2, 3, 4, 5, 6, 50].map(reconnectDelayMs)).to.equal([500, 1000, 2000, 4000, 8000, 10_000, 10_000, 10_000]);
        });

        it('forwards the types asked for, never the webhook.* events an endpoint is never sent', () => {

            const types = typesOf(['pay.*, logistics.booking.started', ' ']);
            expect(types).to.equal([{ pattern: 'pay.', prefix: true }, { pattern: 'logistics.booking.started', prefix: false }]);
            expect(typesOf([])).to.be.null();
            expect(['pay.transaction.created', 'logistics.booking.started', 'logistics.booking.completed'].map((type) => forwards(type, types))).to.equal([true, true, false]);
            expect(['commerce.product.created', 'webhook.delivery.given_up'].map((type) => forwards(type, null))).to.equal([true, false]);
            expect(forwards('webhook.delivery.given_up', typesOf(['*']))).to.be.false();
        });

        it('says each delivery in one line: status, type, event id and time, or why no answer came', () => {

            const sent = { id: 'e1', type: 'pay.transaction.completed' };
            const to = 'http://localhost:4000/hooks';
            expect([
                deliveryLine(sent, { status: 204 }, 12, to, 10_000),
                deliveryLine(sent, { error: 'timeout' }, 10_000, to, 10_000),
                deliveryLine(sent, { error: 'ECONNREFUSED' }, 1, to, 10_000),
                deliveryLine(sent, { error: 'UND_ERR_SOCKET' }, 1, to, 10_000)
            ]).to.equal([
                '→ 204 pay.transaction.completed e1 12 ms',
                '→ timeout pay.transaction.completed e1: no answer from http://localhost:4000/hooks within 10000 ms',
                '→ refused pay.transaction.completed e1: nothing listens at http://localhost:4000/hooks (connection refused)',
                '→ failed pay.transaction.completed e1: http://localhost:4000/hooks (UND_ERR_SOCKET)'
            ]);
        });

        it('reads the default data set\'s stream or an instance\'s', () => {

            expect(streamUrl('http://127.0.0.1:3000/', undefined)).to.equal('http://127.0.0.1:3000/_events/stream');
            expect(streamUrl('http://127.0.0.1:3000', 'a b')).to.equal('http://127.0.0.1:3000/_instances/a%20b/events/stream');
        });
    });

    describe('against a server', () => {

        let kit: TestKit;
        let url: string;

        before(async () => {

            kit = await createTestKit();
            url = await kit.listen();
        });

        after(async () => {

            await kit.close();
        });

        const options = (overrides: Partial<ListenOptions>): ListenOptions => ({
            url,
            forwardTo: 'http://127.0.0.1:9/',
            types: null,
            secret: mintSecret(),
            token: () => mintToken(kit.server.app.localgate.secret, 'listener', 60, { admin: true }),
            timeoutMs: 5000,
            ...overrides
        });

        it('forwards the events written from now on, signed so that the Standard Webhooks library verifies them, and stops when told', async () => {

            const t = await kit.instance({ seed: 'none', pay: true, ids: 'sequential', clock: '2030-01-01T00:00:00Z' });
            const receiver = await startReceiver();
            const earlier = await t.inject({ method: 'POST', url: '/v1/pay/gateway/deposit', headers: { ...t.auth('alice'), 'idempotency-key': 'before' }, payload: { provider_id: 'card', asset: 'USD', amount: 100 } });
            expect(earlier.statusCode).to.equal(201);

            const said = lines();
            const stop = new AbortController();
            const running = listen(options({ forwardTo: `${receiver.url}hooks`, instance: t.id, types: typesOf(['pay.transaction.completed']), secret: receiver.secret }), said.io, stop.signal);
            await said.said(/^Ready/);
            const deposit = await t.inject({ method: 'POST', url: '/v1/pay/gateway/deposit', headers: { ...t.auth('alice'), 'idempotency-key': 'after' }, payload: { provider_id: 'card', asset: 'USD', amount: 250 } });
            expect(deposit.statusCode).to.equal(201);
            const [delivery] = await receiver.waitFor(1);
            await said.said(/^→/);
            stop.abort();
            expect(await running).to.equal(0);

            expect(delivery!.verified).to.be.true();
            expect(delivery!.path).to.equal('/hooks');
            expect(delivery!.webhookId).to.equal('00000000-0000-4000-9000-000000000004');
            expect(delivery!.event).to.include({ id: '00000000-0000-4000-9000-000000000004', type: 'pay.transaction.completed' });
            expect(delivery!.event!.data).to.include({ amount: 250 });
            expect(receiver.deliveries.length).to.equal(1);
            expect(said.out).to.have.length(1);
            expect(said.out[0]).to.match(/^→ 204 pay\.transaction\.completed 00000000-0000-4000-9000-000000000004 \d+ ms$/);
            expect(said.err).to.equal([
                `localgate listen: reading ${url}/_instances/${t.id}/events/stream`,
                `Signing secret: ${receiver.secret} (Standard Webhooks, webhook-timestamp on the wall clock)`,
                `Ready: forwarding to ${receiver.url}hooks. Stop with Ctrl-C.`
            ]);
            await receiver.close();
            await t.close();
        });

        it('says a refused connection and a timeout, and goes on with the next event', async () => {

            const t = await kit.instance({ seed: 'none', pay: true, clock: '2030-01-01T00:00:00Z' });
            // A handler that never answers.
            const silent = await fakeStream(() => undefined);
            const said = lines();
            const stop = new AbortController();
            const running = listen(options({ forwardTo: `${silent.url}/hooks`, instance: t.id, timeoutMs: 200 }), said.io, stop.signal);
            await said.said(/^Ready/);
            await t.inject({ method: 'POST', url: '/v1/pay/gateway/deposit', headers: { ...t.auth('alice'), 'idempotency-key': 'one' }, payload: { provider_id: 'card', asset: 'USD', amount: 100 } });
            await said.said(/^→ timeout pay\.transaction\.completed/);
            expect(said.out.map((line) => line.replace(/ [\w-]{36}:/, ' <id>:'))).to.equal([
                `→ timeout pay.transaction.created <id>: no answer from ${silent.url}/hooks within 200 ms`,
                `→ timeout pay.transaction.completed <id>: no answer from ${silent.url}/hooks within 200 ms`
            ]);
            await silent.close();

            said.out.length = 0;
            await t.inject({ method: 'POST', url: '/v1/pay/gateway/deposit', headers: { ...t.auth('alice'), 'idempotency-key': 'two' }, payload: { provider_id: 'card', asset: 'USD', amount: 100 } });
            await said.said(/^→ refused pay\.transaction\.completed/);
            expect(said.out.map((line) => line.replace(/ [\w-]{36}:/, ' <id>:'))).to.equal([
                `→ refused pay.transaction.created <id>: nothing listens at ${silent.url}/hooks (connection refused)`,
                `→ refused pay.transaction.completed <id>: nothing listens at ${silent.url}/hooks (connection refused)`
            ]);
            stop.abort();
            expect(await running).to.equal(0);
            await t.close();
        });

        it('exits 1 when the server refuses the stream: an instance that is gone, a token it does not take', async () => {

            const gone = lines();
            expect(await listen(options({ instance: 'no-such-instance' }), gone.io, new AbortController().signal)).to.equal(1);
            expect(gone.err.at(-1)).to.equal(`localgate listen: ${url}/_instances/no-such-instance/events/stream answered 404: There is no instance "no-such-instance": it was deleted, it expired, or it never existed (POST /_instances makes one)`);

            const forged = lines();
            expect(await listen(options({ token: () => mintToken('another secret of at least 32 bytes!!', 'listener', 60, { admin: true }) }), forged.io, new AbortController().signal)).to.equal(1);
            expect(forged.err.at(-1)).to.match(new RegExp(`^localgate listen: ${url}/_events/stream answered 401: `));
        });
    });

    describe('on a connection that drops', () => {

        const options = (url: string, forwardTo: string): ListenOptions => ({ url, forwardTo, types: null, secret: mintSecret(), token: () => 'token', timeoutMs: 1000 });

        it('connects again after a bounded wait, resuming after the last event read, and goes on from now when that event is gone', async () => {

            const receiver = await startReceiver();
            const resumed: (string | undefined)[] = [];
            const stream = await fakeStream((request, response, count) => {

                resumed.push(request.headers['last-event-id'] as string | undefined);
                if (count === 2 || count === 3) {
                    response.writeHead(count === 2 ? 429 : 503, { 'content-type': 'application/json' }).end(count === 2 ? '{"message":"busy"}' : '{"code":"unavailable"}');
                    return;
                }

                if (count === 4) {
                    response.writeHead(422, { 'content-type': 'application/json' }).end('{"message":"gone"}');
                    return;
                }

                response.writeHead(200, { 'content-type': 'text/event-stream' });
                // The first connection ends after one event of each kind; the last stays open.
                response.write(`: heartbeat\n\n${event(`e${count}`)}${event(`g${count}`, 'webhook.delivery.given_up')}`);
                if (count === 1) {
                    response.end();
                }
            });

            const said = lines();
            const stop = new AbortController();
            const running = listen({ ...options(stream.url, receiver.url), secret: receiver.secret }, said.io, stop.signal);
            await receiver.waitFor(2);
            stop.abort();
            expect(await running).to.equal(0);
            await stream.close();
            await receiver.close();

            expect(resumed).to.equal([undefined, 'g1', 'g1', 'g1', undefined]);
            expect(receiver.deliveries.map(({ webhookId, verified }) => ({ webhookId, verified }))).to.equal([{ webhookId: 'e1', verified: true }, { webhookId: 'e5', verified: true }]);
            expect(said.err.slice(2)).to.equal([
                `Ready: forwarding to ${receiver.url}. Stop with Ctrl-C.`,
                `localgate listen: ${stream.url}/_events/stream ended the stream; connecting again in 500 ms`,
                `localgate listen: ${stream.url}/_events/stream answered 429: busy; connecting again in 1000 ms`,
                `localgate listen: ${stream.url}/_events/stream answered 503; connecting again in 2000 ms`,
                `localgate listen: ${stream.url}/_events/stream answered 422: gone; going on with the events written from now on (some may have been missed)`,
                `localgate listen: reconnected to ${stream.url}/_events/stream`
            ]);
        });

        it('says when nothing listens at the server\'s URL, and stops while it waits', async () => {

            const said = lines();
            const stop = new AbortController();
            const nowhere = `http://127.0.0.1:${await freePort()}`;
            const running = listen(options(nowhere, `${nowhere}/hooks`), said.io, stop.signal);
            await said.said(/connecting again/);
            stop.abort();
            expect(await running).to.equal(0);
            expect(said.err.at(-1)).to.equal(`localgate listen: nothing listens at ${nowhere}; connecting again in 500 ms`);
        });

        it('exits 1 on a line over the bound, on an event to begin after that it does not know, and on an answer that is not JSON', async () => {

            const stream = await fakeStream((request, response, count) => {

                if (count === 1) {
                    response.writeHead(422, { 'content-type': 'application/json' }).end('{"message":"no such event"}');
                    return;
                }

                if (count === 2) {
                    response.writeHead(404, { 'content-type': 'text/html' }).end(`<h1>not here</h1>${' '.repeat(64 * 1024)}`);
                    return;
                }

                if (count === 3) {
                    response.writeHead(204).end();
                    return;
                }

                response.writeHead(200, { 'content-type': 'text/event-stream' });
                response.end(`data: ${'x'.repeat(maxLineBytes)}\n\n`);
            });

            const unknown = lines();
            expect(await listen(options(stream.url, 'http://127.0.0.1:9/'), unknown.io, new AbortController().signal)).to.equal(1);
            expect(unknown.err.at(-1)).to.equal(`localgate listen: ${stream.url}/_events/stream answered 422: no such event`);

            const html = lines();
            expect(await listen(options(stream.url, 'http://127.0.0.1:9/'), html.io, new AbortController().signal)).to.equal(1);
            expect(html.err.at(-1)).to.equal(`localgate listen: ${stream.url}/_events/stream answered 404`);

            const empty = lines();
            expect(await listen(options(stream.url, 'http://127.0.0.1:9/'), empty.io, new AbortController().signal)).to.equal(1);
            expect(empty.err.at(-1)).to.equal(`localgate listen: ${stream.url}/_events/stream answered 204`);

            const long = lines();
            expect(await listen(options(stream.url, 'http://127.0.0.1:9/'), long.io, new AbortController().signal)).to.equal(1);
            expect(long.err.at(-1)).to.equal(`localgate listen: the event stream sent a line over ${maxLineBytes} bytes: no event of localgate is that long, so the URL is probably not a localgate stream`);
            await stream.close();
        });

        it('says a handler that drops the connection, and the status of one that answers with a body it does not read', async () => {

            const rude = await fakeStream((request, response, count) => {

                if (count === 1) {
                    request.socket.destroy();
                    return;
                }

                response.writeHead(200, { 'content-type': 'text/plain' });
                response.write('thanks, and more to come');
            });
            const stream = await fakeStream((request, response) => {

                response.writeHead(200, { 'content-type': 'text/event-stream' });
                response.write(event('e1') + event('e2'));
            });

            const said = lines();
            const stop = new AbortController();
            const running = listen(options(stream.url, rude.url), said.io, stop.signal);
            await said.said(/^→ 200/);
            stop.abort();
            expect(await running).to.equal(0);
            expect(said.out.map((line) => line.replace(/ \d+ ms$/, ' <ms>'))).to.equal([
                `→ failed pay.transaction.completed e1: ${rude.url} (UND_ERR_SOCKET)`,
                '→ 200 pay.transaction.completed e2 <ms>'
            ]);
            await stream.close();
            await rude.close();
        });

        it('drops a delivery in flight when stopped, saying nothing of it', async () => {

            const stream = await fakeStream((request, response) => {

                response.writeHead(200, { 'content-type': 'text/event-stream' });
                response.write(event('e1'));
            });

            let arrived = (): void => undefined;
            const posted = new Promise<void>((resolve) => {

                arrived = resolve;
            });
            const watching = await fakeStream(() => arrived());
            const said = lines();
            const stop = new AbortController();
            const running = listen(options(stream.url, watching.url), said.io, stop.signal);
            await posted;
            stop.abort();
            expect(await running).to.equal(0);
            expect(said.out).to.equal([]);
            await Promise.all([stream.close(), watching.close()]);
        });
    });
});
