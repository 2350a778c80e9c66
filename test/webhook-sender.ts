import { once } from 'node:events';
import Http from 'node:http';
import Net from 'node:net';

import Code from '@hapi/code';
import Lab from '@hapi/lab';
import { Webhook } from 'standardwebhooks';

import { hostAllowed, HttpSender, maxResponseBytes, OutboundAgents } from '../lib/data-set/sender';
import { deliveryBody } from '../lib/data-set/dispatcher';
import { maskedSecret, mintSecret, signatureHeaders } from '../lib/signing';
import { isSecret, webhookUrlRegex } from '../lib/events/webhook-schemas';
import { webhookId } from '../lib/outbox';
import { startReceiver, type Receiver } from './helpers/receiver';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const loopback = ['127.0.0.1', 'localhost', '::1'];


describe('webhook signing', () => {

    const event = { position: 1, id: '00000000-0000-4000-9000-000000000001', type: 'commerce.product.created' as const, created_at: '2030-01-01T00:00:00.000Z', data: '{"id":"p1","name":"Bread","price":2.5}' };

    it('mints whsec_ secrets of 32 random bytes, and reads which texts are secrets', () => {

        const secret = mintSecret();
        expect(secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
        expect(Buffer.from(secret.slice(6), 'base64').length).to.equal(32);
        expect(mintSecret()).to.not.equal(secret);
        expect(isSecret(secret)).to.equal(true);
        expect(isSecret(`whsec_${Buffer.alloc(24).toString('base64')}`)).to.equal(true);
        expect(isSecret(`whsec_${Buffer.alloc(64).toString('base64')}`)).to.equal(true);
        expect(isSecret(`whsec_${Buffer.alloc(23).toString('base64')}`)).to.equal(false);
        for (let i = 16; i <= 72; ++i) {
            expect(isSecret(`whsec_${Buffer.alloc(i, i).toString('base64')}`), `${i} bytes`).to.equal(i >= 24 && i <= 64);
        }

        expect(isSecret(`whsec_${Buffer.alloc(65).toString('base64')}`)).to.equal(false);
        expect(isSecret(`whsec_${Buffer.alloc(32, 255).toString('base64url')}`)).to.equal(false);
        expect(isSecret('whsec_not base64!')).to.equal(false);
        expect(isSecret(`wh_${Buffer.alloc(32).toString('base64')}`)).to.equal(false);
        expect(maskedSecret).to.equal('whsec_********');
    });

    it('signs as Standard Webhooks verifies, and a tampered body or timestamp fails its check', () => {

        const secret = mintSecret();
        const body = deliveryBody(event);
        expect(JSON.parse(body)).to.equal({ id: event.id, type: event.type, created_at: event.created_at, data: { id: 'p1', name: 'Bread', price: 2.5 } });
        expect(body).to.equal(JSON.stringify(JSON.parse(body)));
        const id = webhookId(event.id, 'we_1', body);
        const headers = signatureHeaders(secret, id, new Date(), body);
        expect(Object.keys(headers)).to.equal(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
        expect(headers['webhook-signature']).to.match(/^v1,[A-Za-z0-9+/]{43}=$/);
        const verifier = new Webhook(secret);
        expect(verifier.verify(body, headers)).to.equal(JSON.parse(body));
        expect(() => verifier.verify(body.replace('Bread', 'Cake'), headers)).to.throw('No matching signature found');
        expect(() => verifier.verify(body, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) + 1) })).to.throw('No matching signature found');
        expect(() => new Webhook(mintSecret()).verify(body, headers)).to.throw('No matching signature found');
    });

    it('gives one instant the same signature, byte for byte, and the same webhook-id to every attempt of one event to one endpoint', () => {

        const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
        const at = new Date('2030-01-01T00:00:05.900Z');
        const first = signatureHeaders(secret, webhookId(event.id, 'we_1', deliveryBody(event)), at, deliveryBody(event));
        expect(signatureHeaders(secret, webhookId(event.id, 'we_1', deliveryBody(event)), at, deliveryBody(event))).to.equal(first);
        expect(first['webhook-timestamp']).to.equal('1893456005');
        expect(webhookId(event.id, 'we_2', deliveryBody(event))).to.not.equal(first['webhook-id']!);
    });
});


