import Code from '@hapi/code';
import type { Server } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { Clock } from '../lib/record-context';
import { errnoCode, errorMessage, restated } from '../lib/errno';
import { createdAt, found, many, maybe, one, recordNow } from '../lib/records';
import { uniqueColumns } from '../lib/storage/fixture-sql';
import { always, present } from '../lib/always';
import { engineServer, engines } from './helpers/postgres';
import { adminBearer, bearer, body, testServer, type List } from './helpers/server';


export const lab = Lab.script();
const { describe, it, after } = lab;
const { expect } = Code;


const frozenAt = '2030-06-01T10:00:00.000Z';


describe('the row helpers', () => {

    it('answer a typed row, or the domain error of a missing one, or null', () => {

        const row = { id: 'v-1' };
        expect(one(row, 'vehicle')).to.shallow.equal(row);
        expect(found).to.shallow.equal(one);
        expect(() => one(undefined, 'scam_report')).to.throw('There is no scam report with this id');
        expect(maybe(row)).to.shallow.equal(row);
        expect(maybe(undefined)).to.equal(null);
    });

    it('read the rows of an untyped query as records of their columns', () => {

        expect(many([{ id: 'a' }, { id: 'b', n: 1 }])).to.equal([{ id: 'a' }, { id: 'b', n: 1 }]);
        expect(many([])).to.equal([]);
    });
});


describe('present()', () => {

    it('answers a value that is never null where it is read, and names the one that was', () => {

        expect(present('ab', 'a hash')).to.equal('ab');
        expect(present(0, 'a count')).to.equal(0);
        expect(() => present(null, 'the publishable key\'s hash')).to.throw(Error, 'the publishable key\'s hash is null');
    });
});


describe('always()', () => {

    it('answers the row a query always answers, null included, and names the query that answered none', () => {

        expect(always(0, 'total_changes()')).to.equal(0);
        expect(always(null, 'MAX(position)')).to.be.null();
        expect(() => always(undefined, 'MAX(position)')).to.throw(Error, 'MAX(position) gave none');
    });
});


describe('uniqueColumns()', () => {

    it('reads the columns of a unique key an engine names, without their table, and none where it names none', () => {

        expect(uniqueColumns(new Error('UNIQUE constraint failed: drivers.license_number, drivers.region'), 'message', /failed: (.+)$/)).to.equal(['license_number', 'region']);
        expect(uniqueColumns({ detail: 'Key (license_number)=(L-1) already exists.' }, 'detail', /^Key \(([^)]+)\)=/)).to.equal(['license_number']);
        expect(uniqueColumns({ detail: 'another text' }, 'detail', /^Key \(([^)]+)\)=/)).to.be.null();
        expect(uniqueColumns({ detail: 5 }, 'detail', /^Key \(([^)]+)\)=/)).to.be.null();
        expect(uniqueColumns('broken', 'message', /failed: (.+)$/)).to.be.null();
    });
});


describe('errnoCode()', () => {

    it('reads the code an error carries as text, and nothing else', () => {

        expect(errnoCode(Object.assign(new Error('taken'), { code: 'EADDRINUSE' }))).to.equal('EADDRINUSE');
        expect(errnoCode(Object.assign(new Error('odd'), { code: 5 }))).to.be.undefined();
        expect(errnoCode(new Error('plain'))).to.be.undefined();
        expect(errnoCode(null)).to.be.undefined();
        expect(errnoCode('EEXIST')).to.be.undefined();
    });
});


describe('errorMessage() and restated()', () => {

    it('read and restate the message of an error, and of anything else thrown as text', () => {

        expect(errorMessage(new Error('broken'))).to.equal('broken');
        expect(errorMessage('broken')).to.equal('broken');

        const err = Object.assign(new Error('not a database'), { code: 'SQLITE_NOTADB' });
        const again = restated(err, (said) => `pay.db: ${said}`);
        expect(again).to.shallow.equal(err);
        expect(again.message).to.equal('pay.db: not a database');
        expect(errnoCode(again)).to.equal('SQLITE_NOTADB');

        const wrapped = restated('odd', (said) => `pay.db: ${said}`);
        expect(wrapped).to.be.an.error(Error, 'pay.db: odd');
    });
});


