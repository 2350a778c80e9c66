import Code from '@hapi/code';
import Lab from '@hapi/lab';

import type { Engine, InstanceData } from '../lib/storage/engine';
import { InstancePool, poolDepth, poolKinds, type PoolKind } from '../lib/instances/pool';
import { sqliteDatabase } from '../lib/storage/sqlite/engine';
import { createTestKit, type TestKit } from '../lib/testing';
import { body, type List } from './helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


// Ids of the shipped demo data.
const bakery = 'd851fadb-03ca-5a24-ba16-c15cce19933b';
const product = { name: 'Pool loaf', price: 2.5, currency: 'USD', business_id: bakery };

// A turn of the event loop: the pool makes one data set per turn in idle time.
const idle = () => new Promise((resolve) => setImmediate(resolve));


describe('the instance pool', () => {

    let kit: TestKit;

    before(async () => {

        kit = await createTestKit();
    });

    after(() => kit.close());

    const pool = () => kit.server.app.localgate.instances.pool;
    const dataOf = (id: string) => kit.server.app.localgate.instances.find(id)!.data;

    it('hands out a deleted instance\'s data set rolled back, with the clock and ids the new one asks for', async () => {

        const first = await kit.instance({ seed: 'demo' });
        const created = await first.inject({ method: 'POST', url: '/v1/commerce/products', headers: first.auth('alice'), payload: product });
        expect(created.statusCode).to.equal(201);
        expect(body<List<unknown>>(await first.inject('/v1/commerce/products')).total).to.equal(36);
        const data = dataOf(first.id);
        await first.close();

        const second = await kit.instance({ seed: 'demo', ids: 'sequential', clock: '2030-01-01T00:00:00Z' });
        expect(dataOf(second.id)).to.shallow.equal(data);
        expect(body<List<unknown>>(await second.inject('/v1/commerce/products')).total).to.equal(35);
        const made = await second.inject({ method: 'POST', url: '/v1/commerce/products', headers: second.auth('alice'), payload: product });
        expect(body(made)).to.include({ id: '00000000-0000-4000-8000-000000000001', created_at: '2030-01-01T00:00:00.000Z' });
        await second.close();
    });

    it('takes an expired instance\'s data set back as a deleted one\'s', async () => {

        const expiring = await createTestKit({ instanceIdleTtlMs: 1000 });
        const instances = expiring.server.app.localgate.instances;
        const released: unknown[] = [];
        const release = instances.pool.release.bind(instances.pool);
        instances.pool.release = (key, pooled) => {

            released.push([key, pooled.data]);
            return release(key, pooled);
        };

        const t = await expiring.instance({ seed: 'demo' });
        const data = instances.find(t.id)!.data;
        instances.find(t.id)!.lastUsed -= 1000;
        expect((await t.inject('/v1/commerce/products')).statusCode).to.equal(404);
        expect(released).to.equal([['seed:demo', data]]);
        await expiring.close();
    });

    it('makes instances of a kind ahead in idle time, up to its depth, with their databases open', async () => {

        const t = await kit.instance({ seed: 'none' });
        await idle();
        await idle();
        await idle();
        const empty = await kit.instance({ seed: 'none' });
        // One made ahead is handed out: its reads answer from databases already open.
        expect(sqliteDatabase(dataOf(empty.id), 'commerce').inTransaction).to.equal(true);
        expect(body<List<unknown>>(await empty.inject('/v1/commerce/products')).total).to.equal(0);
        await idle();
        await idle();
        expect(pool().bytes).to.be.above(0);
        await t.close();
        await empty.close();
    });

    it('resets by rolling back, its connection and statements kept, and still goes back to the pool', async () => {

        const t = await kit.instance({ seed: 'demo', ids: 'sequential', clock: '2030-01-01T00:00:00Z' });
        const post = () => t.inject({ method: 'POST', url: '/v1/commerce/products', headers: t.auth('alice'), payload: product });
        const first = await post();
        expect(body(first)).to.include({ id: '00000000-0000-4000-8000-000000000001' });
        const data = dataOf(t.id);
        const connection = sqliteDatabase(data, 'commerce');
        await t.clock.advance('1h');
        await t.reset();
        expect(sqliteDatabase(data, 'commerce')).to.shallow.equal(connection);
        expect(body<List<unknown>>(await t.inject('/v1/commerce/products')).total).to.equal(35);
        expect((await post()).payload).to.equal(first.payload);
        await t.close();

        const next = await kit.instance({ seed: 'demo' });
        expect(dataOf(next.id)).to.shallow.equal(data);
        await next.close();
    });

    it('closes a data set that cannot roll back (a snapshot committed it) rather than pool it', async () => {

        const t = await kit.instance({ seed: 'demo' });
        await t.inject({ method: 'POST', url: '/v1/commerce/products', headers: t.auth('alice'), payload: product });
        const snapshot = await t.snapshot();
        expect(snapshot).to.be.a.string();
        const data = dataOf(t.id);
        await t.close();

        const next = await kit.instance({ seed: 'demo' });
        expect(dataOf(next.id)).to.not.shallow.equal(data);
        expect(body<List<unknown>>(await next.inject('/v1/commerce/products')).total).to.equal(35);
        await next.close();
    });

    it('does not recycle a data set whose transaction ended, nor one with pay', async () => {

        const t = await kit.instance({ seed: 'none' });
        const data = dataOf(t.id);
        sqliteDatabase(data, 'commerce').exec('COMMIT');
        expect(await data.recycle()).to.equal(null);
        await t.close();

        const paid = await kit.instance({ seed: 'none', pay: true });
        expect(await dataOf(paid.id).recycle()).to.equal(null);
        await paid.close();
    });

    it('resets an instance with pay by rolling back each copy, pay\'s among them, on the connection it had', async () => {

        const t = await kit.instance({ seed: 'none', pay: true });
        const pay = () => sqliteDatabase(dataOf(t.id), 'pay');
        const wallets = () => pay().prepare('SELECT count(*) FROM wallets').pluck().get();
        const opened = await t.inject({ url: '/v1/pay/wallet', headers: t.auth('alice') });
        expect(opened.statusCode).to.equal(200);
        const connection = pay();
        expect(wallets()).to.equal(1);

        await t.reset();
        expect(pay()).to.shallow.equal(connection);
        expect(wallets()).to.equal(0);
        const again = await t.inject({ url: '/v1/pay/wallet', headers: t.auth('alice') });
        expect(again.statusCode).to.equal(200);
        expect(body<{ balances: unknown[] }>(again).balances).to.equal([]);
        expect(wallets()).to.equal(1);
        await t.close();
    });

    it('does not pool an instance with pay', async () => {

        const t = await kit.instance({ seed: 'none', pay: true });
        const data = dataOf(t.id);
        await t.close();
        const next = await kit.instance({ seed: 'none', pay: true });
        expect(dataOf(next.id)).to.not.shallow.equal(data);
        await next.close();
    });

    it('pools a fixture\'s instances, each starting from the id counter the load left', async () => {

        const fixture = { commerce: { businesses: [{ name: 'Kiosk', category: 'Kiosk', city: 'Harbourside', phone: '1' }] } };
        const options = { seed: 'none', ids: 'sequential', clock: '2030-01-01T00:00:00Z', fixture } as const;
        // The first loads the records (and keeps their image); the next is a copy of that image.
        await (await kit.instance(options)).close();
        const first = await kit.instance(options);
        const [business] = body<List<{ id: string }>>(await first.inject('/v1/commerce/businesses')).data;
        expect(business!.id).to.equal('00000000-0000-4000-8000-000000000001');
        await first.inject({ method: 'POST', url: '/v1/commerce/products', headers: first.auth('alice'), payload: { ...product, business_id: business!.id } });
        const data = dataOf(first.id);
        await first.close();

        const again = await kit.instance(options);
        expect(dataOf(again.id)).to.shallow.equal(data);
        expect(body<List<unknown>>(await again.inject('/v1/commerce/products')).total).to.equal(0);
        const made = await again.inject({ method: 'POST', url: '/v1/commerce/products', headers: again.auth('alice'), payload: { ...product, business_id: business!.id } });
        expect(body(made)).to.include({ id: '00000000-0000-4000-8000-000000000002' });
        await again.close();
    });

    it('does not pool a fixture\'s instances when fixtures are not kept as images (FIXTURE_CACHE_MIB 0)', async () => {

        const uncached = await createTestKit({ fixtureCacheMib: 0 });
        const fixture = { commerce: { businesses: [{ name: 'Kiosk', category: 'Kiosk', city: 'Harbourside', phone: '1' }] } };
        const instances = uncached.server.app.localgate.instances;
        const t = await uncached.instance({ seed: 'none', fixture });
        const data = instances.find(t.id)!.data;
        await t.close();
        await idle();
        const next = await uncached.instance({ seed: 'none', fixture });
        expect(instances.find(next.id)!.data).to.not.shallow.equal(data);
        expect(instances.pool.size).to.equal(0);
        await uncached.close();
    });

    it('does not make a fixture\'s instances ahead when its image is larger than FIXTURE_CACHE_MIB', async () => {

        const small = await createTestKit({ fixtureCacheMib: 1 });
        const instances = small.server.app.localgate.instances;
        // Some 2 MB of records: loaded each time, as no image of them is kept.
        const businesses = Array.from({ length: 6000 }, (unused, i) => ({ name: `Kiosk ${i} ${'x'.repeat(180)}`, category: 'Kiosk', city: 'y'.repeat(90), phone: '1' }));
        const made: unknown[] = [];
        // The registry's engine, to count the data sets made.
        const { engine } = instances as unknown as { engine: Engine };
        const { createInstance } = engine;
        engine.createInstance = (options) => {

            made.push(options);
            return createInstance(options);
        };

        const t = await small.instance({ seed: 'none', fixture: { commerce: { businesses } } });
        for (let i = 0; i < 4; ++i) {
            await idle();
        }

        expect(made.length).to.equal(1);
        expect(instances.pool.size).to.equal(0);
        expect(body<List<unknown>>(await t.inject('/v1/commerce/businesses')).total).to.equal(6000);
        await t.close();
        await small.close();
    });

    it('holds nothing with INSTANCE_POOL_MIB 0, and never more than its setting', async () => {

        const off = await createTestKit({ instancePoolMib: 0 });
        const t = await off.instance();
        await idle();
        await t.close();
        expect(off.server.app.localgate.instances.pool.size).to.equal(0);
        await off.close();

        const small = await createTestKit({ instancePoolMib: 1 });
        const instances = await Promise.all([small.instance(), small.instance({ seed: 'none' }), small.instance()]);
        for (let i = 0; i < 6; ++i) {
            await idle();
        }

        await Promise.all(instances.map((instance) => instance.close()));
        const { pool: held } = small.server.app.localgate.instances;
        expect(held.bytes).to.be.between(1, 2 ** 20);
        await small.close();
        expect(held.size).to.equal(0);
        expect(held.bytes).to.equal(0);
    });
});


