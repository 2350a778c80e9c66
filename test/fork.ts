import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { createTestKit, type TestKit } from '../lib/testing';
import { expectError } from './helpers/errors';
import { adminBearer, body, type List } from './helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


const bakery = 'd851fadb-03ca-5a24-ba16-c15cce19933b';

interface Product {
    id: string;
    name: string;
    created_at: string;
}


describe('a fork of an instance', () => {

    let kit: TestKit;

    before(async () => {

        kit = await createTestKit({ validateResponses: true });
    });

    after(() => kit.close());

    it('copies data, clock and id counter as they are now, then goes its own way', async () => {

        const source = await kit.instance({ ids: 'sequential', clock: '2030-01-01T00:00:00.000Z', pay: true });
        const post = (t: typeof source, name: string) => t.inject({ method: 'POST', url: '/v1/commerce/products', headers: t.auth('alice'), payload: { name, price: 2, currency: 'USD', business_id: bakery } });
        expect(body<Product>(await post(source, 'Before the fork')).id).to.equal('00000000-0000-4000-8000-000000000001');
        await source.clock.advance('1h');

        const fork = await source.fork();
        expect(fork.id).to.not.equal(source.id);
        expect(fork.clock.now().toISOString()).to.equal('2030-01-01T01:00:00.000Z');
        expect((await fork.inject('/v1/commerce/products?limit=100')).payload).to.equal((await source.inject('/v1/commerce/products?limit=100')).payload);
        expect(body(await fork.inject('/v1/pay/status'))).to.include({ schema_ready: true });

        // Each continues the counter from where the fork was taken, and neither sees the other's records.
        const inFork = body<Product>(await post(fork, 'Only in the fork'));
        const inSource = body<Product>(await post(source, 'Only in the source'));
        expect(inFork).to.include({ id: '00000000-0000-4000-8000-000000000002', created_at: '2030-01-01T01:00:00.000Z' });
        expect(inSource.id).to.equal('00000000-0000-4000-8000-000000000002');
        const names = async (t: typeof source) => body<List<Product>>(await t.inject('/v1/commerce/products?limit=100')).data.map((product) => product.name);
        expect(await names(fork)).to.include('Only in the fork').and.to.not.include('Only in the source');
        expect(await names(source)).to.include('Only in the source').and.to.not.include('Only in the fork');
        expect(body<List<Product>>(await fork.inject('/v1/commerce/products')).total).to.equal(37);

        // A fork resets to the copy it was made from, and deleting the source leaves it whole.
        await fork.clock.advance('1d');
        await fork.reset();
        expect(fork.clock.now().toISOString()).to.equal('2030-01-01T01:00:00.000Z');
        expect(await names(fork)).to.include('Before the fork').and.to.not.include('Only in the fork');
        await source.close();
        expect(body<List<Product>>(await fork.inject('/v1/commerce/products')).total).to.equal(36);
        await fork.close();
    });

    it('does not copy the snapshots of its source', async () => {

        const source = await kit.instance({ seed: 'none' });
        const snapshot = await source.snapshot();
        const fork = await kit.instance({ from: source });
        await expect(fork.restore(snapshot)).to.reject(/snapshot/);
        await source.restore(snapshot);
        await source.close();
        await fork.close();
    });

    it('is made over HTTP with from, and refuses an unknown source or other options beside it', async () => {

        const source = await kit.instance({ seed: 'none', ids: 'sequential', pay: true });
        const headers = adminBearer(kit.server);
        const made = await kit.server.inject({ method: 'POST', url: '/_instances', headers, payload: { from: source.id } });
        expect(made.statusCode, made.payload).to.equal(201);
        expect(body(made)).to.include({ seed: 'none', ids: 'sequential', pay: true, clock: null });

        const unknown = await kit.server.inject({ method: 'POST', url: '/_instances', headers, payload: { from: 'gone' } });
        expect(expectError(unknown, 422, 'instance_not_found').message).to.equal('There is no instance "gone" to fork: it was deleted, it expired, or it never existed');

        const mixed = await kit.server.inject({ method: 'POST', url: '/_instances', headers, payload: { from: source.id, seed: 'demo' } });
        expect(expectError(mixed, 400, 'validation_failed', 'seed').details).to.equal([{ field: 'seed', message: 'seed cannot go with from: a fork is a copy of its source, data, clock and ids' }]);

        await expect(kit.instance({ from: source, pay: false })).to.reject('Invalid instance options: pay cannot go with from: a fork is a copy of its source, data, clock and ids');
        await source.close();
    });
});
