import Net from 'node:net';

import Code from '@hapi/code';
import Lab from '@hapi/lab';
import { Webhook } from 'standardwebhooks';

import { hostAllowed, HttpSender, maxResponseBytes } from '../lib/data-set/sender';
import { deliveryBody } from '../lib/events/dispatcher';
import { maskedSecret, mintSecret, signatureHeaders } from '../lib/events/signing';
import { isSecret, webhookUrlRegex } from '../lib/events/webhook-schemas';
import { webhookId } from '../lib/events/model';
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
        const id = webhookId(event.id, 'we_1');
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
        const first = signatureHeaders(secret, webhookId(event.id, 'we_1'), at, deliveryBody(event));
        expect(signatureHeaders(secret, webhookId(event.id, 'we_1'), at, deliveryBody(event))).to.equal(first);
        expect(first['webhook-timestamp']).to.equal('1893456005');
        expect(webhookId(event.id, 'we_2')).to.not.equal(first['webhook-id']);
    });
});


describe('the outbound sender', () => {

    let receiver: Receiver;
    let sender: HttpSender;

    const call = (url: string, body = '{"a":1}') => sender.send({ method: 'POST', url, headers: { 'content-type': 'application/json', 'webhook-id': 'msg_1' }, body });

    before(async () => {

        receiver = await startReceiver();
        sender = new HttpSender({ hosts: loopback, timeoutMs: 300 });
    });

    after(async () => {

        sender.close();
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
        const named = new HttpSender({ hosts: ['nowhere.invalid'], timeoutMs: 5000 });
        expect(await named.send({ method: 'POST', url: 'http://nowhere.invalid/hook', headers: {}, body: '' })).to.include({ status: null, error: 'host_not_found' });
        named.close();
    });

    it('checks the host again as it sends: one WEBHOOK_HOSTS does not allow is never called', async () => {

        const sentBefore = receiver.received.length;
        const strict = new HttpSender({ hosts: ['localhost'], timeoutMs: 300 });
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
