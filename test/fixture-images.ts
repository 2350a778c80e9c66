import Code from '@hapi/code';
import type { Server } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { placedNamespaces } from '../lib/config';
import { Clock, IdSource, unheard } from '../lib/record-context';
import type { InstanceData, InstanceDataOptions } from '../lib/storage/engine';
import { fixtureImageKey, FixtureImages } from '../lib/storage/fixture-images';
import { createSqliteInstance } from '../lib/storage/sqlite/engine';
import type { SqliteSnapshot } from '../lib/storage/sqlite/instance';
import { createTestKit } from '../lib/testing';
import { expectError } from './helpers/errors';
import { adminBearer, body, testServer } from './helpers/server';
import { builtInNamespaces } from '../lib/namespaces';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


// A prepared world: some records name their id and created_at, others take the instance's next id and its clock.
function world(products: number, stamped = false): Record<string, unknown> {

    const stamp = (index: number) => (stamped ? { id: `r-${index}`, created_at: `2029-01-01T00:00:${String(index % 60).padStart(2, '0')}.000Z` } : {});
    return {
        commerce: {
            businesses: [{ id: 'b-pier', name: 'Pier Kiosk', category: 'Kiosk', city: 'Harbourside', phone: '+1 207 555 0199', created_at: '2029-01-01T00:00:00.000Z' }],
            products: Array.from({ length: products }, (_, index) => ({ ...stamp(index), name: `Product ${index}`, price: 1 + index, currency: 'USD', business_id: 'b-pier' }))
        },
        logistics: {
            locations: [{ id: 'l-quay', name: 'Quay', address: '2 Quay Street', city: 'Harbourside', latitude: 50.6, longitude: -3.4, created_at: '2029-01-01T00:00:00.000Z' }],
            vehicles: [{ ...stamp(0), make: 'Toyota', model: 'Yaris', year: 2022, seats: 5, daily_rate: 39, currency: 'GBP', created_at: '2029-01-01T00:00:00.000Z' }]
        }
    };
}


const frozen = { seed: 'none', ids: 'sequential', clock: '2030-01-01T00:00:00.000Z', pay: true };


