import Stream from 'node:stream';

import Code from '@hapi/code';
import type { Server, ServerInjectOptions, ServerInjectResponse } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { mintToken } from '../lib';
import { expectError } from './helpers/errors';
import { adminBearer, bearer, body, type List, testServer } from './helpers/server';
import { commerceNamespace } from '../lib/namespaces/commerce';
import { payNamespace } from '../lib/namespaces/pay';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


interface InstanceBody {
    id: string;
    base_path: string;
    seed: string;
    clock: string | null;
    ids: string;
    pay: boolean;
    created_at: string;
    expires_at: string;
}

// Ids of the shipped demo data.
const demo = {
    bakery: 'd851fadb-03ca-5a24-ba16-c15cce19933b',
    vehicle: '67f7b2a9-5639-460c-a9f5-d114637c1b43',
    depot: '8a5c2440-7943-4c0d-bdf4-9777cd05095e'
};

const product = (name: string) => ({ name, price: 2.5, currency: 'USD', business_id: demo.bakery });

const booking = (day: number) => ({
    vehicle_id: demo.vehicle, pickup_location_id: demo.depot, dropoff_location_id: demo.depot,
    pickup_at: `2030-06-${String(day).padStart(2, '0')}T10:00:00Z`, return_at: `2030-06-${String(day).padStart(2, '0')}T12:00:00Z`
});


