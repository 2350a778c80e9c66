import Code from '@hapi/code';
import type { ServerInjectOptions, ServerInjectResponse } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { createTestKit, type TestInstance, type TestKit } from '../lib/testing';
import { expectError } from './helpers/errors';
import { adminBearer, body, type List } from './helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


const bakery = 'd851fadb-03ca-5a24-ba16-c15cce19933b';
const golf = '1a1aec40-05e3-4128-a86c-6981ec6a3eb5';
const yaris = '67f7b2a9-5639-460c-a9f5-d114637c1b43';
const quay = '8a5c2440-7943-4c0d-bdf4-9777cd05095e';
const station = '2f4a202e-61d6-4275-9ddb-094f7d5a839d';
const callers = ['alice', 'bob', 'carol'];

type Inject = (options: ServerInjectOptions) => Promise<ServerInjectResponse>;
type World = Record<string, unknown>;


/** Records written past the demo data: what the API cannot write itself (offers, a cancelled booking) comes in a fixture. */
export const worldFixture = {
    commerce: {
        offers: [{ id: 'offer-two-loaves', product_id: 'p-sourdough', title: 'Two loaves', price: 7.5, currency: 'USD', valid_from: '2030-01-01T00:00:00Z', valid_until: '2030-02-01T00:00:00Z' }],
        products: [{ id: 'p-sourdough', name: 'Sourdough', price: 4.25, currency: 'USD', business_id: bakery, created_by: 'alice', created_at: '2029-12-31T00:00:00Z' }]
    },
    logistics: {
        bookings: [{ id: 'b-cancelled', vehicle_id: golf, pickup_location_id: quay, dropoff_location_id: station, pickup_at: '2030-03-01T09:00:00Z', return_at: '2030-03-03T09:00:00Z', customer_id: 'alice', status: 'cancelled', notes: 'Plans changed' }]
    }
};


/** Writes through the API as callers would: products, inquiries, scam reports, bookings, deposits and withdrawals, the clock moving between some. */
export async function writeWorld(inject: Inject, auth: (subject: string) => { authorization: string }, advance: () => Promise<void> | void): Promise<void> {

    const post = async (subject: string, url: string, payload: object, headers: Record<string, string> = {}) => {

        const res = await inject({ method: 'POST', url, payload, headers: { ...auth(subject), ...headers } });
        expect(res.statusCode, `${url} ${res.payload}`).to.be.within(200, 201);
        return body<{ id: string }>(res);
    };

    const product = await post('alice', '/v1/commerce/products', { name: 'Rye', price: 3.1, currency: 'USD', business_id: bakery });
    await post('bob', '/v1/commerce/products', { name: 'Bagels', price: 500, currency: 'JPY', business_id: bakery });
    await post('bob', '/v1/commerce/inquiries', { product_id: product.id, message: 'Gluten free?' });
    await post('carol', '/v1/commerce/inquiries', { business_id: bakery, message: 'Open Sundays?' });
    await advance();
    await post('bob', '/v1/commerce/scam-reports', { target_type: 'product', target_id: product.id, reason: 'Stale' });
    await post('carol', '/v1/commerce/scam-reports', { target_type: 'product', target_id: product.id, reason: 'Not rye' });
    await post('carol', '/v1/commerce/scam-reports', { target_type: 'offer', target_id: 'offer-two-loaves', reason: 'Never honoured' });
    await post('carol', '/v1/commerce/scam-reports', { target_type: 'business', target_id: bakery, reason: 'Closed' });
    await post('alice', '/v1/logistics/bookings', { vehicle_id: golf, pickup_location_id: quay, dropoff_location_id: station, pickup_at: '2030-03-01T09:00:00Z', return_at: '2030-03-02T09:00:00Z' });
    await post('bob', '/v1/logistics/bookings', { vehicle_id: yaris, pickup_location_id: station, dropoff_location_id: quay, pickup_at: '2030-04-01T09:00:00Z', return_at: '2030-04-05T09:00:00Z', notes: 'Child seat' });
    await advance();
    await post('bob', '/v1/logistics/bookings', { vehicle_id: golf, pickup_location_id: station, dropoff_location_id: station, pickup_at: '2030-03-02T09:00:00Z', return_at: '2030-03-04T09:00:00Z' });

    const move = (subject: string, kind: 'deposit' | 'withdraw', key: string, asset: string, amount: number) => post(subject, `/v1/pay/gateway/${kind}`, { provider_id: 'sandbox', asset, amount }, { 'idempotency-key': key });
    await move('alice', 'deposit', 'a1', 'USD', 10_000);
    await move('alice', 'withdraw', 'a2', 'USD', 2_500);
    await move('alice', 'deposit', 'a3', 'MIT', 700);
    await advance();
    await move('bob', 'deposit', 'b1', 'EUR', 999);
    await move('bob', 'withdraw', 'b2', 'EUR', 999);
    await move('alice', 'withdraw', 'a4', 'MIT', 200);
}