describe('fixture images', () => {

    let cached: Server;
    let uncached: Server;

    before(async () => {

        cached = await testServer();
        uncached = await testServer({ fixtureCacheMib: 0 });
    });

    after(async () => {

        await cached.stop();
        await uncached.stop();
    });

    const create = async (server: Server, payload: object) => {

        const res = await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server), payload });
        expect(res.statusCode, res.payload).to.equal(201);
        return body<{ id: string; base_path: string }>(res).id;
    };

    const data = (server: Server, id: string): InstanceData => server.app.localgate.instances.find(id)!.data;
    const images = async (server: Server, id: string) => (await data(server, id).snapshot() as SqliteSnapshot).images;

    // Everything a caller reads of the instance, then the record its next write makes (id and created_at).
    const readings = async (server: Server, id: string) => {

        const base = `/i/${id}`;
        const headers = adminBearer(server);
        const read = async (url: string) => (await server.inject({ url: `${base}${url}`, headers })).payload;
        const pages = [];
        for (const url of ['/v1/commerce/products?limit=100', '/v1/commerce/products?limit=100&offset=100', '/v1/commerce/businesses', '/v1/logistics/vehicles', '/v1/logistics/locations']) {
            pages.push(await read(url));
        }

        const next = await server.inject({ method: 'POST', url: `${base}/v1/commerce/products`, headers, payload: { name: 'Next', price: 2, currency: 'USD', business_id: 'b-pier' } });
        expect(next.statusCode, next.payload).to.equal(201);
        return { pages, next: next.payload };
    };

    it('makes an instance again from the image of the first load, exactly as a fresh load would make it', async () => {

        const payload = { ...frozen, fixture: world(150) };
        const first = await create(cached, payload);
        const again = await create(cached, payload);
        const fresh = await create(uncached, payload);

        // The second shares the first one's image; with the cache off, each instance loads the records itself.
        for (const namespace of ['commerce', 'logistics', 'pay'] as const) {
            expect((await images(cached, again))[namespace]).to.shallow.equal((await images(cached, first))[namespace]);
            expect((await images(cached, again))[namespace]).to.equal((await images(uncached, fresh))[namespace]);
        }

        expect((await images(uncached, fresh)).commerce).to.not.shallow.equal((await images(cached, first)).commerce);

        const expected = await readings(uncached, fresh);
        expect(JSON.parse(expected.next)).to.include({ id: '00000000-0000-4000-8000-000000000098', created_at: '2030-01-01T00:00:00.000Z' });
        expect(await readings(cached, again)).to.equal(expected);
        expect(await readings(cached, first)).to.equal(expected);

        // Reset goes back to the fixture's world, id counter included.
        await cached.app.localgate.instances.find(again)!.reset();
        expect((await readings(cached, again)).next).to.equal(expected.next);
    });

    it('makes a fixture without ids or times into an image too: its records take them once, when the image is made', async () => {

        const shared = async (payload: object) => {

            const [one, two] = [await create(cached, payload), await create(cached, payload)];
            return (await images(cached, one)).commerce === (await images(cached, two)).commerce;
        };

        expect(await shared({ seed: 'none', ids: 'sequential', fixture: world(3) })).to.be.true();
        expect(await shared({ seed: 'none', clock: '2030-01-01T00:00:00.000Z', fixture: world(3) })).to.be.true();
        expect(await shared({ seed: 'none', fixture: world(3, true) })).to.be.true();
        expect(await shared({ seed: 'demo', ids: 'sequential', clock: '2030-01-01T00:00:00.000Z', fixture: world(3) })).to.be.true();

        // Random ids and the wall clock: the first instance draws them, every later one from the image has the same.
        const payload = { seed: 'none', fixture: world(4) };
        const startedAt = new Date().toISOString();
        const first = await create(cached, payload);
        const madeAt = new Date().toISOString();
        const later = await create(cached, payload);
        const products = async (id: string) => body<{ data: { id: string; created_at: string }[] }>(await cached.inject({ url: `/i/${id}/v1/commerce/products`, headers: adminBearer(cached) })).data;
        const made = await products(first);
        expect(made.length).to.equal(4);
        expect(await products(later)).to.equal(made);
        for (const product of made) {
            expect(product.id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
            expect(product.created_at >= startedAt && product.created_at <= madeAt, product.created_at).to.be.true();
        }

        expect(new Set(made.map((product) => product.id)).size).to.equal(4);

        // What an instance makes after it is its own: a fresh random id, a time after the image's records.
        const next = async (id: string) => body<{ id: string; created_at: string }>(await cached.inject({ method: 'POST', url: `/i/${id}/v1/commerce/products`, headers: adminBearer(cached), payload: { name: 'Next', price: 2, currency: 'USD', business_id: 'b-pier' } }));
        const [one, two] = [await next(first), await next(later)];
        expect(one.id).to.not.equal(two.id);
        expect(made.map((product) => product.id)).to.not.include(one.id);
        expect(made.map((product) => product.id)).to.not.include(two.id);
        expect(one.created_at > made.at(-1)!.created_at, one.created_at).to.be.true();
    });

    it('answers a refused fixture with the same 400 each time', async () => {

        const payload = { seed: 'none', ids: 'sequential', clock: '2030-01-01T00:00:00.000Z', fixture: { commerce: { products: [{ name: 'Cone', price: 2.5, currency: 'USD', business_id: 'b-gone' }] } } };
        for (let i = 0; i < 2; ++i) {
            const res = await cached.inject({ method: 'POST', url: '/_instances', headers: adminBearer(cached), payload });
            expectError(res, 400, 'invalid_fixture', 'fixture.commerce.products[0].business_id');
        }
    });

    it('gives the kit\'s instances the same images, and loads a fixture that is more than plain JSON each time', async () => {

        const kit = await createTestKit();
        const instances = kit.server.app.localgate.instances;
        const commerceImage = async (id: string) => (await instances.find(id)!.data.snapshot() as SqliteSnapshot).images.commerce;

        const fixture = world(5, true);
        const [one, two] = [await kit.instance({ seed: 'none', fixture }), await kit.instance({ seed: 'none', fixture })];
        expect(await commerceImage(two.id)).to.shallow.equal(await commerceImage(one.id));

        const unplain = { commerce: { businesses: [{ id: 'b-1', name: 'A', description: undefined, category: 'Kiosk', city: 'C', phone: '1', created_at: '2029-01-01T00:00:00.000Z' }] } };
        const [three, four] = [await kit.instance({ seed: 'none', fixture: unplain }), await kit.instance({ seed: 'none', fixture: unplain })];
        expect(await commerceImage(four.id)).to.not.shallow.equal(await commerceImage(three.id));
        expect(await commerceImage(four.id)).to.equal(await commerceImage(three.id));
        await kit.close();
    });
});


