import Code from '@hapi/code';
import type { Server } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { adminBearer, bearer, body, type List, testServer } from './helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


interface Instance {
    id: string;
    base_path: string;
}

interface Product {
    id: string;
    name: string;
}

const bakery = 'd851fadb-03ca-5a24-ba16-c15cce19933b';
const business = { id: bakery, name: 'Bakery', category: 'Bakery', city: 'Harbourside', phone: '+1 207 555 0101' };


describe('an instance named by the X-Localgate-Instance header', () => {

    let server: Server;
    let instance: Instance;

    before(async () => {

        server = await testServer();
        const made = await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server), payload: { seed: 'none', fixture: { commerce: { businesses: [business] } } } });
        expect(made.statusCode, made.payload).to.equal(201);
        instance = body<Instance>(made);
    });

    after(() => server.stop());

    it('runs a request to /v1/... in that instance, answering what its base path answers', async () => {

        const headers = { ...bearer(server, 'alice'), 'x-localgate-instance': instance.id };
        const created = await server.inject({ method: 'POST', url: '/v1/commerce/products', headers, payload: { name: 'Header loaf', price: 2.5, currency: 'USD', business_id: bakery } });
        expect(created.statusCode, created.payload).to.equal(201);
        // The same Location as under the base path: it names the instance the record lives in.
        expect(created.headers.location).to.equal(`${instance.base_path}/v1/commerce/products/${body<Product>(created).id}`);

        const byHeader = await server.inject({ url: '/v1/commerce/products', headers: { 'x-localgate-instance': instance.id } });
        const byPath = await server.inject({ url: `${instance.base_path}/v1/commerce/products` });
        expect(byHeader.statusCode).to.equal(200);
        expect(byHeader.payload).to.equal(byPath.payload);
        expect(body<List<Product>>(byHeader).data.map((product) => product.name)).to.equal(['Header loaf']);

        // The default data set has the demo products and not the instance's.
        const defaults = body<List<Product>>(await server.inject({ url: '/v1/commerce/products?limit=100' }));
        expect(defaults.total).to.equal(35);
        expect(defaults.data.map((product) => product.name)).to.not.include('Header loaf');
    });

    it('answers the instance\'s /health', async () => {

        const res = await server.inject({ url: '/health', headers: { 'x-localgate-instance': instance.id } });
        expect(res.statusCode).to.equal(200);
        expect(res.payload).to.equal((await server.inject(`${instance.base_path}/health`)).payload);
    });

    it('accepts the same instance in the path and the header', async () => {

        const res = await server.inject({ url: `${instance.base_path}/v1/commerce/businesses`, headers: { 'x-localgate-instance': instance.id } });
        expect(res.statusCode).to.equal(200);
        expect(body<List<Product>>(res).data.map((found) => found.id)).to.equal([bakery]);
    });

    it('answers 404 instance_not_found for an unknown id, and 400 instance_mismatch where the path names another', async () => {

        const unknown = await server.inject({ url: '/v1/commerce/products', headers: { 'x-localgate-instance': 'nope' } });
        expect(unknown.statusCode).to.equal(404);
        expect(body(unknown)).to.include({ code: 'instance_not_found', message: 'There is no instance "nope": it was deleted, it expired, or it never existed (POST /_instances makes one)' });

        const mismatch = await server.inject({ url: `${instance.base_path}/v1/commerce/products`, headers: { 'x-localgate-instance': 'other' } });
        expect(mismatch.statusCode).to.equal(400);
        expect(body(mismatch)).to.include({
            code: 'instance_mismatch',
            message: `The path names instance ${instance.id} and the X-Localgate-Instance header names "other": name one instance, in either place`
        });
    });

    it('leaves the admin routes and the docs to the default server', { timeout: 20_000 }, async () => {

        const listed = await server.inject({ url: '/_instances', headers: { ...adminBearer(server), 'x-localgate-instance': 'nope' } });
        expect(listed.statusCode).to.equal(200);
        expect(body<List<Instance>>(listed).data.map((live) => live.id)).to.include(instance.id);

        const docs = await server.inject({ url: '/openapi.json', headers: { 'x-localgate-instance': 'nope' } });
        expect(docs.statusCode).to.equal(200);
    });

    it('is allowed by CORS', async () => {

        const res = await server.inject({
            method: 'OPTIONS',
            url: '/v1/commerce/products',
            headers: { origin: 'http://app.test', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-localgate-instance' }
        });
        expect(res.statusCode).to.equal(200);
        expect(res.headers['access-control-allow-headers']).to.contain('X-Localgate-Instance');
    });
});


describe('POST /_instances with a large fixture', () => {

    const fixture = (count: number) => ({
        commerce: {
            businesses: [business],
            products: Array.from({ length: count }, (_, index) => ({ name: `Loaf number ${index} with a long enough name to weigh`, price: 2.5, currency: 'USD', business_id: bakery }))
        }
    });

    it('takes a fixture far over the API\'s 64 KiB body limit', async () => {

        const server = await testServer();
        const payload = { seed: 'none', fixture: fixture(1000) };
        expect(JSON.stringify(payload).length).to.be.above(100_000);
        const made = await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server), payload });
        expect(made.statusCode, made.payload).to.equal(201);
        const products = await server.inject(`${body<Instance>(made).base_path}/v1/commerce/products?limit=1`);
        expect(body<List<Product>>(products).total).to.equal(1000);
        await server.stop();
    });

    it('refuses a body over MAX_FIXTURE_MIB with 413, and the API keeps its own limit', async () => {

        const server = await testServer({ maxFixtureMib: 1 });
        const big = await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server), payload: { seed: 'none', fixture: fixture(20_000) } });
        expect(big.statusCode).to.equal(413);
        expect(body(big)).to.include({ code: 'payload_too_large' });

        const product = await server.inject({ method: 'POST', url: '/v1/commerce/products', headers: bearer(server, 'alice'), payload: { name: 'x'.repeat(70_000), price: 1, currency: 'USD', business_id: bakery } });
        expect(product.statusCode).to.equal(413);
        await server.stop();
    });
});