describe('an instance deleted while an operation on it runs', () => {

    let kit: TestKit;

    before(async () => {

        kit = await createTestKit();
    });

    after(() => kit.close());

    const dataOf = (id: string) => kit.server.app.localgate.instances.find(id)!.data;

    // Exports an instance while deleting it and handing its data set to the next one, which adds a product; answers
    // the export and whether the export's read of the data set had settled when each data set was released.
    async function exportWhileDeleted(): Promise<{ exported: Record<string, unknown>; settledAtRelease: boolean[] }> {

        const registry = kit.server.app.localgate.instances;
        const release = registry.pool.release.bind(registry.pool);
        const settledAtRelease: boolean[] = [];
        let settled = false;
        registry.pool.release = (key, pooled) => {

            settledAtRelease.push(settled);
            return release(key, pooled);
        };

        const first = await kit.instance({ seed: 'demo' });
        const data = dataOf(first.id);
        const exportRecords = data.exportRecords.bind(data);
        data.exportRecords = async () => {

            try {
                return await exportRecords();
            }
            finally {
                settled = true;
            }
        };

        const deleteAndReuse = async () => {

            await registry.delete(first.id);
            const second = await kit.instance({ seed: 'demo' });
            const made = await second.inject({ method: 'POST', url: '/v1/commerce/products', headers: second.auth('alice'), payload: product });
            expect(made.statusCode).to.equal(201);
            await second.close();
        };

        try {
            const [exported] = await Promise.all([first.export(), deleteAndReuse()]);
            return { exported, settledAtRelease };
        }
        finally {
            registry.pool.release = release;
            Reflect.deleteProperty(data, 'exportRecords');
        }
    }

    it('finishes an export on its own data before the data set goes to the next instance', async () => {

        for (let i = 0; i < 3; ++i) {
            const { exported, settledAtRelease } = await exportWhileDeleted();
            // The first instance's data set is released once its export has read it, then the second's.
            expect(settledAtRelease).to.equal([true, true]);
            const products = (exported.commerce as { products: { name: string }[] }).products;
            expect(products.length).to.equal(35);
            expect(products.filter((record) => record.name === product.name)).to.equal([]);
        }
    });

    it('refuses every later use with instance_not_found at once', async () => {

        const t = await kit.instance({ seed: 'none' });
        const deleting = kit.server.app.localgate.instances.delete(t.id);
        await expect(t.export()).to.reject('There is no instance ' + JSON.stringify(t.id) + ': it was deleted, it expired, or it never existed (POST /_instances makes one)');
        const res = await t.inject('/v1/commerce/products');
        expect(res.statusCode).to.equal(404);
        expect(body<{ code: string }>(res).code).to.equal('instance_not_found');
        expect(await deleting).to.equal(true);
    });

    it('refuses a snapshot taken as it closes, and gives its memory back to the budget', async () => {

        // A demo snapshot is about 270 KB (the event tables included): three fit in 1 MiB, and a leak would fill it within the rounds.
        const small = await createTestKit({ maxSnapshotMib: 1 });
        for (let i = 0; i < 8; ++i) {
            const t = await small.instance();
            const [snapshot, closed] = await Promise.allSettled([t.snapshot(), t.close()]);
            expect(snapshot.status).to.equal('rejected');
            expect((snapshot as PromiseRejectedResult).reason).to.include({ code: 'instance_not_found' });
            expect(closed.status).to.equal('fulfilled');
        }

        const t = await small.instance();
        for (let i = 0; i < 3; ++i) {
            await t.snapshot();
        }

        await t.close();
        await small.close();
    });
});