describe('fixtureImageKey()', () => {

    const options = (records: unknown, change: Partial<InstanceDataOptions> = {}): InstanceDataOptions => ({
        seed: false,
        pay: false,
        fixture: { records, origin: 'fixture' },
        context: { clock: new Clock(), ids: new IdSource(), committed: unheard },
        ...change
    });

    it('is the same for the same records and options, and differs with each option that changes the load', () => {

        const records = { commerce: { products: [{ name: 'A', price: 1.5, in_stock: true, note: null, tags: ['x'] }] } };
        const key = fixtureImageKey(options(records));
        expect(key).to.be.a.string();
        expect(fixtureImageKey(options(JSON.parse(JSON.stringify(records))))).to.equal(key);

        const counted = new IdSource('sequential');
        counted.counter = 3;
        const keys = [
            key,
            fixtureImageKey(options({ commerce: {} })),
            fixtureImageKey(options(records, { seed: true })),
            fixtureImageKey(options(records, { pay: true })),
            fixtureImageKey(options(records, { context: { clock: new Clock(new Date(0)), ids: new IdSource(), committed: unheard } })),
            fixtureImageKey(options(records, { context: { clock: new Clock(), ids: new IdSource('sequential'), committed: unheard } })),
            fixtureImageKey(options(records, { context: { clock: new Clock(), ids: counted, committed: unheard } }))
        ];
        expect(new Set(keys).size).to.equal(keys.length);
    });

    it('is null for records holding more than plain JSON', () => {

        const cyclic: Record<string, unknown> = {};
        cyclic.self = cyclic;
        const deep = JSON.parse(`${'['.repeat(40)}1${']'.repeat(40)}`) as unknown;
        for (const value of [new Date(0), undefined, Number.NaN, () => 1, new Map(), 1n, cyclic, [undefined], deep]) {
            expect(fixtureImageKey(options({ commerce: { products: [{ value }] } }))).to.be.null();
        }
    });
});


describe('FixtureImages', () => {

    it('counts only the databases a fixture changed, not the shared images the others still are', async () => {

        const kept = new FixtureImages<SqliteSnapshot>(2 ** 30);
        const clock = () => ({ clock: new Clock(new Date('2030-01-01T00:00:00.000Z')), ids: new IdSource('sequential'), committed: unheard });
        const options: InstanceDataOptions<SqliteSnapshot> = { seed: true, pay: true, fixture: { records: { commerce: { businesses: [{ name: 'Kiosk', category: 'K', city: 'X', phone: '1' }] } }, origin: 'fixture' }, context: clock() };
        const data = await createSqliteInstance({ namespaces: builtInNamespaces, placedNamespaces: placedNamespaces(builtInNamespaces) }, options, kept);
        const image = kept.find(fixtureImageKey({ ...options, context: clock() })!)!;
        const { images } = image.data;
        expect(kept.bytes).to.equal(images.commerce!.length);
        expect(image.data.bytes).to.equal(images.commerce!.length);
        await data.close();
    });

    const image = (bytes: number) => ({ data: { bytes }, counter: bytes });

    it('keeps images within its bytes, dropping the least recently used first', () => {

        const kept = new FixtureImages(10);
        kept.keep('a', image(4));
        kept.keep('b', image(3));
        expect(kept.find('a')!.counter).to.equal(4);
        kept.keep('c', image(5));
        expect([kept.size, kept.bytes]).to.equal([2, 9]);
        expect(kept.find('b')).to.be.undefined();
        expect(kept.find('a')!.counter).to.equal(4);

        kept.keep('d', image(6));
        expect([kept.size, kept.bytes]).to.equal([2, 10]);
        expect(kept.find('c')).to.be.undefined();
        expect(kept.find('d')!.counter).to.equal(6);

        kept.keep('e', image(11));
        expect([kept.size, kept.bytes]).to.equal([2, 10]);
        expect(kept.find('e')).to.be.undefined();
    });
});