/** Every list page and record each caller (and no caller) can read, by request, as the bytes it answered. */
export async function readWorld(inject: Inject, auth: (subject: string) => { authorization: string }, file: World): Promise<Record<string, string>> {

    const answers: Record<string, string> = {};
    const read = async (url: string, subject?: string) => {

        const res = await inject({ method: 'GET', url, headers: subject ? auth(subject) : {} });
        answers[`${subject ?? '-'} ${url}`] = `${res.statusCode} ${res.headers['x-total-count'] ?? ''} ${res.payload}`;
        return res;
    };

    const pages = async (url: string, subject?: string) => {

        for (let offset = 0, total = 1; offset < total; offset += 4) {
            total = body<List<unknown>>(await read(`${url}${url.includes('?') ? '&' : '?'}limit=4&offset=${offset}`, subject)).total;
        }
    };

    const records = file as Record<string, Record<string, { id: string }[]>>;
    const ids = (namespace: string, collection: string) => records[namespace]![collection]!.map((record) => record.id);

    for (const url of ['/v1/commerce/products', '/v1/commerce/businesses', '/v1/commerce/offers', '/v1/logistics/vehicles', '/v1/logistics/vehicles?available=false', '/v1/logistics/locations']) {
        await pages(url);
    }

    for (const id of ids('commerce', 'products')) {
        await read(`/v1/commerce/products/${id}`);
    }

    for (const id of ids('commerce', 'businesses')) {
        await read(`/v1/commerce/businesses/${id}`);
    }

    for (const id of ids('logistics', 'vehicles')) {
        await read(`/v1/logistics/vehicles/${id}`);
    }

    for (const subject of callers) {
        await pages('/v1/logistics/bookings', subject);
        await pages('/v1/pay/wallet/transactions', subject);
        for (const id of ids('logistics', 'bookings')) {
            await read(`/v1/logistics/bookings/${id}`, subject);
        }

        for (const id of ids('pay', 'transactions')) {
            await read(`/v1/pay/wallet/transactions/${id}`, subject);
        }

        for (const id of ids('commerce', 'inquiries')) {
            await read(`/v1/commerce/inquiries/${id}`, subject);
        }

        for (const id of ids('commerce', 'scam_reports')) {
            await read(`/v1/commerce/scam-reports/${id}`, subject);
        }
    }

    // Opening a wallet writes one: read wallets last, in the same order on both sides.
    for (const subject of callers) {
        await read('/v1/pay/wallet', subject);
    }

    return answers;
}


