import Code from '@hapi/code';
import type { Server, ServerInjectOptions } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { inboxSize, maxInboxBodyBytes, maxInboxes, signatureVerified, type InboxEntry } from '../lib/console/inbox';
import { maskedSecret, mintSecret, signatureHeaders } from '../lib/signing';
import { adminBearer, bearer, body, testServer } from './helpers/server';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const bakery = 'd851fadb-03ca-5a24-ba16-c15cce19933b';
const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const event = { id: 'e1', type: 'commerce.product.created', created_at: '2030-01-01T00:00:00.000Z', data: {} };


function webhook(dataSet: string, payload: string, headers: Record<string, string>): ServerInjectOptions {

    return { method: 'POST', url: `/console/inbox/${dataSet}`, payload, headers: { 'content-type': 'application/json', ...headers } };
}


function signed(key: string, payload: string, id = 'msg_1'): Record<string, string> {

    return signatureHeaders(key, id, new Date(), payload);
}


function setSecret(server: Server, dataSet: string, value: unknown) {

    return server.inject({ method: 'PUT', url: `/console/api/inbox/${dataSet}`, payload: { secret: value }, headers: adminBearer(server) });
}


async function inbox(server: Server, dataSet: string): Promise<{ secret: string | null; data: InboxEntry[]; count: number }> {

    const res = await server.inject({ url: `/console/api/inbox/${dataSet}`, headers: adminBearer(server) });
    expect(res.statusCode).to.equal(200);
    return body(res);
}


