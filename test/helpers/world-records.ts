import Code from '@hapi/code';
import type { ServerInjectOptions, ServerInjectResponse } from '@hapi/hapi';

import type { TestKit } from '../../lib/testing';
import { body, type List } from './server';


const { expect } = Code;

// The records a test writes into a world through the API and reads back from it, for the export's round trips.

export const bakery = 'd851fadb-03ca-5a24-ba16-c15cce19933b';
const golf = '1a1aec40-05e3-4128-a86c-6981ec6a3eb5';
const yaris = '67f7b2a9-5639-460c-a9f5-d114637c1b43';
const quay = '8a5c2440-7943-4c0d-bdf4-9777cd05095e';
const station = '2f4a202e-61d6-4275-9ddb-094f7d5a839d';
const callers = ['alice', 'bob', 'carol'];

type Inject = (options: ServerInjectOptions) => Promise<ServerInjectResponse>;

/** An export file, as GET …/export answers it: the records of each namespace, and the localgate object. */
export type ExportFile = Record<string, unknown>;


/** Records written past the demo data: what the API cannot write itself (offers) and a cancelled booking come in a fixture. */
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
        expect(res.statusCode, `${url} ${res.payload}`).to.equal(201);
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
export async function readWorld(inject: Inject, auth: (subject: string) => { authorization: string }, file: ExportFile): Promise<Record<string, string>> {

    const answers: Record<string, string> = {};
    const read = async (url: string, subject?: string) => {

        const res = await inject({ method: 'GET', url, headers: subject ? auth(subject) : {} });
        answers[`${subject ?? '-'} ${url}`] = `${res.statusCode} ${res.headers['x-total-count'] ?? ''} ${res.payload}`;
        return res;
    };

    const pages = async (url: string, subject?: string) => {

        let offset = 0;
        let total = 1;
        while (offset < total) {
            total = body<List<unknown>>(await read(`${url}${url.includes('?') ? '&' : '?'}limit=4&offset=${offset}`, subject)).total;
            offset += 4;
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

    // Reading a wallet opens one for a caller without: only the wallets the file holds.
    for (const owner of records.pay!.wallets!.map((wallet) => (wallet as unknown as { owner_id: string }).owner_id)) {
        await read('/v1/pay/wallet', owner);
    }

    return answers;
}




/**
 * The export of a new instance whose clock stands still and whose ids are random, in which the owner deposited 100 USD
 * and then withdrew 50: two moves at one instant, their ids in no order.
 */
export async function frozenMovesExport(kit: TestKit, owner: string): Promise<Record<string, unknown>> {

    const t = await kit.instance({ seed: 'none', pay: true, clock: '2030-01-01T00:00:00.000Z', ids: 'random' });
    for (const [kind, amount] of [['deposit', 100], ['withdraw', 50]] as const) {
        const res = await t.inject({ method: 'POST', url: `/v1/pay/gateway/${kind}`, headers: { ...t.auth(owner), 'idempotency-key': kind }, payload: { provider_id: 'sandbox', asset: 'USD', amount } });
        expect(res.statusCode, res.payload).to.equal(201);
    }

    const file = await t.export();
    await t.close();
    return file;
}