describe('export and load back', () => {

    let kit: TestKit;

    before(async () => {

        kit = await createTestKit({ validateResponses: true });
    });

    after(() => kit.close());

    async function richInstance(options: { ids?: 'sequential'; clock?: string } = { ids: 'sequential', clock: '2030-01-01T00:00:00.000Z' }): Promise<TestInstance> {

        const t = await kit.instance({ ...options, pay: true, fixture: worldFixture });
        await writeWorld((request) => t.inject(request), (subject) => t.auth(subject), () => (options.clock ? t.clock.advance('90s') : undefined));
        return t;
    }

    it('answers every list page and record of the copy byte for byte as the original did', async () => {

        const original = await richInstance();
        const file = await original.export();
        const copy = await kit.instance({ seed: 'none', pay: true, fixture: file });

        expect(await copy.export()).to.equal(file);
        const seen = await readWorld((request) => original.inject(request), (subject) => original.auth(subject), file);
        expect(await readWorld((request) => copy.inject(request), (subject) => copy.auth(subject), file)).to.equal(seen);
        expect(Object.keys(seen).length).to.equal(159);
        expect(seen['- /v1/commerce/products?limit=4&offset=0']).to.startWith('200 38 ');
        expect(seen['alice /v1/pay/wallet']).to.contain('"balances":[{"asset":"MIT","amount":500},{"asset":"USD","amount":7500}]');
        expect(seen['alice /v1/logistics/bookings?limit=4&offset=0']).to.contain('"status":"cancelled"');

        // The copy continues the clock and the id counter: the next record is the same in both.
        expect(copy.clock.now().toISOString()).to.equal('2030-01-01T00:04:30.000Z');
        const next = (t: TestInstance) => t.inject({ method: 'POST', url: '/v1/commerce/products', headers: t.auth('dan'), payload: { name: 'Next', price: 1, currency: 'USD', business_id: bakery } });
        expect((await next(copy)).payload).to.equal((await next(original)).payload);
        await original.close();
        await copy.close();
    });

    it('opens the file with its format, each namespace\'s migrations, and the instance\'s clock and ids', async () => {

        const t = await kit.instance({ seed: 'none', pay: true });
        expect(await t.export()).to.equal({
            localgate: {
                format: 1,
                migrations: {
                    commerce: ['001_catalogue_inquiries_scam_reports'],
                    logistics: ['001_vehicles_locations_drivers_bookings', '002_booking_counts'],
                    pay: ['001_token_types', '002_ledger', '003_credentials']
                },
                instance: { clock: null, ids: 'random', id_counter: 0 }
            },
            commerce: { businesses: [], products: [], offers: [], inquiries: [], scam_reports: [] },
            logistics: { locations: [], vehicles: [], drivers: [], bookings: [] },
            pay: { wallets: [], transactions: [] }
        });

        // Without pay, the file has none.
        const without = await kit.instance({ seed: 'none' });
        expect(Object.keys(await without.export())).to.equal(['localgate', 'commerce', 'logistics']);
        await t.close();
        await without.close();
    });

    it('is served to the admin over HTTP as a file, and loads back with POST /_instances', async () => {

        const original = await richInstance({});
        const admin = adminBearer(kit.server);
        const res = await kit.server.inject({ url: `/_instances/${original.id}/export`, headers: admin });
        expect(res.statusCode).to.equal(200);
        expect(res.headers['content-disposition']).to.equal(`attachment; filename="localgate-${original.id}.json"`);
        const file = body<World>(res);
        expect(file.localgate).to.include({ instance: { clock: null, ids: 'random', id_counter: 0 } });

        const made = await kit.server.inject({ method: 'POST', url: '/_instances', headers: admin, payload: { seed: 'none', pay: true, fixture: file } });
        expect(made.statusCode).to.equal(201);
        expect(body(made)).to.include({ seed: 'none', clock: null, ids: 'random' });
        const copy = body<{ id: string }>(made).id;
        const again = await kit.server.inject({ url: `/_instances/${copy}/export`, headers: admin });
        expect(body<World>(again)).to.equal({ ...file, localgate: file.localgate });

        expectError(await kit.server.inject({ url: '/_instances/nowhere/export', headers: admin }), 404, 'instance_not_found');
        expectError(await kit.server.inject({ url: `/_instances/${original.id}/export`, headers: { authorization: `Bearer ${original.token('alice')}` } }), 403);
        await original.close();
        await kit.server.inject({ method: 'DELETE', url: `/_instances/${copy}`, headers: admin });
    });

    it('takes the clock and ids the request sets over those the file carries', async () => {

        const original = await kit.instance({ seed: 'none', ids: 'sequential', clock: '2030-01-01T00:00:00.000Z' });
        await original.inject({ method: 'POST', url: '/v1/commerce/inquiries', headers: original.auth('bob'), payload: { business_id: bakery, message: 'Hi' } }).then((res) => expect(res.statusCode).to.equal(422));
        const file = await original.export();
        const own = await kit.instance({ seed: 'none', ids: 'sequential', fixture: file });
        expect(own.clock.now().getFullYear()).to.not.equal(2030);
        const carried = await kit.instance({ seed: 'none', fixture: file });
        expect(carried.clock.now().toISOString()).to.equal('2030-01-01T00:00:00.000Z');
        await Promise.all([original.close(), own.close(), carried.close()]);
    });
});