describe('InstancePool', () => {

    // A stand-in data set: what the pool calls, counted.
    const fake = (bytes: number, recycled: number | null = bytes, closing = () => Promise.resolve()) => {

        const calls = { closed: 0 };
        const data = {
            prepare: () => Promise.resolve(bytes),
            recycle: () => Promise.resolve(recycled),
            close: () => {

                ++calls.closed;
                return closing();
            }
        } as unknown as InstanceData;
        return { data, calls };
    };

    const kind = (key: string): PoolKind => ({ key, options: { seed: true, pay: false }, start: { frozen: null, mode: 'random', counter: 0 } });
    const pooled = (data: InstanceData) => ({ data, context: { clock: null!, ids: null!, committed: null! }, counter: 0 });
    const failures: { tags: string[]; task?: string; type?: string; at?: string[] }[] = [];
    const log = (tags: string[], data: object) => failures.push({ tags, ...data });

    it('fills the most recently used kind short of its depth, and stops where the budget ends', async () => {

        const made: ReturnType<typeof fake>[] = [];
        const engine = { namespaces: [], openDefault: null!, hasFixtureImage: () => false, createInstance: () => Promise.resolve((made[made.length] = fake(400)).data) };
        const pool = new InstancePool(engine, 1000, log);
        expect(pool.take(kind('a'))).to.equal(undefined);
        for (let i = 0; i < 5; ++i) {
            await idle();
        }

        // A kind waits with at most poolDepth made ahead.
        expect(pool.size).to.equal(poolDepth);
        expect(pool.bytes).to.equal(800);
        expect(made.length).to.equal(2);
        const taken = pool.take(kind('a'))!;
        expect(taken.data).to.shallow.equal(made[1]!.data);
        expect(pool.bytes).to.equal(400);
        await pool.close();
        expect(made[0]!.calls.closed).to.equal(1);

        // Past the budget, one made is closed and the filling stops.
        const tight = new InstancePool(engine, 700, log);
        tight.take(kind('a'));
        for (let i = 0; i < 5; ++i) {
            await idle();
        }

        expect(tight.size).to.equal(1);
        expect(made.length).to.equal(4);
        expect(made[3]!.calls.closed).to.equal(1);
        await tight.close();

        // A kind larger than the whole budget is made once, closed, and never made ahead again.
        const small = new InstancePool(engine, 300, log);
        small.take(kind('a'));
        for (let i = 0; i < 3; ++i) {
            await idle();
        }

        expect(made.length).to.equal(5);
        expect(made[4]!.calls.closed).to.equal(1);
        expect(small.take(kind('a'))).to.equal(undefined);
        for (let i = 0; i < 3; ++i) {
            await idle();
        }

        expect(made.length).to.equal(5);
        await small.close();
    });

    it('gives up the least recently used kinds, for a newer kind and past the number of kinds it keeps', async () => {

        const engine = { namespaces: [], openDefault: null!, hasFixtureImage: () => false, createInstance: () => Promise.resolve(fake(300).data) };
        const pool = new InstancePool(engine, 700, log);
        pool.take(kind('old'));
        await idle();
        await idle();
        await idle();
        expect(pool.bytes).to.equal(600);

        // A newer kind takes the room of the older one's.
        const released = fake(300);
        pool.take(kind('new'));
        await pool.release('new', pooled(released.data));
        expect(pool.bytes).to.equal(300);
        expect(released.calls.closed).to.equal(0);

        for (let i = 0; i < poolKinds; ++i) {
            pool.take(kind(`k${i}`));
        }

        await pool.close();
        expect(pool.size).to.equal(0);
    });

    it('closes what it cannot keep: an unknown kind, a full kind, a data set that does not roll back, a closed pool', async () => {

        const engine = { namespaces: [], openDefault: null!, hasFixtureImage: () => false, createInstance: () => Promise.resolve(fake(1).data) };
        const pool = new InstancePool(engine, 0, log);
        pool.take(kind('a'));

        const unknown = fake(1);
        await pool.release(null, pooled(unknown.data));
        await pool.release('b', pooled(unknown.data));
        expect(unknown.calls.closed).to.equal(2);

        const dirty = fake(1, null);
        await pool.release('a', pooled(dirty.data));
        expect(dirty.calls.closed).to.equal(1);

        // No room at all.
        const large = fake(1);
        await pool.release('a', pooled(large.data));
        expect(large.calls.closed).to.equal(1);

        const roomy = new InstancePool(engine, 100, log);
        roomy.take(kind('a'));
        await roomy.release('a', pooled(fake(1).data));
        await roomy.release('a', pooled(fake(1).data));
        const full = fake(1);
        await roomy.release('a', pooled(full.data));
        expect(full.calls.closed).to.equal(1);

        await roomy.close();
        const late = fake(1);
        await roomy.release('a', pooled(late.data));
        expect(late.calls.closed).to.equal(1);
        // A closed pool makes nothing more.
        expect(roomy.take(kind('a'))).to.equal(undefined);
        await idle();
        expect(roomy.size).to.equal(0);
        await pool.close();
    });

    it('closes a data set made while the pool closed or its kind was given up', async () => {

        let finish: () => void = () => undefined;
        const slow = fake(1);
        const engine = { namespaces: [], openDefault: null!, hasFixtureImage: () => false, createInstance: () => new Promise<InstanceData>((resolve) => (finish = () => resolve(slow.data))) };
        const pool = new InstancePool(engine, 100, log);
        pool.take(kind('a'));
        await idle();
        await pool.close();
        finish();
        await idle();
        expect(slow.calls.closed).to.equal(1);

        const evicted = fake(1);
        const other = new InstancePool({ namespaces: [], openDefault: null!, hasFixtureImage: () => false, createInstance: () => new Promise<InstanceData>((resolve) => (finish = () => resolve(evicted.data))) }, 100, log);
        other.take(kind('a'));
        await idle();
        for (let i = 0; i < poolKinds; ++i) {
            other.take(kind(`k${i}`));
        }

        finish();
        await idle();
        expect(evicted.calls.closed).to.equal(1);
        await other.close();
    });

    it('logs a data set that fails to close when given up, and a failed make, and goes on', async () => {

        failures.length = 0;
        const broken = fake(300, 300, () => Promise.reject(new Error('close broke')));
        const engine = { namespaces: [], openDefault: null!, hasFixtureImage: () => false, createInstance: () => Promise.reject(new Error('make broke')) };
        const pool = new InstancePool(engine, 300, log);
        pool.take(kind('a'));
        await pool.release('a', pooled(broken.data));
        await idle();
        pool.take(kind('b'));
        await pool.release('b', pooled(fake(300).data));
        await idle();
        // Kind a's make fails in its turn, kind b's release gives up kind a's data set, whose close fails, then kind b's make.
        expect(failures.map(({ at, ...line }) => ({ ...line, first: at![1]!.split(' ')[1] }))).to.equal([
            { tags: ['error', 'listener'], task: 'instance pool', type: 'Error', first: 'InstancePool.fillOne' },
            { tags: ['error', 'listener'], task: 'instance pool', type: 'Error', first: 'Object.close' },
            { tags: ['error', 'listener'], task: 'instance pool', type: 'Error', first: 'InstancePool.fillOne' }
        ]);
        await pool.close();
    });
});
