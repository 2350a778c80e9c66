import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, test } from 'node:test';

import { createTestKit } from 'localgate/testing';

// A data set of its own: no demo data, one business and one product.
const fixture = {
    commerce: {
        businesses: [{ id: 'kiosk', name: 'Harbour Kiosk', category: 'Snacks', city: 'Harbourside', phone: '+1 207 555 0199' }],
        products: [{ id: 'flapjack', name: 'Flapjack', price: 2.5, currency: 'USD', business_id: 'kiosk', created_at: '2029-12-31T12:00:00Z' }]
    }
};

let kit;
let t;

before(async () => {

    kit = await createTestKit();                    // one server for the file
});

after(() => kit.close());

beforeEach(async () => {

    // A fresh instance per test: a frozen clock and sequential ids make every body the same on every run.
    t = await kit.instance({ seed: 'none', fixture, clock: '2030-01-01T00:00:00Z', ids: 'sequential' });
});

afterEach(() => t.close());

test('lists the fixture\'s products, and then the one a caller adds', async () => {

    const listed = await t.inject('/v1/commerce/products');
    assert.equal(listed.statusCode, 200);
    assert.deepEqual(JSON.parse(listed.payload).data.map((product) => product.id), ['flapjack']);

    const created = await t.inject({
        method: 'POST',
        url: '/v1/commerce/products',
        headers: t.auth('alice'),
        payload: { name: 'Shortbread', price: 3, currency: 'USD', business_id: 'kiosk' }
    });
    assert.equal(created.statusCode, 201);
    assert.deepEqual(JSON.parse(created.payload), {
        id: '00000000-0000-4000-8000-000000000001',
        name: 'Shortbread',
        description: '',
        price: 3,
        currency: 'USD',
        business_id: 'kiosk',
        created_by: 'alice',
        created_at: '2030-01-01T00:00:00.000Z',
        scam_report_count: 0
    });
});

test('restores a snapshot: data, clock and id counter as they were', async () => {

    const total = async () => JSON.parse((await t.inject('/v1/commerce/products')).payload).total;
    const snapshot = await t.snapshot();

    await t.clock.advance('2h');
    const created = await t.inject({
        method: 'POST',
        url: '/v1/commerce/products',
        headers: t.auth('alice'),
        payload: { name: 'Kelp crisps', price: 4, currency: 'USD', business_id: 'kiosk' }
    });
    assert.equal(created.statusCode, 201);
    assert.equal(JSON.parse(created.payload).created_at, '2030-01-01T02:00:00.000Z');
    assert.equal(await total(), 2);

    await t.restore(snapshot);
    assert.equal(await total(), 1);
    assert.equal(t.clock.now().toISOString(), '2030-01-01T00:00:00.000Z');

    // The same instance over HTTP, for a client that needs a URL instead of inject().
    const url = await kit.listen();
    const res = await fetch(`${url}${t.basePath}/v1/commerce/products?limit=1`);
    assert.equal(res.status, 200);
    assert.equal((await res.json()).data[0].name, 'Flapjack');
});
