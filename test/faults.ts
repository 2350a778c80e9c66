import Http from 'node:http';

import Code from '@hapi/code';
import type { Server, ServerInjectOptions, ServerInjectResponse } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { seededRandom } from '../lib/data-set/random';
import { describeRule, type FaultRuleInput } from '../lib/data-set/fault-rules';
import { adminBearer, bearer, body, type List, testServer } from './helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


interface Rules {
    seed: number;
    rules: ({ id: string; hits: number } & Record<string, unknown>)[];
}

// Ids of the shipped demo data.
const bakery = 'd851fadb-03ca-5a24-ba16-c15cce19933b';

const product = (name: string) => ({ name, price: 2.5, currency: 'USD', business_id: bakery });


describe('fault rules', () => {

    let server: Server;

    const admin = (method: string, url: string, payload?: object) => server.inject({ method, url, headers: adminBearer(server), payload } as ServerInjectOptions);
    const create = async (options: object = {}) => body<{ id: string; base_path: string }>(await admin('POST', '/_instances', options));
    const as = (subject: string, method: string, url: string, payload?: object, headers: object = {}) => server.inject({ method, url, headers: { ...bearer(server, subject), ...headers }, payload } as ServerInjectOptions);
    const setRules = async (id: string, payload: object) => {

        const res = await admin('PUT', `/_instances/${id}/faults`, payload);
        expect(res.statusCode, res.payload).to.equal(200);
        return body<Rules>(res);
    };

    const productTotal = async (base: string) => body<List<unknown>>(await server.inject(`${base}/v1/commerce/products?limit=1`)).total;

    before(async () => {

        server = await testServer();
    });

    after(async () => {

        await server.stop();
    });

    it('stores the rules with an id each, reads them with their hits, and clears them', async () => {

        const { id } = await create();
        const stored = await setRules(id, { seed: 7, rules: [{ method: 'post', path: '/v1/commerce/products', status: 503 }, { path: '/v1/logistics/*', latency_ms: [0, 0] }] });
        expect(stored.seed).to.equal(7);
        expect(stored.rules).to.equal([
            { id: stored.rules[0]!.id, method: 'post', path: '/v1/commerce/products', status: 503, description: 'POST /v1/commerce/products: 503', hits: 0 },
            { id: stored.rules[1]!.id, path: '/v1/logistics/*', latency_ms: [0, 0], description: 'any method /v1/logistics/*: 0 to 0 ms late', hits: 0 }
        ]);
        expect(stored.rules[0]!.id).to.not.equal(stored.rules[1]!.id);

        const res = await admin('GET', `/_instances/${id}/faults`);
        expect(res.statusCode).to.equal(200);
        expect(body<Rules>(res)).to.equal(stored);

        expect((await admin('DELETE', `/_instances/${id}/faults`)).statusCode).to.equal(204);
        expect(body(await admin('GET', `/_instances/${id}/faults`))).to.equal({ seed: 0, rules: [] });
    });

    it('answers an injected status with the usual error body and Retry-After, and writes nothing', async () => {

        const { id, base_path: base } = await create();
        const earlier = await productTotal(base);
        const { rules: [rule] } = await setRules(id, { rules: [{ method: 'POST', path: '/v1/commerce/products', status: 503, code: 'catalogue_down', message: 'The catalogue is down', retry_after: 5 }] });

        const res = await as('ann', 'POST', `${base}/v1/commerce/products`, product('Never'));
        expect(res.statusCode).to.equal(503);
        expect(res.headers['retry-after']).to.equal('5');
        expect(res.headers['x-request-id']).to.be.a.string();
        expect(body(res)).to.equal({ statusCode: 503, error: 'Service Unavailable', message: 'The catalogue is down', code: 'catalogue_down' });
        expect(await productTotal(base)).to.equal(earlier);

        // The rule names the method: a read of the same path goes through.
        expect((await server.inject(`${base}/v1/commerce/products`)).statusCode).to.equal(200);
        expect(body<Rules>(await admin('GET', `/_instances/${id}/faults`)).rules[0]).to.include({ id: rule!.id, hits: 1 });
    });

    it('words an injected status without code or message from the status and the rule', async () => {

        const { id, base_path: base } = await create();
        await setRules(id, { rules: [{ path: '/v1/weather/status', status: 429 }] });
        const res = await server.inject(`${base}/v1/weather/status`);
        expect(res.statusCode).to.equal(429);
        expect(res.headers['retry-after']).to.not.exist();
        expect(body(res)).to.equal({ statusCode: 429, error: 'Too Many Requests', message: 'Injected fault: any method /v1/weather/status: 429', code: 'too_many_requests' });
    });

    it('words each rule one way: in its description, an injected error\'s default message and the live log', () => {

        const cases: [FaultRuleInput, string][] = [
            [{ method: 'post', path: '/v1/pay/gateway/*', status: 503, code: 'gateway_unavailable', retry_after: 30 }, 'POST /v1/pay/gateway/*: 503 gateway_unavailable, Retry-After: 30'],
            [{ path: '/v1/commerce/products', status: 500 }, 'any method /v1/commerce/products: 500'],
            [{ path: '/v1/*', latency_ms: [300, 1200] }, 'any method /v1/*: 300 to 1200 ms late'],
            [{ method: 'GET', path: '/v1/weather/*', latency_ms: 250, status: 429, code: 'slow_down' }, 'GET /v1/weather/*: 250 ms late, 429 slow_down'],
            [{ path: '/v1/logistics/*', latency_ms: 100, drop: 'before' }, 'any method /v1/logistics/*: 100 ms late, connection closed before it runs'],
            [{ method: 'POST', path: '/v1/*', drop: 'after', times: 1 }, 'POST /v1/*: reply dropped after it runs']
        ];

        for (const [rule, words] of cases) {
            expect(describeRule(rule), words).to.equal(words);
        }
    });

    it('lets the first after requests through, then acts times times', async () => {

        const { id, base_path: base } = await create();
        await setRules(id, { rules: [{ method: 'POST', path: '/v1/commerce/products', after: 2, times: 3, status: 503 }] });
        const statuses: number[] = [];
        for (let i = 0; i < 7; ++i) {
            statuses.push((await as('ann', 'POST', `${base}/v1/commerce/products`, product(`P${i}`))).statusCode);
        }

        expect(statuses).to.equal([201, 201, 503, 503, 503, 201, 201]);
        expect(body<Rules>(await admin('GET', `/_instances/${id}/faults`)).rules[0]!.hits).to.equal(3);
    });

    it('matches everything below a trailing *, tries rules in order, and applies at most one', async () => {

        const { id, base_path: base } = await create();
        await setRules(id, {
            rules: [
                { path: '/v1/logistics/vehicles', times: 1, status: 500 },
                { path: '/v1/logistics/*', status: 502 },
                { path: '/v1/logistics/locations', status: 504 }
            ]
        });

        const status = async (path: string) => (await server.inject(`${base}${path}`)).statusCode;
        expect(await status('/v1/logistics/vehicles')).to.equal(500);
        expect(await status('/v1/logistics/vehicles')).to.equal(502);
        expect(await status('/v1/logistics/locations')).to.equal(502);
        expect(await status('/v1/logistics/nowhere')).to.equal(502);
        expect(await status('/v1/commerce/products')).to.equal(200);
        expect(body<Rules>(await admin('GET', `/_instances/${id}/faults`)).rules.map((rule) => rule.hits)).to.equal([1, 3, 0]);
    });

    it('draws probability and latency ranges from the seed: the same seed gives the same faults', async () => {

        const run = async (seed: number) => {

            const { id, base_path: base } = await create();
            await setRules(id, { seed, rules: [{ path: '/v1/weather/status', probability: 0.5, status: 503 }] });
            const statuses: number[] = [];
            for (let i = 0; i < 20; ++i) {
                statuses.push((await server.inject(`${base}/v1/weather/status`)).statusCode);
            }

            return statuses;
        };

        const first = await run(7);
        expect(await run(7)).to.equal(first);
        const random = seededRandom(7);
        expect(first).to.equal(Array.from({ length: 20 }, () => (random() < 0.5 ? 503 : 200)));
        expect(first).to.include([200, 503]);
        expect(await run(8)).to.not.equal(first);
    });

    it('delays a request by its latency, alone or before another effect', async () => {

        const { id, base_path: base } = await create();
        await setRules(id, { rules: [{ path: '/v1/weather/status', latency_ms: 30 }, { path: '/v1/weather/forecast', latency_ms: [20, 25], status: 500 }] });
        const started = Date.now();
        const res = await server.inject(`${base}/v1/weather/status`);
        expect(res.statusCode).to.equal(200);
        // A timer never fires early by more than its rounding.
        expect(Date.now() - started).to.be.at.least(29);

        const late = Date.now();
        expect((await server.inject(`${base}/v1/weather/forecast`)).statusCode).to.equal(500);
        expect(Date.now() - late).to.be.at.least(19);
    });

    it('drops the connection before the request is carried out: nothing written', async () => {

        const { id, base_path: base } = await create();
        const earlier = await productTotal(base);
        await setRules(id, { rules: [{ method: 'POST', path: '/v1/commerce/products', drop: 'before', times: 1 }] });

        const dropped = await as('ann', 'POST', `${base}/v1/commerce/products`, product('Lost'));
        expect(dropped.statusCode).to.equal(499);
        expect(dropped.raw.res.headersSent).to.be.false();
        expect(dropped.payload).to.equal('');
        expect(await productTotal(base)).to.equal(earlier);
        expect((await as('ann', 'POST', `${base}/v1/commerce/products`, product('Kept'))).statusCode).to.equal(201);
        expect(await productTotal(base)).to.equal(earlier + 1);
    });

    it('drops the reply after the deposit is committed: the retry with its key replays, one ledger entry', async () => {

        const { id, base_path: base } = await create({ pay: true });
        await setRules(id, { rules: [{ method: 'POST', path: '/v1/pay/gateway/deposit', drop: 'after', times: 1 }] });
        const deposit = () => as('dan', 'POST', `${base}/v1/pay/gateway/deposit`, { provider_id: 'sandbox', asset: 'USD', amount: 500 }, { 'idempotency-key': 'order-1' });

        const lost = await deposit();
        expect(lost.statusCode).to.equal(499);
        expect(lost.payload).to.equal('');

        const retry = await deposit();
        expect(retry.statusCode).to.equal(201);
        expect(retry.headers['idempotent-replayed']).to.equal('true');

        const ledger = body<List<{ id: string; amount: number }>>(await as('dan', 'GET', `${base}/v1/pay/wallet/transactions`));
        expect(ledger.total).to.equal(1);
        expect(ledger.data[0]).to.include({ id: body<{ id: string }>(retry).id, amount: 500 });
    });

    it('closes the connection after each answer of a data set while a rule may drop a reply there, and only then', async () => {

        const faulty = await create();
        const calm = await create();
        const connection = async (url: string) => (await server.inject(url)).headers.connection;
        await setRules(faulty.id, { rules: [{ method: 'POST', path: '/v1/commerce/products', drop: 'before', times: 1 }, { path: '/v1/weather/status', status: 503 }] });
        // Any answer of the data set, whichever rule (or none) acts on it.
        expect(await connection(`${faulty.base_path}/v1/commerce/products`)).to.equal('close');
        expect(await connection(`${faulty.base_path}/v1/weather/status`)).to.equal('close');
        // Never another data set's, nor the admin routes' or /health.
        expect(await connection(`${calm.base_path}/v1/commerce/products`)).to.equal('keep-alive');
        expect(await connection('/v1/commerce/products')).to.equal('keep-alive');
        expect(await connection(`${faulty.base_path}/health`)).to.equal('keep-alive');
        expect((await admin('GET', `/_instances/${faulty.id}/faults`)).headers.connection).to.equal('keep-alive');

        // Its one drop used up, no rule can drop a reply: connections stay open again.
        expect((await as('ann', 'POST', `${faulty.base_path}/v1/commerce/products`, product('Lost'))).statusCode).to.equal(499);
        expect(await connection(`${faulty.base_path}/v1/commerce/products`)).to.equal('keep-alive');
        expect(await connection(`${faulty.base_path}/v1/weather/status`)).to.equal('keep-alive');

        await setRules(faulty.id, { rules: [{ path: '/v1/weather/status', latency_ms: 0 }] });
        expect(await connection(`${faulty.base_path}/v1/weather/status`)).to.equal('keep-alive');
    });

    it('drops the reply of a refused request too', async () => {

        const { id, base_path: base } = await create();
        await setRules(id, { rules: [{ method: 'POST', path: '/v1/commerce/products', drop: 'after' }] });
        const res = await as('ann', 'POST', `${base}/v1/commerce/products`, { name: 'No price' });
        expect(res.statusCode).to.equal(499);
    });

    it('closes a real connection with no response, before and after', async () => {

        const listening = await testServer({ port: 0 });
        await listening.start();
        try {
            const ask = async (path: string, method = 'GET') => {

                return await new Promise<string>((resolve) => {

                    const request = Http.request(`${listening.info.uri}${path}`, { method, headers: { ...bearer(listening, 'ann'), 'content-type': 'application/json' } }, (res) => resolve(String(res.statusCode)));
                    request.once('error', (err: NodeJS.ErrnoException) => resolve(err.code!));
                    request.end(method === 'POST' ? JSON.stringify(product('Over the wire')) : undefined);
                });
            };

            const headers = adminBearer(listening);
            await listening.inject({ method: 'PUT', url: '/_faults', headers, payload: { rules: [{ method: 'GET', path: '/v1/weather/status', drop: 'before', times: 1 }, { method: 'POST', path: '/v1/commerce/products', drop: 'after', times: 1 }] } });
            expect(await ask('/v1/weather/status')).to.equal('ECONNRESET');
            expect(await ask('/v1/weather/status')).to.equal('200');

            const total = async () => body<List<unknown>>(await listening.inject('/v1/commerce/products?limit=1')).total;
            const earlier = await total();
            expect(await ask('/v1/commerce/products', 'POST')).to.equal('ECONNRESET');
            expect(await total()).to.equal(earlier + 1);
        }
        finally {
            await listening.stop();
        }
    });

    it('never touches another instance, the default data set, the admin routes or /health', async () => {

        const faulty = await create();
        const calm = await create();
        await setRules(faulty.id, { rules: [{ path: '/v1/*', status: 503 }] });
        expect((await server.inject(`${faulty.base_path}/v1/weather/status`)).statusCode).to.equal(503);
        expect((await server.inject(`${faulty.base_path}/health`)).statusCode).to.equal(200);
        expect((await admin('GET', `/_instances/${faulty.id}`)).statusCode).to.equal(200);
        expect((await server.inject(`${calm.base_path}/v1/weather/status`)).statusCode).to.equal(200);
        expect((await server.inject('/v1/weather/status')).statusCode).to.equal(200);

        const res = await admin('PUT', '/_faults', { rules: [{ path: '/v1/weather/status', status: 500 }] });
        expect(res.statusCode).to.equal(200);
        try {
            expect((await server.inject('/v1/weather/status')).statusCode).to.equal(500);
            expect((await server.inject(`${calm.base_path}/v1/weather/status`)).statusCode).to.equal(200);
            expect(body<Rules>(await admin('GET', '/_faults')).rules[0]!.hits).to.equal(1);
        }
        finally {
            expect((await admin('DELETE', '/_faults')).statusCode).to.equal(204);
        }

        expect((await server.inject('/v1/weather/status')).statusCode).to.equal(200);
    });

    it('needs the admin token, and answers 404 for an instance that is not live', async () => {

        const res = await as('ann', 'GET', '/_faults');
        expect(res.statusCode).to.equal(403);
        expect(body(res).code).to.equal('admin_required');

        const gone = await admin('PUT', '/_instances/nope/faults', { rules: [] });
        expect(gone.statusCode).to.equal(404);
        expect(body(gone)).to.include({ code: 'instance_not_found' });
    });

    const refusals: [string, object, string, string][] = [
        ['a 2xx status', { path: '/v1/x', status: 200 }, 'rules.0.status', 'rules[0].status must be an error status from 400 to 599'],
        ['a status above 599', { path: '/v1/x', status: 600 }, 'rules.0.status', 'rules[0].status must be an error status from 400 to 599'],
        ['a probability above 1', { path: '/v1/x', status: 500, probability: 1.5 }, 'rules.0.probability', 'rules[0].probability must be less than or equal to 1'],
        ['a negative probability', { path: '/v1/x', status: 500, probability: -0.1 }, 'rules.0.probability', 'rules[0].probability must be greater than or equal to 0'],
        ['an unknown key', { path: '/v1/x', status: 500, colour: 'red' }, 'rules.0.colour', 'rules[0].colour is not allowed'],
        ['an unknown drop', { path: '/v1/x', drop: 'sideways' }, 'rules.0.drop', 'rules[0].drop must be one of [before, after]'],
        ['a path outside /v1', { path: '/_instances', status: 500 }, 'rules.0.path', 'rules[0].path must be an API path under /v1/ (without an instance\'s base path), with * only at its end'],
        ['a * inside the path', { path: '/v1/*/products', status: 500 }, 'rules.0.path', 'rules[0].path must be an API path under /v1/ (without an instance\'s base path), with * only at its end'],
        ['a rule with no effect', { path: '/v1/x', times: 2 }, 'rules.0', 'rules[0] has no effect: give it status, latency_ms or drop'],
        ['a status and a drop', { path: '/v1/x', status: 500, drop: 'after' }, 'rules.0', 'rules[0] cannot both answer with a status and drop the connection'],
        ['a code without a status', { path: '/v1/x', drop: 'after', code: 'down' }, 'rules.0', 'rules[0] sets code, which goes with status only'],
        ['a latency range upside down', { path: '/v1/x', latency_ms: [50, 10] }, 'rules.0.latency_ms', 'rules[0].latency_ms must be [min, max] with min at most max'],
        ['a latency range of one number', { path: '/v1/x', latency_ms: [50] }, 'rules.0.latency_ms', 'rules[0].latency_ms must be milliseconds from 0 to 60000, or [min, max] of them'],
        ['a negative latency', { path: '/v1/x', latency_ms: -1 }, 'rules.0.latency_ms', 'rules[0].latency_ms must be milliseconds from 0 to 60000, or [min, max] of them'],
        ['a latency over a minute', { path: '/v1/x', latency_ms: 60_001 }, 'rules.0.latency_ms', 'rules[0].latency_ms must be milliseconds from 0 to 60000, or [min, max] of them'],
        ['a latency in words', { path: '/v1/x', latency_ms: 'slow' }, 'rules.0.latency_ms', 'rules[0].latency_ms must be milliseconds from 0 to 60000, or [min, max] of them'],
        ['a latency range with a negative end', { path: '/v1/x', latency_ms: [1, -1] }, 'rules.0.latency_ms', 'rules[0].latency_ms must be milliseconds from 0 to 60000, or [min, max] of them'],
        ['a path missing', { status: 500 }, 'rules.0.path', 'rules[0].path is required']
    ];

    for (const [name, rule, field, message] of refusals) {
        it(`refuses ${name} with a 400 naming the field`, async () => {

            const { id } = await create();
            const res = await admin('PUT', `/_instances/${id}/faults`, { rules: [rule] });
            expect(res.statusCode).to.equal(400);
            const error = body<{ code: string; details: { field: string; message: string }[] }>(res);
            expect(error.code).to.equal('validation_failed');
            expect(error.details).to.equal([{ field, message }]);
        });
    }

    it('refuses a body without rules', async () => {

        const res: ServerInjectResponse = await admin('PUT', '/_faults', { seed: 1 });
        expect(res.statusCode).to.equal(400);
        expect(body<{ details: object[] }>(res).details).to.equal([{ field: 'rules', message: 'rules is required' }]);
    });
});