describe('the outbound sender', () => {

    let receiver: Receiver;
    let sender: HttpSender;
    const agents = new OutboundAgents({ maxSockets: 256, idleMs: 4000 });

    const call = (url: string, body = '{"a":1}') => sender.send({ method: 'POST', url, headers: { 'content-type': 'application/json', 'webhook-id': 'msg_1' }, body });

    before(async () => {

        receiver = await startReceiver();
        sender = new HttpSender({ hosts: loopback, timeoutMs: 300, agents });
    });

    after(async () => {

        sender.close();
        agents.close();
        await receiver.close();
    });

    it('POSTs the body with its headers and the user agent, and answers the receiver\'s status', async () => {

        receiver.answers.push(204);
        const outcome = await call(receiver.url, '{"a":"é"}');
        expect(outcome).to.include({ status: 204, error: null });
        expect(outcome.duration_ms).to.be.a.number();
        const got = receiver.received.at(-1)!;
        expect(got.body).to.equal('{"a":"é"}');
        expect(got.headers).to.include({ 'content-type': 'application/json', 'webhook-id': 'msg_1', 'content-length': '10', 'user-agent': 'localgate/0.1.0', connection: 'keep-alive' });
    });

    it('answers the headers it sent, and the receiver\'s headers in their order and the start of its body', async () => {

        receiver.answers.push((response) => response.writeHead(202, [['X-Trace', 'a'], ['Content-Type', 'text/plain'], ['X-Trace', 'b']]).end('queued'));
        const outcome = await call(receiver.url);
        expect(outcome.sent).to.equal({ 'content-type': 'application/json', 'webhook-id': 'msg_1', 'user-agent': 'localgate/0.1.0', 'content-length': '7' });
        expect(outcome.answer!.headers.filter(([name]) => name !== 'Date' && name !== 'Connection' && name !== 'Keep-Alive' && name !== 'Transfer-Encoding')).to.equal([['X-Trace', 'a'], ['Content-Type', 'text/plain'], ['X-Trace', 'b']]);
        expect(outcome.answer!.body.toString()).to.equal('queued');
    });

    it('follows no redirect: a 3xx is the answer', async () => {

        receiver.answers.push((response) => response.writeHead(302, { location: 'http://127.0.0.1:9/elsewhere' }).end());
        const sentBefore = receiver.received.length;
        expect(await call(receiver.url)).to.include({ status: 302, error: null });
        expect(receiver.received.length).to.equal(sentBefore + 1);
    });

    it('reads a long answer only up to its bound, and keeps its status', async () => {

        receiver.answers.push((response) => {

            response.writeHead(200);
            response.write(Buffer.alloc(maxResponseBytes + 1));
            // Never ended: the sender stops reading past the bound.
        });
        const outcome = await call(receiver.url);
        expect(outcome).to.include({ status: 200, error: null });
        expect(outcome.answer!.body.length).to.equal(maxResponseBytes);
    });

    it('answers the status of an answer cut short', async () => {

        receiver.answers.push((response) => {

            response.writeHead(500, { 'content-length': '100' });
            response.write('partial', () => response.socket!.destroy());
        });
        const outcome = await call(receiver.url);
        expect(outcome).to.include({ status: 500, error: null });
        expect(outcome.answer!.body.toString()).to.equal('partial');
    });

    it('gives up after the timeout', async () => {

        receiver.answers.push(() => undefined);
        const outcome = await call(receiver.url);
        expect(outcome).to.include({ status: null, error: 'timeout', answer: null });
        expect(outcome.sent).to.include({ 'webhook-id': 'msg_1' });
        expect(outcome.duration_ms).to.be.at.least(290);
    });

    it('names a refused connection, a failed handshake and a host never looked up', async () => {

        const closed = Net.createServer();
        await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
        const { port } = closed.address() as Net.AddressInfo;
        await new Promise((resolve) => closed.close(resolve));
        expect(await call(`http://127.0.0.1:${port}/hook`)).to.include({ status: null, error: 'connection_refused' });
        expect(await call(`https://127.0.0.1:${receiver.port}/hook`)).to.include({ status: null, error: 'connection_failed' });
        const named = new HttpSender({ hosts: ['nowhere.invalid'], timeoutMs: 5000, agents });
        expect(await named.send({ method: 'POST', url: 'http://nowhere.invalid/hook', headers: {}, body: '' })).to.include({ status: null, error: 'host_not_found' });
        named.close();
    });

    it('checks the host again as it sends: one WEBHOOK_HOSTS does not allow is never called', async () => {

        const sentBefore = receiver.received.length;
        const strict = new HttpSender({ hosts: ['localhost'], timeoutMs: 300, agents });
        expect(await strict.send({ method: 'POST', url: receiver.url, headers: {}, body: '' })).to.equal({ status: null, error: 'host_not_allowed', duration_ms: 0, sent: null, answer: null });
        strict.close();
        expect(receiver.received.length).to.equal(sentBefore);
    });

    it('counts any 127.0.0.0/8 address as loopback when 127.0.0.1 is allowed', () => {

        expect(hostAllowed('127.0.0.2', loopback)).to.equal(true);
        expect(hostAllowed('127.255.0.1', loopback)).to.equal(true);
        expect(hostAllowed('127.0.0.2', ['localhost'])).to.equal(false);
        expect(hostAllowed('127.example', loopback)).to.equal(false);
        expect(hostAllowed('10.0.0.1', loopback)).to.equal(false);
        expect(hostAllowed('::1', loopback)).to.equal(true);

        // The routes refuse the same URLs, by a pattern the document says.
        expect(webhookUrlRegex(loopback).test('http://127.1.2.3:8080/hook')).to.equal(true);
        expect(webhookUrlRegex(['localhost']).test('http://127.1.2.3:8080/hook')).to.equal(false);
        expect(webhookUrlRegex(['localhost']).test('https://localhost/hook?a=1')).to.equal(true);
    });
});