describe('the console\'s webhook inbox', () => {

    it('records a webhook signed with the secret it was given as verified, and answers 204', async () => {

        const server = await testServer();
        expect((await setSecret(server, 'default', secret)).statusCode).to.equal(204);
        const payload = JSON.stringify(event);
        const res = await server.inject(webhook('default', payload, signed(secret, payload)));
        expect(res.statusCode).to.equal(204);

        const read = await inbox(server, 'default');
        expect(read.secret).to.equal(maskedSecret);
        expect(read.count).to.equal(1);
        expect(read.data[0]).to.include({ webhook_id: 'msg_1', type: 'commerce.product.created', event_id: 'e1', verified: true });
        expect(Date.parse(read.data[0]!.at)).to.be.about(Date.now(), 5000);
        await server.stop();
    });

    it('records a webhook it cannot verify and answers 422 webhook_signature_invalid', async () => {

        const server = await testServer();
        const payload = JSON.stringify(event);
        // No secret set yet: nothing verifies.
        const before = await server.inject(webhook('abc-1', payload, signed(secret, payload)));
        expect(before.statusCode).to.equal(422);
        expect(body(before).code).to.equal('webhook_signature_invalid');

        await setSecret(server, 'abc-1', secret);
        const cases: Record<string, string>[] = [
            signed(mintSecret(), payload),
            { ...signed(secret, payload), 'webhook-id': 'msg_2' },
            { ...signed(secret, payload), 'webhook-signature': 'v2,abc' },
            {}
        ];
        for (const headers of cases) {
            const res = await server.inject(webhook('abc-1', payload, headers));
            expect(res.statusCode).to.equal(422);
        }

        // A body that is no event, or none at all, is recorded with what it claims: nothing.
        expect((await server.inject(webhook('abc-1', 'not json', {}))).statusCode).to.equal(422);
        expect((await server.inject(webhook('abc-1', '"text"', {}))).statusCode).to.equal(422);
        expect((await server.inject({ method: 'POST', url: '/console/inbox/abc-1' })).statusCode).to.equal(422);
        expect((await server.inject(webhook('abc-1', JSON.stringify({ id: 7, type: 'x'.repeat(500) }), {}))).statusCode).to.equal(422);

        const read = await inbox(server, 'abc-1');
        expect(read.count).to.equal(9);
        expect(read.data.every(({ verified }) => !verified)).to.be.true();
        expect(read.data[0]).to.include({ webhook_id: null, event_id: null, verified: false });
        expect(read.data[0]!.type).to.have.length(200);
        expect(read.data[1]).to.include({ webhook_id: null, type: null, event_id: null });
        expect(read.data[2]).to.include({ type: null, event_id: null });
        expect(read.data[3]).to.include({ type: null, event_id: null });
        expect(read.data[6]).to.include({ webhook_id: 'msg_2', type: 'commerce.product.created', event_id: 'e1' });
        expect(read.data[8]).to.include({ webhook_id: 'msg_1', verified: false });
        await server.stop();
    });

    it('accepts any of several signatures, as during a secret rotation', () => {

        const payload = Buffer.from('{}');
        const [, good] = signed(secret, '{}')['webhook-signature']!.split(',');
        const stamp = signed(secret, '{}')['webhook-timestamp']!;
        expect(signatureVerified(secret, 'msg_1', stamp, payload, `v1,AAAA v1,${good}`)).to.be.true();
        expect(signatureVerified(secret, 'msg_1', stamp, payload, 'v1,AAAA')).to.be.false();
    });

    it('keeps the newest webhooks of each data set, and a bounded number of data sets', async () => {

        const server = await testServer();
        for (let i = 0; i < inboxSize + 5; ++i) {
            await server.inject(webhook('default', JSON.stringify({ ...event, id: `e${i}` }), {}));
        }

        const read = await inbox(server, 'default');
        expect(read.count).to.equal(inboxSize);
        expect(read.data[0]!.event_id).to.equal(`e${inboxSize + 4}`);
        expect(read.data.at(-1)!.event_id).to.equal('e5');

        await server.stop();
    });

    it('keeps an inbox an admin set whatever strangers post: only inboxes nobody set give way to posts', async () => {

        const server = await testServer();
        expect((await setSecret(server, 'first', secret)).statusCode).to.equal(204);
        const payload = JSON.stringify(event);
        for (let i = 0; i <= maxInboxes; ++i) {
            expect((await server.inject(webhook(`stranger-${i}`, '{}', {}))).statusCode).to.equal(422);
        }

        // The secret stays, and the inbox still verifies what its endpoint sends.
        expect((await server.inject(webhook('first', payload, signed(secret, payload)))).statusCode).to.equal(204);
        expect(await inbox(server, 'first')).to.include({ secret: maskedSecret, count: 1 });
        // Set again, it checks with the new secret and keeps what it holds.
        const rotated = mintSecret();
        expect((await setSecret(server, 'first', rotated)).statusCode).to.equal(204);
        expect((await server.inject(webhook('first', payload, signed(secret, payload)))).statusCode).to.equal(422);
        expect((await server.inject(webhook('first', payload, signed(rotated, payload)))).statusCode).to.equal(204);
        expect((await inbox(server, 'first')).data.map(({ verified }) => verified)).to.equal([true, false, true]);
        // Of the inboxes nobody set, the least recently written is forgotten past the bound.
        expect(await inbox(server, 'stranger-0')).to.equal({ secret: null, data: [], count: 0 });
        expect((await inbox(server, 'stranger-1')).count).to.equal(1);
        expect((await inbox(server, `stranger-${maxInboxes}`)).count).to.equal(1);

        // Setting a secret keeps what arrived before it.
        expect((await setSecret(server, 'stranger-1', secret)).statusCode).to.equal(204);
        expect(await inbox(server, 'stranger-1')).to.include({ secret: maskedSecret, count: 1 });
        await server.stop();
    });

    it('forgets the inbox least recently set or written to once admins have set more than the bound', async () => {

        const server = await testServer();
        for (let i = 0; i < maxInboxes; ++i) {
            expect((await setSecret(server, `set-${i}`, secret)).statusCode).to.equal(204);
        }

        // Written to, set-0 is no longer the least recently used: set-1 is.
        await server.inject(webhook('set-0', '{}', {}));
        expect((await setSecret(server, 'one-more', secret)).statusCode).to.equal(204);
        expect(await inbox(server, 'set-1')).to.equal({ secret: null, data: [], count: 0 });
        expect(await inbox(server, 'set-0')).to.include({ secret: maskedSecret, count: 1 });
        expect(await inbox(server, 'one-more')).to.include({ secret: maskedSecret, count: 0 });
        expect(await inbox(server, `set-${maxInboxes - 1}`)).to.include({ secret: maskedSecret, count: 0 });
        await server.stop();
    });

    it('refuses a body past its bound with 413, and a data set name it does not read with 400', async () => {

        const server = await testServer();
        const big = await server.inject(webhook('default', 'x'.repeat(maxInboxBodyBytes + 1), {}));
        expect(big.statusCode).to.equal(413);
        expect((await server.inject(webhook('a.b', '{}', {}))).statusCode).to.equal(400);
        expect((await server.inject(webhook('x'.repeat(65), '{}', {}))).statusCode).to.equal(400);
        expect((await inbox(server, 'default')).count).to.equal(0);
        await server.stop();
    });

    it('lets only an admin token read it or set its secret, and takes only a Standard Webhooks secret', async () => {

        const server = await testServer();
        const read = await server.inject({ url: '/console/api/inbox/default', headers: bearer(server, 'alice') });
        expect(read.statusCode).to.equal(403);
        expect(body(read).code).to.equal('admin_required');
        expect((await server.inject('/console/api/inbox/default')).statusCode).to.equal(401);
        const set = await server.inject({ method: 'PUT', url: '/console/api/inbox/default', payload: { secret }, headers: bearer(server, 'alice') });
        expect(set.statusCode).to.equal(403);

        for (const value of ['whsec_short', 'secret', 7, 'whsec_' + 'A'.repeat(300)]) {
            const res = await setSecret(server, 'default', value);
            expect(res.statusCode, String(value)).to.equal(400);
            expect(JSON.stringify(body(res))).to.not.include('whsec_AAAA');
        }

        expect((await inbox(server, 'default')).secret).to.be.null();
        await server.stop();
    });

    it('is not mounted without the console API, and answers only loopback names under auto', async () => {

        for (const options of [{ host: '0.0.0.0' }, { consoleApi: 'off' as const }]) {
            const server = await testServer(options);
            expect((await server.inject(webhook('default', '{}', {}))).statusCode).to.equal(404);
            expect((await server.inject({ url: '/console/api/inbox/default', headers: adminBearer(server) })).statusCode).to.equal(404);
            expect((await setSecret(server, 'default', secret)).statusCode).to.equal(404);
            await server.stop();
        }

        const server = await testServer();
        const rebound = { host: 'evil.example:3000' };
        expect((await server.inject(webhook('default', '{}', rebound))).statusCode).to.equal(404);
        expect((await server.inject({ url: '/console/api/inbox/default', headers: { ...adminBearer(server), ...rebound } })).statusCode).to.equal(404);
        expect((await server.inject({ method: 'PUT', url: '/console/api/inbox/default', payload: { secret }, headers: { ...adminBearer(server), ...rebound } })).statusCode).to.equal(404);
        await server.stop();
    });

    it('receives the data set\'s own webhooks, signed and verified, when its endpoint is the inbox', async () => {

        const server = await testServer();
        await server.start();
        const admin = (method: string, url: string, payload?: object) => server.inject({ method, url, headers: adminBearer(server), payload } as ServerInjectOptions);
        const set = await admin('PUT', '/_webhooks', { endpoints: [{ url: `http://127.0.0.1:${server.info.port}/console/inbox/default` }] });
        expect(set.statusCode).to.equal(200);
        expect((await setSecret(server, 'default', body<{ endpoints: { secret: string }[] }>(set).endpoints[0]!.secret)).statusCode).to.equal(204);

        const made = await server.inject({ method: 'POST', url: '/v1/commerce/products', headers: bearer(server, 'ann'), payload: { name: 'Bread', price: 2.5, currency: 'USD', business_id: bakery } });
        expect(made.statusCode).to.equal(201);
        await admin('POST', '/_webhooks/flush');

        const read = await inbox(server, 'default');
        expect(read.count).to.equal(1);
        expect(read.data[0]).to.include({ type: 'commerce.product.created', verified: true });
        const deliveries = body<{ data: { status: number; attempt: number }[] }>(await admin('GET', '/_webhooks/deliveries'));
        expect(deliveries.data[0]).to.include({ status: 204, attempt: 1 });
        await server.stop();
    });
});