describe('createdAt()', () => {

    it('is exactly the frozen instant however many records came before', () => {

        const clock = new Clock(new Date(frozenAt));
        expect(createdAt(clock)).to.equal(frozenAt);
        expect(createdAt(clock, frozenAt)).to.equal(frozenAt);
        expect(createdAt(clock, '2031-01-01T00:00:00.000Z', '2029-01-01T00:00:00.000Z')).to.equal(frozenAt);
        expect(recordNow(clock, '2029-01-01T00:00:00.000Z').toISOString()).to.equal(frozenAt);
    });

    it('follows the wall clock, or the database server\'s, but never sorts a new record at or before the newest one', () => {

        const clock = new Clock();
        const server = '2029-01-01T00:00:00.000Z';
        expect(createdAt(clock, null, server)).to.equal(server);
        expect(createdAt(clock, '2029-01-01T00:00:00.000Z', server)).to.equal('2029-01-01T00:00:00.001Z');
        expect(createdAt(clock, '2099-01-01T00:00:00.000Z')).to.equal('2099-01-01T00:00:00.001Z');
        expect(Date.parse(createdAt(clock))).to.be.within(Date.now() - 1000, Date.now());
    });
});


describe('an instance whose clock stands still', () => {

    let server: Server;

    after(async () => {

        await server.stop();
    });

    it('stamps every record of every namespace with exactly its time, and lists them in creation order', async () => {

        server = await testServer();
        const created = await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server), payload: { clock: frozenAt, ids: 'sequential', pay: true } });
        expect(created.statusCode).to.equal(201);
        const base = body<{ base_path: string }>(created).base_path;
        const post = async (url: string, payload: object, headers: Record<string, string> = {}) => {

            const res = await server.inject({ method: 'POST', url: `${base}${url}`, payload, headers: { ...bearer(server, 'ann'), ...headers } });
            expect(res.statusCode, res.payload).to.equal(201);
            return body<{ id: string; created_at: string }>(res);
        };

        const [business] = body<List<{ id: string }>>(await server.inject(`${base}/v1/commerce/businesses?limit=1`)).data;
        const [vehicle] = body<List<{ id: string }>>(await server.inject(`${base}/v1/logistics/vehicles?available=true&limit=1`)).data;
        const [pickup, dropoff] = body<List<{ id: string }>>(await server.inject(`${base}/v1/logistics/locations?limit=2`)).data;
        const products = [];
        for (let i = 0; i < 3; ++i) {
            products.push(await post('/v1/commerce/products', { name: `Kit ${i}`, price: 1, currency: 'USD', business_id: business!.id }));
        }

        const bookings = [];
        for (let i = 1; i <= 3; ++i) {
            bookings.push(await post('/v1/logistics/bookings', {
                vehicle_id: vehicle!.id, pickup_location_id: pickup!.id, dropoff_location_id: dropoff!.id,
                pickup_at: `2031-01-0${i}T10:00:00Z`, return_at: `2031-01-0${i}T12:00:00Z`
            }));
        }

        const moves = [];
        for (let i = 0; i < 3; ++i) {
            moves.push(await post('/v1/pay/gateway/deposit', { provider_id: 'sandbox', asset: 'USD', amount: 100 + i }, { 'idempotency-key': `key-${i}` }));
        }

        const records = [
            ...products, ...bookings, ...moves,
            await post('/v1/commerce/inquiries', { product_id: products[0]!.id, message: 'Hi' }),
            await post('/v1/commerce/scam-reports', { target_type: 'product', target_id: products[1]!.id, reason: 'Odd' })
        ];
        expect(records.map((record) => record.created_at)).to.equal(records.map(() => frozenAt));

        const listed = async (url: string) => body<List<{ id: string }>>(await server.inject({ url: `${base}${url}`, headers: bearer(server, 'ann') })).data.map((record) => record.id);
        expect((await listed('/v1/commerce/products?limit=100')).slice(-3)).to.equal(products.map((product) => product.id));
        expect(await listed('/v1/logistics/bookings')).to.equal(bookings.map((booking) => booking.id));
        // Pay transactions are newest first: ties on the frozen instant fall back to the id.
        expect(await listed('/v1/pay/wallet/transactions')).to.equal(moves.map((move) => move.id).reverse());
    });
});


describe('a default data set on the wall clock', () => {

    for (const engine of engines) {
        it(`never sorts a new record before the newest one on ${engine}`, { timeout: 20_000 }, async () => {

            const wall = await engineServer(engine);
            try {
                const [business] = body<List<{ id: string }>>(await wall.inject('/v1/commerce/businesses?limit=1')).data;
                const stamps: string[] = [];
                for (let i = 0; i < 3; ++i) {
                    const res = await wall.inject({ method: 'POST', url: '/v1/commerce/products', headers: bearer(wall, 'ann'), payload: { name: `Kit ${i}`, price: 1, currency: 'USD', business_id: business!.id } });
                    expect(res.statusCode).to.equal(201);
                    stamps.push(body<{ created_at: string }>(res).created_at);
                }

                expect(stamps[0]! < stamps[1]! && stamps[1]! < stamps[2]!).to.be.true();
            }
            finally {
                await wall.stop();
            }
        });
    }
});