describe('the process\'s agents', () => {

    // A receiver that holds each request until told, and counts the connections it has open.
    async function holdingReceiver() {

        const held: Http.ServerResponse[] = [];
        const arrived: (() => void)[] = [];
        const server = Http.createServer((request, response) => {

            request.resume();
            request.on('end', () => {

                held.push(response);
                arrived.shift()?.();
            });
        });
        // A receiver that keeps idle connections longer than the sender does.
        server.keepAliveTimeout = 60_000;
        const connections = new Set<Net.Socket>();
        server.on('connection', (socket: Net.Socket) => {

            connections.add(socket);
            socket.on('close', () => connections.delete(socket));
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        const { port } = server.address() as Net.AddressInfo;
        return {
            url: `http://127.0.0.1:${port}/hook`,
            held,
            connections,
            // Resolves once `count` requests are held.
            waitForHeld: async (count: number) => {

                while (held.length < count) {
                    await new Promise<void>((resolve) => arrived.push(resolve));
                }
            },
            close: async () => {

                server.closeAllConnections();
                await new Promise((resolve) => server.close(resolve));
            }
        };
    }

    const post = (sender: HttpSender, url: string) => sender.send({ method: 'POST', url, headers: {}, body: '{}' });

    it('holds at most maxSockets at once: a call past it waits for a socket and goes when one is free', async () => {

        const receiver = await holdingReceiver();
        const agents = new OutboundAgents({ maxSockets: 2, idleMs: 4000 });
        const sender = new HttpSender({ hosts: loopback, timeoutMs: 5000, agents });
        const calls = [post(sender, receiver.url), post(sender, receiver.url), post(sender, `${receiver.url}/other`)];
        await receiver.waitForHeld(2);
        expect(receiver.connections.size).to.equal(2);
        expect(agents.open()).to.equal({ active: 2, idle: 0 });
        receiver.held[0]!.writeHead(204).end();
        await receiver.waitForHeld(3);
        expect(receiver.connections.size).to.equal(2);
        receiver.held[1]!.writeHead(204).end();
        receiver.held[2]!.writeHead(202).end();
        expect((await Promise.all(calls)).map((outcome) => outcome.status)).to.equal([204, 204, 202]);
        expect(agents.open()).to.equal({ active: 0, idle: 2 });
        agents.close();
        await receiver.close();
    });

    it('times out a call that waits for a socket longer than the timeout, and never sends it', async () => {

        const receiver = await holdingReceiver();
        const agents = new OutboundAgents({ maxSockets: 1, idleMs: 4000 });
        const patient = new HttpSender({ hosts: loopback, timeoutMs: 5000, agents });
        const hasty = new HttpSender({ hosts: loopback, timeoutMs: 200, agents });
        const first = post(patient, receiver.url);
        await receiver.waitForHeld(1);
        const waiting = await post(hasty, receiver.url);
        expect(waiting).to.include({ status: null, error: 'timeout' });
        receiver.held[0]!.writeHead(204).end();
        expect(await first).to.include({ status: 204, error: null });
        // The socket freed goes to no call that timed out.
        expect(receiver.held.length).to.equal(1);
        agents.close();
        await receiver.close();
    });

    it('closes an idle socket after idleMs, though the receiver would keep it', async () => {

        const receiver = await holdingReceiver();
        const agents = new OutboundAgents({ maxSockets: 4, idleMs: 100 });
        const sender = new HttpSender({ hosts: loopback, timeoutMs: 5000, agents });
        const call = post(sender, receiver.url);
        await receiver.waitForHeld(1);
        receiver.held[0]!.writeHead(204).end();
        expect(await call).to.include({ status: 204 });
        expect(agents.open()).to.equal({ active: 0, idle: 1 });
        const [idle] = Object.values(agents.http.freeSockets).flat();
        await once(idle!, 'close');
        expect(agents.open()).to.equal({ active: 0, idle: 0 });
        agents.close();
        await receiver.close();
    });

    it('keeps a socket in use open past idleMs: only the call\'s own timeout ends a slow answer', async () => {

        const receiver = await holdingReceiver();
        const agents = new OutboundAgents({ maxSockets: 4, idleMs: 50 });
        const sender = new HttpSender({ hosts: loopback, timeoutMs: 5000, agents });
        const call = post(sender, receiver.url);
        await receiver.waitForHeld(1);
        // The socket in use goes idle past idleMs, and stays.
        const [inUse] = Object.values(agents.http.sockets).flat();
        await once(inUse!, 'timeout');
        receiver.held[0]!.writeHead(204).end();
        expect(await call).to.include({ status: 204, error: null });
        expect(inUse!.destroyed).to.be.false();
        agents.close();
        await receiver.close();
    });

    it('shares its sockets between senders: one closing ends its own calls, never another\'s idle socket', async () => {

        const receiver = await holdingReceiver();
        const agents = new OutboundAgents({ maxSockets: 4, idleMs: 4000 });
        const first = new HttpSender({ hosts: loopback, timeoutMs: 5000, agents });
        const second = new HttpSender({ hosts: loopback, timeoutMs: 5000, agents });
        const calls = [post(second, receiver.url), post(second, receiver.url)];
        await receiver.waitForHeld(2);
        const opened = new Set(receiver.connections);
        receiver.held[0]!.writeHead(204).end();
        receiver.held[1]!.writeHead(204).end();
        await Promise.all(calls);
        expect(agents.open()).to.equal({ active: 0, idle: 2 });

        // The first sender's call takes one socket, and its close ends that call alone.
        const inFlight = post(first, `${receiver.url}/slow`);
        await receiver.waitForHeld(3);
        first.close();
        expect(await inFlight).to.include({ status: null, error: 'connection_reset' });
        expect(agents.open()).to.equal({ active: 0, idle: 1 });
        const reused = post(second, receiver.url);
        await receiver.waitForHeld(4);
        expect(opened.has(receiver.held[3]!.socket as Net.Socket)).to.equal(true);
        receiver.held[3]!.writeHead(204).end();
        expect(await reused).to.include({ status: 204 });
        second.close();
        expect(agents.open()).to.equal({ active: 0, idle: 1 });
        agents.close();
        await receiver.close();
    });
});
