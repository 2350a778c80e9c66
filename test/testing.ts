import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { mintToken } from '../lib/auth';
import { createTestKit, startReceiver, type TestInstance, type TestKit, type WebhookReceiver } from '../lib/testing';
import { body, type List } from './helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


const bakery = 'd851fadb-03ca-5a24-ba16-c15cce19933b';


describe('createTestKit()', () => {

    let kit: TestKit;

    before(async () => {

        kit = await createTestKit({ validateResponses: true });
    });

    after(async () => {

        await kit.close();
    });

    it('gives each test its own instance, reached with the API\'s own paths', async () => {

        const first = await kit.instance();
        const second = await kit.instance();
        const created = await first.inject({ method: 'POST', url: '/v1/commerce/products', headers: first.auth('alice'), payload: { name: 'Kit loaf', price: 3, currency: 'USD', business_id: bakery } });
        expect(created.statusCode).to.equal(201);
        expect(created.headers.location).to.equal(`${first.basePath}/v1/commerce/products/${body(created).id}`);
        expect(body<List<unknown>>(await first.inject('/v1/commerce/products')).total).to.equal(36);
        expect(body<List<unknown>>(await second.inject('/v1/commerce/products')).total).to.equal(35);
        expect(first.basePath).to.equal(`/i/${first.id}`);

        first.close();
        first.close();
        second.close();
        expect((await first.inject('/v1/commerce/products')).statusCode).to.equal(404);
        await expect(first.reset()).to.reject(/There is no instance/);
        expect(() => first.clock.now()).to.throw(/There is no instance/);
    });

    it('mints expired tokens with a negative ttlSec, and refuses a ttlSec of 0', async () => {

        const t = await kit.instance({ seed: 'none' });
        const expired = await t.inject({ url: '/v1/logistics/bookings', headers: { authorization: `Bearer ${t.token('alice', { ttlSec: -3600 })}` } });
        expect(expired.statusCode).to.equal(401);
        expect(body(expired)).to.include({ message: 'Token expired' });
        expect(() => t.token('alice', { ttlSec: 0 })).to.throw(RangeError, 'ttlSec must be a whole number of seconds other than 0 (negative for a token that has expired), not 0');
        t.close();
    });

    it('hands out the token it minted in the same second again, which a new signature would give too', async () => {

        const t = await kit.instance({ seed: 'none' });
        const other = await kit.instance({ seed: 'none' });
        // Asked again until both calls fall in one second, so that the second boundary cannot split them.
        let pair: string[];
        let second: number;
        do {
            second = Math.floor(Date.now() / 1000);
            pair = [t.token('alice'), other.token('alice'), mintToken(kit.server.app.localgate.secret, 'alice'), t.token('alice', { admin: true }), t.token('bob'), t.token('alice', { ttlSec: -60 })];
        }
        while (second !== Math.floor(Date.now() / 1000));

        expect(pair[1]).to.equal(pair[0]);
        expect(pair[2]).to.equal(pair[0]);
        expect(new Set(pair).size).to.equal(4);
        // The token reused is the one of the same lifetime: one expired past the 30 s clock skew is its own, and refused.
        const expired = await t.inject({ url: '/v1/logistics/bookings', headers: { authorization: `Bearer ${pair[5]}` } });
        expect(expired.statusCode).to.equal(401);
        expect(body(expired)).to.include({ message: 'Token expired' });
        t.close();
        other.close();
    });

    it('resets, snapshots and restores, and moves the instance clock', async () => {

        const t = await kit.instance({ seed: 'none', ids: 'sequential', clock: '2030-01-01T00:00:00Z', pay: true, fixture: { commerce: { businesses: [{ id: 'b1', name: 'Kiosk', category: 'Kiosk', city: 'Harbourside', phone: '1' }] } } });
        const post = (name: string) => t.inject({ method: 'POST', url: '/v1/commerce/products', headers: { authorization: `Bearer ${t.token('bob')}` }, payload: { name, price: 1, currency: 'USD', business_id: 'b1' } });
        const first = await post('One');
        expect(body(first)).to.include({ id: '00000000-0000-4000-8000-000000000001', created_at: '2030-01-01T00:00:00.000Z' });

        const snapshot = await t.snapshot();
        await t.clock.advance('1h');
        await t.clock.advance(1000);
        expect(t.clock.now().toISOString()).to.equal('2030-01-01T01:00:01.000Z');
        expect(body(await post('Two'))).to.include({ created_at: '2030-01-01T01:00:01.000Z' });

        await t.restore(snapshot);
        expect(t.clock.now().toISOString()).to.equal('2030-01-01T00:00:00.000Z');
        expect(body<List<unknown>>(await t.inject('/v1/commerce/products')).total).to.equal(1);

        await t.clock.set('2031-01-01T00:00:00Z');
        expect(body(await post('Three'))).to.include({ created_at: '2031-01-01T00:00:00.000Z' });
        await t.reset();
        expect((await post('One')).payload).to.equal(first.payload);
        expect(body(await t.inject('/v1/pay/status'))).to.include({ schema_ready: true });

        const admin = t.token('ops', { admin: true, ttlSec: 60 });
        expect((await kit.server.inject({ url: '/_instances', headers: { authorization: `Bearer ${admin}` } })).statusCode).to.equal(200);
        t.close();
    });

    it('moves the clock through a bank transfer: pending and not spendable, then completed and spendable, t.clock.advance resolving to what it applied', async () => {

        // As docs/testing.md shows it.
        const t = await kit.instance({ seed: 'none', pay: true, clock: '2030-01-01T00:00:00Z' });
        const move = (operation: 'deposit' | 'withdraw', payload: { provider_id: string; asset: string; amount: number }, key: string) => {

            return t.inject({ method: 'POST', url: `/v1/pay/gateway/${operation}`, headers: { ...t.auth('alice'), 'idempotency-key': key }, payload });
        };

        const ledger = async () => ({
            balances: body<{ balances: unknown[] }>(await t.inject({ url: '/v1/pay/wallet', headers: t.auth('alice') })).balances,
            transactions: body<List<unknown>>(await t.inject({ url: '/v1/pay/wallet/transactions', headers: t.auth('alice') })).data
        });

        const made = await move('deposit', { provider_id: 'bank-transfer', asset: 'USD', amount: 10000 }, 'deposit-1');
        expect(made.statusCode).to.equal(201);
        const deposit = body<Record<string, unknown> & { id: string }>(made);
        expect(deposit).to.equal({
            id: deposit.id, owner_id: 'alice', type: 'deposit', asset: 'USD', amount: 10000, provider_id: 'bank-transfer', status: 'pending',
            created_at: '2030-01-01T00:00:00.000Z', settles_at: '2030-01-03T00:00:00.000Z', settled_at: null, failure_code: null, metadata: {}
        });
        expect(await ledger()).to.equal({ balances: [{ asset: 'USD', amount: 0, pending_in: 10000, pending_out: 0 }], transactions: [deposit] });

        const early = await move('withdraw', { provider_id: 'sandbox', asset: 'USD', amount: 2500 }, 'withdraw-1');
        expect(early.statusCode).to.equal(409);
        expect(body(early)).to.include({ code: 'insufficient_funds' });

        expect(await t.clock.advance('1d')).to.equal({});
        expect(await ledger()).to.equal({ balances: [{ asset: 'USD', amount: 0, pending_in: 10000, pending_out: 0 }], transactions: [deposit] });

        expect(await t.clock.advance('1d')).to.equal({ 'pay.transaction.completed': 1 });
        const completed = { ...deposit, status: 'completed', settled_at: '2030-01-03T00:00:00.000Z' };
        expect(await ledger()).to.equal({ balances: [{ asset: 'USD', amount: 10000, pending_in: 0, pending_out: 0 }], transactions: [completed] });

        const spent = await move('withdraw', { provider_id: 'sandbox', asset: 'USD', amount: 2500 }, 'withdraw-2');
        expect(spent.statusCode).to.equal(201);
        expect(body(spent)).to.include({ status: 'completed', settled_at: '2030-01-03T00:00:00.000Z' });
        expect(await ledger()).to.equal({ balances: [{ asset: 'USD', amount: 7500, pending_in: 0, pending_out: 0 }], transactions: [body(spent), completed] });

        // Back: nothing applies and nothing is undone.
        expect(await t.clock.set('2030-01-01T00:00:00Z')).to.equal({});
        expect(await ledger()).to.equal({ balances: [{ asset: 'USD', amount: 7500, pending_in: 0, pending_out: 0 }], transactions: [body(spent), completed] });
        await t.close();
    });

    it('refuses instance options that POST /_instances would refuse, naming the option', async () => {

        await expect(kit.instance({ clock: 'next tuesday' })).to.reject(/^Invalid instance options: clock must be an ISO 8601 UTC timestamp ending in Z/);
        await expect(kit.instance({ seed: 'lots' as never })).to.reject('Invalid instance options: seed must be one of [demo, none]');
        await expect(kit.instance({ fixture: { commerce: { products: [{ name: 'x' }] } } })).to.reject(/^fixture: commerce\.products\[0\]\.price: price is required/);
    });

    it('listens for HTTP clients on a free loopback port', async () => {

        const t = await kit.instance();
        expect(t.consoleUrl).to.be.undefined();
        const url = await kit.listen();
        expect(url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
        expect(t.consoleUrl).to.equal(`${url}/console?instance=${t.id}`);
        const res = await fetch(`${url}${t.basePath}/v1/logistics/vehicles?limit=1`);
        expect(res.status).to.equal(200);
        expect(res.headers.get('x-total-count')).to.equal('12');
        t.close();
    });
});


describe('createTestKit(): events and webhooks', () => {

    let kit: TestKit;
    let receiver: WebhookReceiver;

    before(async () => {

        kit = await createTestKit({ validateResponses: true });
        receiver = await startReceiver();
    });

    after(async () => {

        await receiver.close();
        await kit.close();
    });

    const transfer = (t: TestInstance, key: string) => {

        return t.inject({
            method: 'POST', url: '/v1/pay/gateway/deposit', headers: { ...t.auth('alice'), 'idempotency-key': key },
            payload: { provider_id: 'bank-transfer', asset: 'USD', amount: 100 }
        });
    };

    it('sets, reads and clears endpoints, refusing what PUT …/webhooks refuses', async () => {

        const t = await kit.instance({ seed: 'none', clock: '2030-01-01T00:00:00Z' });
        const [set] = await t.webhooks.set([{ url: receiver.url, types: ['pay.*'], retry_schedule: ['1s'] }]);
        expect(set).to.equal({
            id: set!.id, url: receiver.url, types: ['pay.*'], secret: set!.secret, signing_clock: 'wall', retry_schedule: ['1s'], created_at: '2030-01-01T00:00:00.000Z',
            disabled: false, disabled_reason: null, disabled_at: null, previous_secret_until: null
        });
        expect(set!.secret).to.match(/^whsec_/);
        expect(await t.webhooks.get()).to.equal([{ ...set!, secret: 'whsec_********', delivered: 0, failed: 0 }]);

        await expect(t.webhooks.set([{ url: 'http://example.com/hooks' }])).to.reject(/^Invalid webhook endpoints: endpoints\[0\]\.url must be an http: or https: URL without a user name or password, to a host WEBHOOK_HOSTS allows/);
        await expect(t.webhooks.set([{ url: receiver.url, types: ['pay.nothing'] }])).to.reject(/^Invalid webhook endpoints: /);
        await expect(t.webhooks.rotate(set!.id, { overlap: 'soon' })).to.reject(/^Invalid rotation: overlap must be a duration of at most 7d/);
        await expect(t.webhooks.recover(set!.id, 'yesterday')).to.reject(/^Invalid recovery: since must be an ISO 8601 UTC timestamp/);
        await expect(t.webhooks.disable('we_none')).to.reject(/^There is no webhook endpoint "we_none"/);
        await expect(t.webhooks.resend('evt_none')).to.reject(/^There is no event "evt_none"/);

        await t.webhooks.clear();
        expect(await t.webhooks.get()).to.equal([]);
        await t.close();
        await expect(t.webhooks.get()).to.reject(/There is no instance/);
    });

    it('lists events a page at a time, after an event and of a type, refusing what GET …/events refuses', async () => {

        const t = await kit.instance({ seed: 'none', pay: true, ids: 'sequential', clock: '2030-01-01T00:00:00Z' });
        for (const key of ['one', 'two']) {
            expect((await transfer(t, key)).statusCode).to.equal(201);
        }

        expect(await t.clock.advance('2d')).to.equal({ 'pay.transaction.completed': 2 });
        const events = await t.events.list();
        expect(events.map(({ id, type, created_at: at }) => [id.slice(-2), type, at])).to.equal([
            ['01', 'pay.transaction.created', '2030-01-01T00:00:00.000Z'],
            ['02', 'pay.transaction.created', '2030-01-01T00:00:00.000Z'],
            ['03', 'pay.transaction.completed', '2030-01-03T00:00:00.000Z'],
            ['04', 'pay.transaction.completed', '2030-01-03T00:00:00.000Z']
        ]);
        expect(events[2]!.data).to.include({ status: 'completed', amount: 100 });
        expect(await t.events.list({ after: events[0]!.id, limit: 2 })).to.equal(events.slice(1, 3));
        expect(await t.events.list({ type: 'pay.transaction.completed' })).to.equal(events.slice(2));

        await expect(t.events.list({ limit: 0 })).to.reject('Invalid event query: limit must be greater than or equal to 1');
        await expect(t.events.list({ type: 'pay.nothing' })).to.reject(/^Invalid event query: type must be an event type/);
        await expect(t.events.list({ after: '00000000-0000-4000-9000-0000000000ff' })).to.reject(/^after names no event this data set holds/);
        await t.close();
    });

    it('flushes, moves the clock with its attempts counted, and reads the delivery journal', async () => {

        receiver.clear();
        receiver.respondWith(503);
        const t = await kit.instance({ seed: 'none', pay: true, ids: 'sequential', clock: '2030-01-01T00:00:00Z' });
        const [endpoint] = await t.webhooks.set([{ url: receiver.url, secret: receiver.secret, types: ['pay.transaction.completed'], retry_schedule: ['1m'] }]);
        expect((await transfer(t, 'one')).statusCode).to.equal(201);
        expect(await t.webhooks.flush()).to.equal(0);

        expect(await t.clock.move({ to: '2030-01-03T00:00:00Z' })).to.equal({ now: new Date('2030-01-03T00:00:00Z'), applied: { 'pay.transaction.completed': 1 }, attempted: 1, remaining: 0 });
        expect(await t.clock.move({ by: '30s' })).to.equal({ now: new Date('2030-01-03T00:00:30Z'), applied: {}, attempted: 0, remaining: 0 });
        expect(await t.clock.move({ by: 30_000 })).to.equal({ now: new Date('2030-01-03T00:01:00Z'), applied: {}, attempted: 1, remaining: 0 });
        expect(receiver.deliveries.map(({ status, verified }) => ({ status, verified }))).to.equal([{ status: 503, verified: true }, { status: 204, verified: true }]);

        const attempts = t.webhooks.deliveries.list();
        expect(attempts.map(({ attempt, status, at, next_attempt_at: next, endpoint_id: id }) => ({ attempt, status, at, next, id }))).to.equal([
            { attempt: 1, status: 503, at: '2030-01-03T00:00:00.000Z', next: '2030-01-03T00:01:00.000Z', id: endpoint!.id },
            { attempt: 2, status: 204, at: '2030-01-03T00:01:00.000Z', next: null, id: endpoint!.id }
        ]);
        expect(t.webhooks.deliveries.count()).to.equal(2);
        expect(t.webhooks.deliveries.count({ status: 503 })).to.equal(1);
        expect(t.webhooks.deliveries.find({ attempt: 2 })).to.equal([attempts[1]!]);
        expect(t.webhooks.deliveries.find()).to.equal(attempts);
        expect(() => t.webhooks.deliveries.count({ status: 42 })).to.throw(/^Invalid delivery pattern: status must be greater than or equal to 100/);
        expect(await t.webhooks.get()).to.equal([{ ...endpoint!, secret: 'whsec_********', delivered: 1, failed: 1 }]);

        t.webhooks.deliveries.clear();
        expect(t.webhooks.deliveries.list()).to.equal([]);
        await t.close();
    });
});