describe('/_instances', () => {

    let server: Server;

    const admin = () => adminBearer(server);
    const create = async (payload: object = {}) => {

        const res = await server.inject({ method: 'POST', url: '/_instances', headers: admin(), payload });
        expect(res.statusCode, res.payload).to.equal(201);
        return body<InstanceBody>(res);
    };

    const call = (method: string, url: string, payload?: object) => server.inject({ method, url, headers: admin(), payload } as ServerInjectOptions);
    const as = (subject: string, method: string, url: string, payload?: object) => server.inject({ method, url, headers: bearer(server, subject), payload } as ServerInjectOptions);

    before(async () => {

        server = await testServer();
    });

    after(async () => {

        await server.stop();
    });

    it('creates an instance that answers every endpoint under its base path, with Location headers that include it', async () => {

        const res = await server.inject({ method: 'POST', url: '/_instances', headers: admin() });
        expect(res.statusCode).to.equal(201);
        const instance = body<InstanceBody>(res);
        expect(Object.keys(instance)).to.equal(['id', 'base_path', 'seed', 'clock', 'ids', 'pay', 'created_at', 'expires_at']);
        expect(instance).to.include({ base_path: `/i/${instance.id}`, seed: 'demo', clock: null, ids: 'random', pay: false });
        expect(res.headers.location).to.equal(`/_instances/${instance.id}`);
        expect(Date.parse(instance.expires_at) - Date.parse(instance.created_at)).to.equal(3_600_000);

        const base = instance.base_path;
        expect(body<List<unknown>>(await server.inject(`${base}/v1/commerce/products`)).total).to.equal(35);
        const created = await as('alice', 'POST', `${base}/v1/commerce/products?`, product('Instance loaf'));
        expect(created.statusCode).to.equal(201);
        expect(created.headers.location).to.equal(`${base}/v1/commerce/products/${body(created).id}`);
        expect((await server.inject(created.headers.location as string)).statusCode).to.equal(200);
        expect(body<List<unknown>>(await server.inject(`${base}/v1/commerce/products?limit=1`)).total).to.equal(36);
        expect(body<List<unknown>>(await server.inject('/v1/commerce/products')).total).to.equal(35);

        const health = body<{ namespaces: Record<string, object> }>(await server.inject(`${base}/health`));
        expect(health.namespaces.commerce).to.include({ state: 'ready', storage: 'memory' });
        expect(health.namespaces.pay).to.equal({ state: 'unconfigured', engine: 'sqlite', schema_version: null, storage: 'memory' });
        expectError(await server.inject(`${base}/v1/pay/wallet`), 501, 'pay_not_provisioned');
        expectError(await server.inject(`${base}/v1/nowhere`), 404, 'not_found');
        for (const path of ['', '/', '/_instances', '/console', '/docs', '/openapi.json']) {
            expect(expectError(await server.inject(`${base}${path}`), 404, 'not_found').message).to.equal(`Under an instance only the API answers (${base}/v1/..., ${base}/health)`);
        }
    });

    it('answers 404 instance_not_found on every path under an unknown or deleted instance', async () => {

        expectError(await server.inject('/i/no-such-instance/v1/commerce/products'), 404, 'instance_not_found');
        const { id, base_path: base } = await create();
        expect((await call('DELETE', `/_instances/${id}`)).statusCode).to.equal(204);
        for (const [method, url] of [['GET', `${base}/v1/commerce/products`], ['POST', `${base}/v1/commerce/products`], ['GET', base], ['GET', `${base}/`], ['GET', `${base}/health`]]) {
            const error = expectError(await server.inject({ method: method!, url: url! }), 404, 'instance_not_found');
            expect(error.message).to.contain(JSON.stringify(id));
        }

        for (const [method, url] of [['GET', ''], ['DELETE', ''], ['POST', '/reset'], ['POST', '/snapshots']]) {
            expectError(await call(method!, `/_instances/${id}${url}`), 404, 'instance_not_found');
        }
    });

    it('lists and gets the live instances, oldest first, with paging', async () => {

        const first = await create();
        const second = await create({ seed: 'none', ids: 'sequential', clock: '2030-01-01T00:00:00Z', pay: true });
        expect(second).to.include({ seed: 'none', ids: 'sequential', clock: '2030-01-01T00:00:00.000Z', pay: true });

        const listed = await call('GET', '/_instances?limit=100');
        const ids = body<List<InstanceBody>>(listed).data.map((instance) => instance.id);
        expect(ids.indexOf(first.id)).to.be.below(ids.indexOf(second.id));
        expect(listed.headers['x-total-count']).to.equal(String(ids.length));
        const last = body<List<InstanceBody>>(await call('GET', `/_instances?limit=1&offset=${ids.length - 1}`)).data;
        expect(last.map((instance) => instance.id)).to.equal([second.id]);
        expect(body<InstanceBody>(await call('GET', `/_instances/${second.id}`))).to.include({ id: second.id, ids: 'sequential', pay: true });
    });

    it('keeps the data of each instance to itself, for parallel clients', async () => {

        const clients = await Promise.all(Array.from({ length: 8 }, () => create()));
        await Promise.all(clients.map(async ({ base_path: base }, client) => {

            for (let i = 0; i < 5; ++i) {
                expect((await as('alice', 'POST', `${base}/v1/commerce/products`, product(`Client ${client} item ${i}`))).statusCode).to.equal(201);
                expect((await as('alice', 'POST', `${base}/v1/logistics/bookings`, booking(i + 1))).statusCode).to.equal(201);
            }

            const products = body<List<{ name: string }>>(await server.inject(`${base}/v1/commerce/products?limit=100`));
            expect(products.total).to.equal(40);
            expect(products.data.slice(35).map((item) => item.name)).to.equal([0, 1, 2, 3, 4].map((index) => `Client ${client} item ${index}`));
            const bookings = body<List<unknown>>(await as('alice', 'GET', `${base}/v1/logistics/bookings`));
            expect(bookings.total).to.equal(5);
            expect(bookings.count).to.equal(5);
        }));

        await call('DELETE', `/_instances/${clients[0]!.id}`);
        expectError(await server.inject(`${clients[0]!.base_path}/v1/commerce/products`), 404, 'instance_not_found');
        expect(body<List<unknown>>(await server.inject(`${clients[1]!.base_path}/v1/commerce/products`)).total).to.equal(40);
        expect(body<List<unknown>>(await as('alice', 'GET', '/v1/logistics/bookings')).total).to.equal(0);
    });

    it('resets an instance to its state at creation: fixture, clock and id counter included', async () => {

        const fixture = { commerce: { businesses: [{ id: 'b-pier', name: 'Pier Kiosk', category: 'Kiosk', city: 'Harbourside', phone: '+1 207 555 0199' }] } };
        const { id, base_path: base } = await create({ seed: 'none', ids: 'sequential', clock: '2030-01-01T00:00:00Z', fixture });
        const first = await as('bob', 'POST', `${base}/v1/commerce/products`, { ...product('Cone'), business_id: 'b-pier' });
        await call('PUT', `/_instances/${id}/clock`, { advance: '1d' });
        await as('bob', 'POST', `${base}/v1/commerce/products`, { ...product('Flake'), business_id: 'b-pier' });

        const reset = await call('POST', `/_instances/${id}/reset`);
        expect(reset.statusCode).to.equal(200);
        expect(body<InstanceBody>(reset).clock).to.equal('2030-01-01T00:00:00.000Z');
        expect(body<List<unknown>>(await server.inject(`${base}/v1/commerce/businesses`)).total).to.equal(1);
        expect(body<List<unknown>>(await server.inject(`${base}/v1/commerce/products`)).total).to.equal(0);
        const again = await as('bob', 'POST', `${base}/v1/commerce/products`, { ...product('Cone'), business_id: 'b-pier' });
        expect(again.payload).to.equal(first.payload);
    });

    it('snapshots and restores the exact state, as often as asked', async () => {

        const { id, base_path: base } = await create({ ids: 'sequential', clock: '2030-01-01T00:00:00Z' });
        await as('carol', 'POST', `${base}/v1/commerce/products`, product('Kept'));
        const snapshot = await call('POST', `/_instances/${id}/snapshots`);
        expect(snapshot.statusCode).to.equal(201);
        const { snapshot_id: snapshotId } = body<{ snapshot_id: string }>(snapshot);
        expect(Object.keys(body(snapshot))).to.equal(['snapshot_id']);
        const listed = (await server.inject(`${base}/v1/commerce/products?limit=100`)).payload;

        const later = await as('carol', 'POST', `${base}/v1/commerce/products`, product('Dropped'));
        await call('PUT', `/_instances/${id}/clock`, { now: '2031-01-01T00:00:00Z' });
        const restored = await call('POST', `/_instances/${id}/restore`, { snapshot_id: snapshotId });
        expect(restored.statusCode).to.equal(200);
        expect(body<InstanceBody>(restored).clock).to.equal('2030-01-01T00:00:00.000Z');
        expect((await server.inject(`${base}/v1/commerce/products?limit=100`)).payload).to.equal(listed);
        expect((await as('carol', 'POST', `${base}/v1/commerce/products`, product('Dropped'))).payload).to.equal(later.payload);

        await call('POST', `/_instances/${id}/restore`, { snapshot_id: snapshotId });
        expect((await server.inject(`${base}/v1/commerce/products?limit=100`)).payload).to.equal(listed);
        const unknown = expectError(await call('POST', `/_instances/${id}/restore`, { snapshot_id: 'nope' }), 422, 'snapshot_not_found', 'snapshot_id');
        expect(unknown.message).to.equal('snapshot_id refers to no existing snapshot');
    });

    it('keeps at most 50 snapshots of an instance', async () => {

        const { id } = await create({ seed: 'none' });
        for (let i = 0; i < 50; ++i) {
            expect((await call('POST', `/_instances/${id}/snapshots`)).statusCode).to.equal(201);
        }

        expectError(await call('POST', `/_instances/${id}/snapshots`), 409, 'snapshot_limit_reached');
    });

    it('stamps records with the instance clock, which stands still until set or advanced', async () => {

        const { id, base_path: base } = await create({ clock: '2030-01-01T00:00:00Z' });
        const stamp = async (name: string) => body<{ created_at: string }>(await as('dan', 'POST', `${base}/v1/commerce/inquiries`, { business_id: demo.bakery, message: name })).created_at;
        expect(await stamp('first')).to.equal('2030-01-01T00:00:00.000Z');
        expect(await stamp('second')).to.equal('2030-01-01T00:00:00.000Z');

        const advanced = await call('PUT', `/_instances/${id}/clock`, { advance: '2h' });
        expect(body<InstanceBody>(advanced).clock).to.equal('2030-01-01T02:00:00.000Z');
        expect(await stamp('third')).to.equal('2030-01-01T02:00:00.000Z');
        await call('PUT', `/_instances/${id}/clock`, { advance: '1500ms' });
        expect(await stamp('fourth')).to.equal('2030-01-01T02:00:01.500Z');

        expect(body<InstanceBody>(await call('PUT', `/_instances/${id}/clock`, { now: '2031-05-05T05:05:05Z' })).clock).to.equal('2031-05-05T05:05:05.000Z');
        expect(await stamp('fifth')).to.equal('2031-05-05T05:05:05.000Z');

        // Records hold four-digit years from 1970: a clock moved beyond is refused, and the instance stays usable.
        expectError(await call('PUT', `/_instances/${id}/clock`, { advance: '100000000d' }), 422, 'clock_out_of_range', 'advance');
        // Before 1970 is refused as sent, as the document's pattern says.
        expectError(await call('PUT', `/_instances/${id}/clock`, { now: '1969-12-31T23:59:59Z' }), 400, 'validation_failed', 'now');
        expect(await stamp('sixth')).to.equal('2031-05-05T05:05:05.000Z');
        expect((await call('GET', '/_instances')).statusCode).to.equal(200);

        // A clock that followed the wall clock is frozen where advancing takes it.
        const wall = await create();
        const start = Date.now();
        const frozen = Date.parse(body<InstanceBody>(await call('PUT', `/_instances/${wall.id}/clock`, { advance: '1h' })).clock!);
        expect(frozen).to.be.within(start + 3_600_000, Date.now() + 3_600_000);
    });

    it('gives the same run byte-identical bodies in fresh instances with a frozen clock and sequential ids', async () => {

        const run = async () => {

            const { base_path: base } = await create({ clock: '2030-01-01T00:00:00Z', ids: 'sequential', pay: true });
            const bodies: string[] = [];
            const record = async (res: Promise<ServerInjectResponse>) => {

                const reply = await res;
                bodies.push(`${reply.statusCode} ${reply.headers.location ?? ''} ${reply.payload.replaceAll(base, '<base>')}`);
            };

            await record(as('erin', 'POST', `${base}/v1/commerce/products`, product('Same')));
            await record(as('erin', 'POST', `${base}/v1/commerce/scam-reports`, { target_type: 'business', target_id: demo.bakery, reason: 'Odd' }));
            await record(as('erin', 'POST', `${base}/v1/logistics/bookings`, booking(1)));
            await record(as('erin', 'POST', `${base}/v1/logistics/bookings`, booking(1)));
            await record(server.inject({ method: 'POST', url: `${base}/v1/pay/gateway/deposit`, headers: { ...bearer(server, 'erin'), 'idempotency-key': 'k1' }, payload: { provider_id: 'sandbox', asset: 'USD', amount: 500 } }));
            await record(as('erin', 'GET', `${base}/v1/pay/wallet`));
            await record(as('erin', 'GET', `${base}/v1/logistics/bookings`));
            await record(server.inject(`${base}/v1/commerce/products?limit=2&offset=34`));
            return bodies.map((line) => line.replace(/\/i\/[^/]+/g, '<base>'));
        };

        const first = await run();
        const second = await run();
        expect(second).to.equal(first);
        expect(first[0]).to.contain('"id":"00000000-0000-4000-8000-000000000001"');
        expect(first[0]).to.contain('"created_at":"2030-01-01T00:00:00.000Z"');
        expect(first[3]!).to.startWith('409 ');
    });

    it('provisions pay in an instance that asks for it, and puts its ledger back on restore', async () => {

        const created = await create();
        const { id, base_path: base } = await create({ pay: true });
        expect(body(await server.inject(`${base}/v1/pay/status`))).to.equal({ configured: true, schema_ready: true, sections: ['wallet', 'tokens', 'gateway'] });
        expect(body<{ namespaces: Record<string, object> }>(await server.inject(`${base}/health`)).namespaces.pay).to.equal({ state: 'ready', engine: 'sqlite', schema_version: 7, storage: 'memory' });
        expect(await server.app.localgate.instances.find(created.id)!.data.readiness(payNamespace)).to.equal({ ready: false, configured: false, gap: 'unconfigured' });
        const move = (path: string, key: string, amount: number) => {

            const headers = { ...bearer(server, 'fay'), 'idempotency-key': key };
            return server.inject({ method: 'POST', url: `${base}/v1/pay/gateway/${path}`, headers, payload: { provider_id: 'sandbox', asset: 'USD', amount } });
        };

        const deposit = await move('deposit', 'd1', 1000);
        expect(deposit.statusCode).to.equal(201);
        expect(deposit.headers.location).to.equal(`${base}/v1/pay/wallet/transactions/${body(deposit).id}`);
        const { snapshot_id: snapshotId } = body<{ snapshot_id: string }>(await call('POST', `/_instances/${id}/snapshots`));
        expect((await move('withdraw', 'w1', 400)).statusCode).to.equal(201);
        const wallet = async () => body<{ balances: object[] }>(await as('fay', 'GET', `${base}/v1/pay/wallet`));
        expect((await wallet()).balances).to.equal([{ asset: 'USD', amount: 600, pending_in: 0, pending_out: 0 }]);

        await call('POST', `/_instances/${id}/restore`, { snapshot_id: snapshotId });
        expect((await wallet()).balances).to.equal([{ asset: 'USD', amount: 1000, pending_in: 0, pending_out: 0 }]);
        await call('POST', `/_instances/${id}/reset`);
        expect(body<List<unknown>>(await as('fay', 'GET', `${base}/v1/pay/wallet/transactions`)).total).to.equal(0);
        expect(body(await server.inject('/v1/pay/status'))).to.include({ configured: false });
    });

    it('loads a fixture of records in the API\'s shape, stamped with the instance clock', async () => {

        const fixture = {
            commerce: {
                businesses: [{ id: 'b-pier', name: 'Pier Kiosk', category: 'Kiosk', city: 'Harbourside', phone: '+1 207 555 0199' }],
                products: [{ name: 'Cone', price: 2.5, currency: 'USD', business_id: 'b-pier' }, { name: 'Tea', price: 300, currency: 'JPY', business_id: 'b-pier', created_at: '2029-01-01T00:00:00Z' }]
            },
            logistics: { locations: [{ id: 'quay', name: 'Quay', address: '1 Quay Street', city: 'Harbourside', latitude: 50.6, longitude: -3.4 }] }
        };

        const { base_path: base } = await create({ seed: 'none', ids: 'sequential', clock: '2030-01-01T00:00:00Z', fixture });
        const products = body<List<Record<string, unknown>>>(await server.inject(`${base}/v1/commerce/products`));
        expect(products.data).to.equal([
            { id: '00000000-0000-4000-8000-000000000002', name: 'Tea', description: '', price: 300, currency: 'JPY', business_id: 'b-pier', created_by: 'fixture', created_at: '2029-01-01T00:00:00.000Z', scam_report_count: 0 },
            { id: '00000000-0000-4000-8000-000000000001', name: 'Cone', description: '', price: 2.5, currency: 'USD', business_id: 'b-pier', created_by: 'fixture', created_at: '2030-01-01T00:00:00.000Z', scam_report_count: 0 }
        ]);
        expect(body<List<unknown>>(await server.inject(`${base}/v1/logistics/locations`)).total).to.equal(1);
        expect(body<List<unknown>>(await server.inject(`${base}/v1/logistics/vehicles`)).total).to.equal(0);
    });

    it('refuses a bad fixture with a 400 that names the namespace, the record and the field, and makes no instance', async () => {

        const count = body<List<unknown>>(await call('GET', '/_instances')).total;
        const business = { id: 'b-pier', name: 'Pier Kiosk', category: 'Kiosk', city: 'Harbourside', phone: '+1 207 555 0199' };
        const cases: [object, string, string][] = [
            [{ commerce: { businesses: [business], products: [{ name: 'Cone', price: 2.555, currency: 'USD', business_id: 'b-pier' }] } }, 'fixture.commerce.products[0].price',
                'request body fixture: commerce.products[0].price: price has more decimals than USD allows (at most 2)'],
            [{ commerce: { products: [{ name: 'Cone', price: 2.5, currency: 'USD', business_id: 'b-gone' }] } }, 'fixture.commerce.products[0].business_id',
                'request body fixture: commerce.products[0].business_id: "b-gone" names no record of businesses'],
            [{ logistics: { drivers: [{ name: 'A', phone: '1', license_number: 'L1' }, { name: 'B', phone: '2', license_number: 'L1' }] } }, 'fixture.logistics.drivers[1].license_number',
                'request body fixture: logistics.drivers[1].license_number: "L1" is already the license_number of drivers[0]: no two records of drivers share it']
        ];

        for (const [fixture, field, message] of cases) {
            const error = expectError(await call('POST', '/_instances', { seed: 'none', fixture }), 400, 'invalid_fixture', field);
            expect(error.message).to.equal(message);
        }

        // A problem of the whole file, in no one record, is named by the fixture itself.
        const shops = expectError(await call('POST', '/_instances', { seed: 'none', fixture: { commerce: { shops: [] } } }), 400, 'invalid_fixture', 'fixture');
        expect(shops.message).to.equal('request body fixture: commerce has no collection "shops" a fixture can fill (expected businesses, products, offers, inquiries, scam_reports)');

        // A key naming no namespace is refused as the document's schema refuses it, before the fixture loads.
        const unknown = expectError(await call('POST', '/_instances', { seed: 'none', fixture: { bank: {} } }), 400, 'validation_failed', 'fixture.bank');
        expect(unknown.message).to.equal('Invalid payload: fixture.bank names no namespace a fixture fills (commerce, logistics, pay, localgate)');

        expect(body<List<unknown>>(await call('GET', '/_instances')).total).to.equal(count);
    });

    it('needs an admin token on every /_instances route: 401 without a valid one, 403 admin_required for any other', async () => {

        const { id } = await create();
        const routes: [string, string, object?][] = [
            ['POST', '/_instances', {}], ['GET', '/_instances'], ['GET', `/_instances/${id}`], ['DELETE', `/_instances/${id}`],
            ['POST', `/_instances/${id}/reset`], ['POST', `/_instances/${id}/snapshots`], ['POST', `/_instances/${id}/restore`, { snapshot_id: 'x' }],
            ['PUT', `/_instances/${id}/clock`, { advance: '1h' }], ['GET', '/_export']
        ];

        const expired = `Bearer ${mintToken(server.app.localgate.secret, 'admin', -60, { admin: true })}`;
        for (const [method, url, payload] of routes) {
            const missing = expectError(await server.inject({ method, url, payload }), 401, 'unauthorized');
            expect(missing.message, `${method} ${url}`).to.equal('Missing authentication');
            expectError(await server.inject({ method, url, payload, headers: { authorization: expired } }), 401, 'unauthorized');
            const forbidden = expectError(await as('alice', method, url, payload), 403, 'admin_required');
            expect(forbidden.message).to.equal('This route needs a token whose role claim is "admin": mint one with npx localgate token --admin');
        }

        // The role is checked before the body: a caller's token learns nothing of the body's rules.
        expectError(await as('alice', 'POST', '/_instances', { seed: 'lots' }), 403, 'admin_required');

        // An admin token is an ordinary caller's token too, in every instance.
        expect((await server.inject({ url: '/v1/logistics/bookings', headers: admin() })).statusCode).to.equal(200);
    });

    it('refuses bad bodies on every /_instances route with a 400 naming the field', async () => {

        const { id } = await create({ seed: 'none' });
        const cases: [string, string, unknown, string, string][] = [
            ['POST', '/_instances', { seed: 'lots' }, 'seed', 'seed must be one of [demo, none]'],
            ['POST', '/_instances', { ids: 'uuid' }, 'ids', 'ids must be one of [random, sequential]'],
            ['POST', '/_instances', { clock: 'tomorrow' }, 'clock', 'clock must be an ISO 8601 UTC timestamp ending in Z, such as 2030-06-01T10:00:00Z'],
            ['POST', '/_instances', { pay: 'yes' }, 'pay', 'pay must be a boolean'],
            ['POST', '/_instances', { fixture: [] }, 'fixture', 'fixture must be an object keyed by namespace'],
            ['POST', '/_instances', { colour: 'red' }, 'colour', 'colour is not allowed'],
            ['POST', '/_instances', [], 'payload', 'The request body must be a JSON object'],
            ['PUT', `/_instances/${id}/clock`, {}, 'now, advance', 'The request body must hold now or advance'],
            ['PUT', `/_instances/${id}/clock`, { now: '2030-01-01T00:00:00Z', advance: '1h' }, 'now, advance', 'The request body must hold now or advance, not both'],
            ['PUT', `/_instances/${id}/clock`, { now: 'noon' }, 'now', 'now must be an ISO 8601 UTC timestamp ending in Z, such as 2030-06-01T10:00:00Z'],
            ['PUT', `/_instances/${id}/clock`, { advance: 'soon' }, 'advance', 'advance must be a duration such as 500ms, 90s, 30m, 2h or 7d'],
            ['POST', `/_instances/${id}/restore`, {}, 'snapshot_id', 'snapshot_id is required'],
            ['POST', `/_instances/${id}/restore`, { snapshot_id: 5 }, 'snapshot_id', 'snapshot_id must be a string'],
            ['GET', '/_instances?limit=0', undefined, 'limit', 'limit must be greater than or equal to 1']
        ];

        for (const [method, url, payload, field, message] of cases) {
            const error = expectError(await call(method, url, payload as object), 400, 'validation_failed', field);
            expect(error.details!.find((detail) => detail.field === field)!.message, `${method} ${url} ${JSON.stringify(payload)}`).to.equal(message);
        }
    });
});


