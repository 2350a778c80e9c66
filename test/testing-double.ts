import Code from '@hapi/code';
import type { Request } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { liveBodyPaths, summarize } from '../lib/console/feed';
import { builtInNamespaces } from '../lib/namespaces';
import { createTestKit, type TestKit } from '../lib/testing';
import { commerceNamespace } from '../lib/namespaces/commerce';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


describe('the test kit\'s faults and request journal', () => {

    let kit: TestKit;

    before(async () => {

        kit = await createTestKit();
    });

    after(async () => {

        await kit.close();
    });

    it('sets, reads and clears an instance\'s fault rules, refusing what HTTP refuses', async () => {

        const t = await kit.instance();
        const stored = t.faults.set([{ method: 'GET', path: '/v1/weather/status', status: 503, times: 1 }], { seed: 3 });
        expect(stored).to.equal({ seed: 3, rules: [{ id: stored.rules[0]!.id, method: 'GET', path: '/v1/weather/status', status: 503, times: 1, description: 'GET /v1/weather/status: 503', hits: 0 }] });
        expect((await t.inject('/v1/weather/status')).statusCode).to.equal(503);
        expect(t.faults.get().rules[0]!.hits).to.equal(1);
        t.faults.clear();
        expect(t.faults.get()).to.equal({ seed: 0, rules: [] });
        expect(() => t.faults.set([{ path: '/v1/x', status: 204 }])).to.throw('Invalid fault rules: rules[0].status must be an error status from 400 to 599');
        await t.close();
    });

    it('lists, counts, finds and clears what the instance\'s clients sent', async () => {

        const t = await kit.instance();
        await t.inject('/v1/weather/status');
        await t.inject({ method: 'POST', url: '/v1/commerce/inquiries', headers: t.auth('ann'), payload: { product_id: 'nope', message: 'Hi' } });

        expect(t.requests.list().map((entry) => [entry.method, entry.path, entry.caller])).to.equal([['GET', '/v1/weather/status', null], ['POST', '/v1/commerce/inquiries', 'ann']]);
        expect(t.requests.count()).to.equal(2);
        expect(t.requests.count({ method: 'POST', bodyPatterns: [{ equalToJson: { message: 'Hi' }, ignoreExtraElements: true }] })).to.equal(1);
        expect(t.requests.find({ urlPath: '/v1/weather/status' }).map((entry) => entry.status)).to.equal([200]);
        expect(() => t.requests.find({ urlPath: 1 } as object)).to.throw('Invalid request pattern: urlPath must be a string');
        t.requests.clear();
        expect(t.requests.list()).to.equal([]);
        await t.close();
    });

    it('rejects close() with failOnUnexpected, naming each request no route took and each 5xx no fault injected', async () => {

        const t = await kit.instance({ failOnUnexpected: true });
        t.faults.set([{ path: '/v1/weather/status', status: 500, times: 1 }]);
        await t.inject('/v1/weather/status');
        await t.inject('/v1/comerce/products');
        await t.inject({ method: 'DELETE', url: '/v1/weather/status' });
        await t.inject('/v1/weather/status');

        const id = t.id;
        await expect(t.close()).to.reject(`Unexpected requests to instance ${id}:\nGET /v1/comerce/products matched no route (closest: GET /v1/commerce/products)\nDELETE /v1/weather/status matched no route (closest: GET /v1/weather/status)`);
        expect(kit.server.app.localgate.instances.find(id)).to.not.exist();
        await t.close();
    });

    it('names a 5xx the service answered by itself, and a 501 too', async () => {

        const t = await kit.instance({ failOnUnexpected: true });
        // A store failure stands in for a bug: the 500 is the service's own.
        const store = kit.server.app.localgate.instances.find(t.id)!.data.store(commerceNamespace);
        const listProducts = store.listProducts;
        store.listProducts = () => Promise.reject(new Error('broken'));
        const res = await t.inject('/v1/commerce/products');
        store.listProducts = listProducts;
        expect(res.statusCode).to.equal(500);
        expect((await t.inject('/v1/weather/forecast')).statusCode).to.equal(501);
        await expect(t.close()).to.reject(/GET \/v1\/commerce\/products answered 500 internal_server_error\nGET \/v1\/weather\/forecast answered 501 weather_not_provisioned$/);
    });

    it('resolves close() with failOnUnexpected when every request was expected', async () => {

        const t = await kit.instance({ failOnUnexpected: true });
        t.faults.set([{ path: '/v1/weather/status', status: 503 }]);
        expect((await t.inject('/v1/weather/status')).statusCode).to.equal(503);
        expect((await t.inject('/v1/logistics/vehicles/nope')).statusCode).to.equal(404);
        await t.close();
    });
});


describe('the live log', () => {

    it('marks a request a fault acted on, and a reply it dropped', () => {

        const request = {
            response: { statusCode: undefined, source: undefined },
            app: { scope: { basePath: '' }, fault: { id: 'rule-1', rule: 'POST /v1/*: reply dropped after it runs', hits: 2, drop: 'after', status: 201, code: null }, written: true },
            path: '/v1/pay/gateway/deposit',
            method: 'post',
            info: { id: 'req-9', received: 0, completed: 5 },
            orig: {},
            query: {},
            headers: {},
            auth: { isAuthenticated: false },
            route: { settings: { auth: { strategies: ['bearer'] } } }
        } as unknown as Request;

        expect(summarize(request, [], liveBodyPaths(builtInNamespaces))).to.equal({
            id: 'req-9', time: '1970-01-01T00:00:00.000Z', method: 'POST', path: '/v1/pay/gateway/deposit', instance: null,
            query: '', status: null, ms: 5, caller: null, public: false, fault: 'rule-1', fault_rule: 'POST /v1/*: reply dropped after it runs', fault_hits: 2, dropped: 'after',
            written: true, unsent: { status: 201, code: null }
        });
    });
});