describe('instance limits', () => {

    it('refuses a new instance past MAX_INSTANCES with 429 instance_limit_reached', async () => {

        const server = await testServer({ maxInstances: 2 });
        const create = () => server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server), payload: { seed: 'none' } });
        const first = body<InstanceBody>(await create());
        await create();
        const refused = expectError(await create(), 429, 'instance_limit_reached');
        expect(refused.message).to.equal('2 instances are live, the most MAX_INSTANCES allows: delete one (DELETE /_instances/{id}) or let idle ones expire');

        await server.inject({ method: 'DELETE', url: `/_instances/${first.id}`, headers: adminBearer(server) });
        expect((await create()).statusCode).to.equal(201);
        await server.stop();
    });

    it('answers instance_not_found to a request that reached an instance deleted before its handler ran', async () => {

        const server = await testServer();
        const { instances } = server.app.localgate;
        const { id } = body<InstanceBody>(await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server) }));
        const instance = instances.find(id)!;

        // As a request whose body was still arriving when the instance was deleted: its scope is the instance.
        server.route({ method: 'GET', path: '/test/stale', options: { auth: false, handler: () => instance.data.store(commerceNamespace).listBusinesses({ limit: 1, offset: 0 }) } });
        expect((await server.inject('/test/stale')).statusCode).to.equal(200);
        instances.delete(id);
        const gone = expectError(await server.inject('/test/stale'), 404, 'instance_not_found');
        expect(gone.message).to.contain(JSON.stringify(id));
        await server.stop();
    });

    it('keeps the snapshots of all instances within MAX_SNAPSHOT_MIB, and frees an instance\'s with it', async () => {

        const server = await testServer({ maxSnapshotMib: 1 });
        const call = (method: string, url: string) => server.inject({ method, url, headers: adminBearer(server) });
        const first = body<InstanceBody>(await call('POST', '/_instances'));
        const second = body<InstanceBody>(await call('POST', '/_instances'));

        // A demo instance's databases take a few hundred KiB: a handful of snapshots fill one MiB.
        let taken = 0;
        let refused: ServerInjectResponse;
        while ((refused = await call('POST', `/_instances/${first.id}/snapshots`)).statusCode === 201) {
            ++taken;
        }

        expect(taken).to.be.within(1, 10);
        expect(expectError(refused, 409, 'snapshot_limit_reached').message).to.equal('Snapshots of all instances would hold more than MAX_SNAPSHOT_MIB (1 MiB): delete instances that are done');
        expectError(await call('POST', `/_instances/${second.id}/snapshots`), 409, 'snapshot_limit_reached');

        await call('DELETE', `/_instances/${first.id}`);
        expect((await call('POST', `/_instances/${second.id}/snapshots`)).statusCode).to.equal(201);
        await server.stop();
    });

    it('expires an instance idle for INSTANCE_IDLE_TTL, on its next request and in the background', async () => {

        // No pool: an expired instance's databases close rather than go back to it (test/instance-pool.ts).
        const server = await testServer({ instanceIdleTtlMs: 1000, instancePoolMib: 0 });
        const { instances } = server.app.localgate;
        const create = async () => body<InstanceBody>(await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server), payload: { seed: 'none' } }));

        // Time stands still here: only the instances whose last use the test moves back are idle, however slow the
        // machine. The background sweep still runs on its own timer.
        const realNow = Date.now;
        const now = realNow();
        Date.now = () => now;
        try {
            const idle = await create();
            const used = await create();
            expect(Date.parse(idle.expires_at) - Date.parse(idle.created_at)).to.equal(1000);
            instances.find(idle.id)!.lastUsed -= 1000;
            expectError(await server.inject(`${idle.base_path}/v1/commerce/products`), 404, 'instance_not_found');
            expect((await server.inject(`${used.base_path}/v1/commerce/products`)).statusCode).to.equal(200);

            // Nobody asks for it again: the sweep that runs every INSTANCE_IDLE_TTL frees it, and its databases close.
            const forgotten = await create();
            const swept = new Promise<string>((resolve) => instances.onDelete((instance) => resolve(instance.id)));
            const held = instances.find(forgotten.id)!;
            const data = held.data;
            const close = data.close.bind(data);
            const closed = new Promise<void>((resolve) => {

                data.close = async () => {

                    await close();
                    resolve();
                };
            });

            expect((await data.store(commerceNamespace).listBusinesses({ limit: 1, offset: 0 })).total).to.equal(0);
            held.lastUsed -= 1000;
            expect(await swept).to.equal(forgotten.id);
            // The data set closes once the deletion has waited for the operations running on it.
            await closed;
            expect(() => held.data).to.throw(`There is no instance "${forgotten.id}": it was deleted, it expired, or it never existed (POST /_instances makes one)`);
            await expect(data.store(commerceNamespace).listBusinesses({ limit: 1, offset: 0 })).to.reject('The database connection is not open');

            expect(body<List<InstanceBody>>(await server.inject({ url: '/_instances', headers: adminBearer(server) })).data.map((instance) => instance.id)).to.equal([used.id]);
        }
        finally {
            Date.now = realNow;
            await server.stop();
        }

        expect(instances.list()).to.equal([]);
    });

    it('logs the path an instance request was sent to, base path included', async () => {

        const lines: Record<string, unknown>[] = [];
        const logStream = new Stream.Writable({
            write(chunk, encoding, callback) {

                lines.push(JSON.parse(chunk.toString()));
                callback();
            }
        });

        const server = await testServer({ logLevel: 'info', logStream });
        const { base_path: base } = body<InstanceBody>(await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server) }));
        await server.inject(`${base}/v1/commerce/products?limit=1`);
        await server.inject('/i/unknown/v1/commerce/products');
        await server.stop();

        const requests = lines.filter((line) => line.req);
        expect(requests.map((line) => (line.req as { url: string }).url)).to.equal(['/_instances', `${base}/v1/commerce/products`, '/i/unknown/v1/commerce/products']);
        expect(requests.map((line) => (line.msg as string).replace(/ \(\d+ms\)$/, ''))).to.equal([
            '[response] post /_instances 201',
            `[response] get ${base}/v1/commerce/products 200`,
            '[response] get /i/unknown/v1/commerce/products 404'
        ]);
    });
});
