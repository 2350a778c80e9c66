import Fs from 'node:fs';
import Http from 'node:http';
import type { AddressInfo } from 'node:net';
import Path from 'node:path';

import Code from '@hapi/code';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import Lab from '@hapi/lab';
import type { Server } from '@hapi/hapi';

import { main } from '../lib/cli';
import { readScenario, runScenario, scenarioRules, serverTarget, type RunResult } from '../lib/scenarios';
import { parseScenarioText } from '../lib/scenarios/file';
import { junitReport, stepLines, tapReport } from '../lib/scenarios/report';
import { bodyDifferences, substitute } from '../lib/scenarios/run';
import { parseScenarioJson, placeholdersIn } from '../lib/scenarios/file';
import { Journal, JournalBudget } from '../lib/data-set/journal';
import { digestOf, withoutCredentials } from '../lib/data-set/journal-entry';
import { answerBody } from '../lib/scenarios/target';
import { createTestKit, type TestKit } from '../lib/testing';
import { adminBearer, body, tempDir, testServer } from './helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


const examplePath = Path.join(__dirname, '..', 'examples', 'scenarios', 'bank-transfer.yaml');
const wrongPath = Path.join(__dirname, 'fixtures', 'scenarios', 'wrong-expectation.yaml');
const example = Fs.readFileSync(examplePath, 'utf8');
// The words clients/python/tests/test_scenarios.py expects too.
const wrongMessage = [
    'Step 1 (Alice deposits by bank transfer) failed: POST /v1/pay/gateway/deposit 201: the answer\'s body is not what was expected (1 difference)',
    '  $.status: expected "completed", got "pending"'
].join('\n');

const bakery = 'd851fadb-03ca-5a24-ba16-c15cce19933b';
const world = { clock: '2030-01-01T00:00:00Z', pay: true, ids: 'sequential' };

interface Played extends RunResult {
    instance: string | null;
}


describe('Scenarios', () => {

    let server: Server;

    before(async () => {

        server = await testServer({ memoryPay: true });
    });

    after(() => server.stop());

    const instance = async (options: object = world): Promise<string> => {

        const res = await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server), payload: options });
        expect(res.statusCode).to.equal(201);
        return body<{ id: string }>(res).id;
    };

    const post = (url: string, payload: string | object, type = typeof payload === 'string' ? 'application/yaml' : 'application/json') => {

        return server.inject({ method: 'POST', url, headers: { ...adminBearer(server), 'content-type': type }, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) });
    };

    const refusal = async (scenario: string | object, code = 'invalid_scenario', type?: string): Promise<{ message: string; field: string }> => {

        const res = await post('/_scenarios/run', scenario, type);
        expect(res.statusCode, res.payload).to.equal(400);
        const refused = body<{ code: string; message: string; details: { field: string; message: string }[] }>(res);
        expect(refused.code).to.equal(code);
        expect(refused.details).to.have.length(1);
        expect(refused.details[0]?.message).to.equal(refused.message);
        return { message: refused.message, field: String(refused.details[0]?.field) };
    };

    const played = async (scenario: string | object, url = '/_scenarios/run'): Promise<Played> => {

        const res = await post(url, scenario);
        expect(res.statusCode, res.payload).to.equal(200);
        return body<Played>(res);
    };

    describe('POST /_instances/{id}/scenario', () => {

        it('plays the example as written, as YAML, on the instance as it stands', async () => {

            const id = await instance();
            const run = await played(example, `/_instances/${id}/scenario`);
            expect(run.message).to.equal(null);
            expect(run).to.include({ name: 'A bank transfer settles and the shop hears of it', ok: true, failure: null, instance: id });
            expect(run.captures).to.equal({ deposit: '00000000-0000-4000-8000-000000000002' });
            expect(run.steps.map(({ step, kind, say, ok }) => ({ step, kind, say, ok }))).to.equal([
                { step: 1, kind: 'request', say: 'Alice deposits 25 euros by bank transfer', ok: true },
                { step: 2, kind: 'clock', say: 'Two days later', ok: true },
                { step: 3, kind: 'request', say: null, ok: true },
                { step: 4, kind: 'event', say: null, ok: true },
                { step: 5, kind: 'webhook', say: 'The shop\'s webhook arrives, signed', ok: true }
            ]);
            expect(run.steps[0]?.line).to.equal('POST /v1/pay/gateway/deposit 201');
            expect(run.steps[1]?.line).to.match(/^clock \+2d: pay\.transaction\.completed 1, webhook attempts \d+$/);
            expect(run.steps[2]?.line).to.equal('GET /v1/pay/wallet/transactions/00000000-0000-4000-8000-000000000002 200');
            expect(run.steps[3]?.line).to.match(/^event pay\.transaction\.completed 00000000-/);
            expect(run.steps[4]?.line).to.match(/^webhook pay\.transaction\.completed 00000000-0000-4000-9000-\d+ verified$/);

            // What the steps did stays in the instance; the run's endpoints went with its receiver.
            const wallet = await server.inject({ url: `/i/${id}/v1/pay/wallet`, headers: { authorization: `Bearer ${serverTarget(server, id).token({ sub: 'alice', admin: false })}` } });
            expect(body<{ balances: { amount: number }[] }>(wallet).balances[0]?.amount).to.equal(2500);
            const endpoints = await server.inject({ url: `/_instances/${id}/webhooks`, headers: adminBearer(server) });
            expect(body<{ endpoints: unknown[] }>(endpoints).endpoints).to.equal([]);
            const journal = await server.inject({ url: `/_instances/${id}/requests`, headers: adminBearer(server) });
            expect(body<{ data: { path: string }[] }>(journal).data.map((entry) => entry.path)).to.include('/v1/pay/gateway/deposit');
        });

        it('takes the same scenario as JSON, and as text/plain', async () => {

            const parsed = readScenario(example, scenarioRules(server));
            expect(parsed.steps).to.have.length(5);
            const json = JSON.stringify({ name: 'JSON', instance: world, actors: { alice: {} }, steps: [{ as: 'alice', request: { method: 'get', path: '/v1/pay/wallet' }, expect: { status: 200, body: { owner_id: 'alice' } } }] });
            expect((await played(json, `/_instances/${await instance()}/scenario`)).ok).to.equal(true);
            expect((await played(JSON.parse(json) as object, `/_instances/${await instance()}/scenario`)).ok).to.equal(true);
            const res = await post(`/_instances/${await instance()}/scenario`, json, 'text/plain');
            expect(body<Played>(res).ok).to.equal(true);
        });

        it('needs an admin token, a known instance and a scenario media type', async () => {

            const anonymous = await server.inject({ method: 'POST', url: '/_scenarios/run', payload: example, headers: { 'content-type': 'application/yaml' } });
            expect(anonymous.statusCode).to.equal(401);
            const unknown = await post('/_instances/no-such-instance/scenario', example);
            expect(unknown.statusCode).to.equal(404);
            expect(body(unknown).code).to.equal('instance_not_found');
            // An escape hapi leaves as text resolves as a dot segment once the instance's path is routed: still the API only.
            const id = await instance();
            const escaped = await server.inject({ method: 'GET', url: `/i/${id}/v1/%2%65%2%65/_instances`, headers: adminBearer(server) });
            expect(escaped.statusCode).to.equal(404);
            expect(String(body(escaped).message)).to.startWith('Under an instance only the API answers');

            const form = await post('/_scenarios/run', 'name=x', 'application/x-www-form-urlencoded');
            expect(form.statusCode).to.equal(415);
        });
    });

    describe('POST /_scenarios/run', () => {

        it('makes a fresh instance with the instance block and deletes it after the run, unless kept', async () => {

            const live = body<{ total: number }>(await server.inject({ url: '/_instances', headers: adminBearer(server) })).total;
            const run = await played(example);
            expect(run.ok).to.equal(true);
            expect(run.instance).to.equal(null);
            expect(body<{ total: number }>(await server.inject({ url: '/_instances', headers: adminBearer(server) })).total).to.equal(live);

            const kept = await played(example, '/_scenarios/run?keep=true');
            expect(kept.instance).to.be.a.string();
            const record = await server.inject({ url: `/_instances/${kept.instance}`, headers: adminBearer(server) });
            expect(body(record)).to.include({ clock: '2030-01-03T00:00:00.000Z', pay: true, ids: 'sequential' });
        });

        it('answers the instance block\'s refusal in the words of POST /_instances', async () => {

            const res = await post('/_scenarios/run', { name: 'bad block', instance: { fixture: { commerce: { products: [{ name: 'no price' }] } } }, steps: [{ say: 'never' }] });
            expect(res.statusCode).to.equal(400);
            expect(body(res).code).to.equal('invalid_fixture');
            expect(String(body(res).message)).to.startWith('The scenario\'s instance cannot be made: ');
            expect(body<{ details: unknown[] }>(res).details).to.have.length(1);

            const limited = await testServer({ maxInstances: 1 });
            try {
                await limited.inject({ method: 'POST', url: '/_instances', headers: adminBearer(limited) });
                const refused = await limited.inject({ method: 'POST', url: '/_scenarios/run', headers: { ...adminBearer(limited), 'content-type': 'application/yaml' }, payload: 'name: x\nsteps: [{ say: hi }]' });
                expect(refused.statusCode).to.equal(429);
                expect(body(refused)).to.include({ code: 'instance_limit_reached' });
                expect(body(refused)).to.not.include('details');
            }
            finally {
                await limited.stop();
            }
        });

        it('stops at the first unmet expectation, naming the step, what was expected and what came', async () => {

            const run = await played(Fs.readFileSync(wrongPath, 'utf8'));
            expect(run.ok).to.equal(false);
            expect(run.message).to.equal(wrongMessage);
            expect(run.failure).to.equal({
                step: 1,
                say: 'Alice deposits by bank transfer',
                line: 'POST /v1/pay/gateway/deposit 201',
                reason: 'the answer\'s body is not what was expected (1 difference)',
                differences: [{ path: '$.status', expected: 'completed', got: 'pending' }]
            });
        });
    });

    describe('POST /_scenario', () => {

        it('plays on the default data set', async () => {

            const res = await post('/_scenario', { name: 'default', actors: { alice: {} }, steps: [
                { as: 'alice', request: { method: 'POST', path: '/v1/commerce/products', body: { name: 'Scenario loaf', price: 3, currency: 'USD', business_id: bakery } }, expect: { status: 201 }, capture: { product: '$.id', location: '$.id' } },
                { request: { method: 'GET', path: '/v1/commerce/products/{{product}}' }, expect: { status: 200, body: { id: '{{product}}', name: 'Scenario loaf' }, headers: { 'Content-Type': 'application/json; charset=utf-8' } } },
                { request: { method: 'GET', path: '/v1/commerce/products?offset=0', query: { limit: 1 } }, expect: { body: { count: 1 } } },
                { request: { method: 'GET', path: '/v1/commerce/products', query: { limit: 2 } }, expect: { body: { count: 2 } } },
                { event: { type: 'commerce.product.created', data: { id: '{{product}}' } } }
            ] });
            expect(body<Played>(res)).to.include({ ok: true, instance: null });
        });
    });

    describe('a step that fails', () => {

        const failed = async (steps: object[], extra: object = {}): Promise<NonNullable<Played['failure']> & { message: string | null }> => {

            const run = await played({ name: 'failing', instance: world, actors: { alice: {} }, steps, ...extra });
            expect(run.ok).to.equal(false);
            expect(run.steps.at(-1)?.ok).to.equal(false);
            return { ...run.failure as NonNullable<Played['failure']>, message: run.message };
        };

        it('a status, a header and a capture that matched nothing', async () => {

            const notFound = await failed([{ as: 'alice', request: { method: 'GET', path: '/v1/pay/wallet/transactions/00000000-0000-4000-8000-000000000099' }, expect: { status: 200, body: { status: 'completed' } } }]);
            expect(notFound.reason).to.startWith('expected status 200, got 404: ');
            expect(notFound.differences).to.equal([{ path: '$.status', expected: 'completed', got: '(absent)' }]);
            expect(String(notFound.message)).to.startWith('Step 1 (GET /v1/pay/wallet/transactions/00000000-0000-4000-8000-000000000099) failed: GET /v1/pay/wallet/transactions/00000000-0000-4000-8000-000000000099 404: expected status 200');

            const header = await failed([{ as: 'alice', request: { method: 'GET', path: '/v1/pay/wallet' }, expect: { headers: { 'X-Nothing': 'here' } } }]);
            expect(header.reason).to.equal('expected the header X-Nothing: here, got none');
            expect(header.differences).to.equal([{ path: 'headers.x-nothing', expected: 'here', got: null }]);

            const capture = await failed([{ as: 'alice', request: { method: 'GET', path: '/v1/pay/wallet' }, capture: { missing: '$.nothing' } }]);
            expect(capture.reason).to.equal('capture missing: $.nothing matched nothing in the answer');

            const text = await failed([{ request: { method: 'HEAD', path: '/health' }, capture: { missing: '$.status' } }]);
            expect(text.reason).to.equal('capture missing: $.status matched nothing in the answer');

            const otherHeader = await failed([{ request: { method: 'GET', path: '/health' }, expect: { headers: { 'content-type': 'text/plain' } } }]);
            expect(otherHeader.reason).to.equal('expected the header content-type: text/plain, got application/json; charset=utf-8');

            const noMessage = await failed([{ request: { method: 'GET', path: '/health' }, expect: { status: 500 } }]);
            expect(noMessage.reason).to.equal('expected status 500, got 200');
            const empty = await failed([{ request: { method: 'HEAD', path: '/health' }, expect: { status: 500 } }]);
            expect(empty.reason).to.equal('expected status 500, got 200');

            const many = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`k${i}`, i]));
            const lots = await failed([{ request: { method: 'GET', path: '/health' }, expect: { body: many } }]);
            expect(lots.reason).to.equal('the answer\'s body is not what was expected (at least 20 differences)');
            const two = await failed([{ request: { method: 'GET', path: '/health' }, expect: { body: { a: 1, b: 2 } } }]);
            expect(two.reason).to.equal('the answer\'s body is not what was expected (2 differences)');
        });

        it('a clock move that applied other counts, and an admin route that refused', async () => {

            const applied = await failed([{ clock: { now: '2030-01-02T00:00:00Z' }, expect: { applied: { 'pay.transaction.completed': 1 }, attempted: 2 } }]);
            expect(applied.line).to.equal('clock 2030-01-02T00:00:00.000Z: nothing applied');
            expect(applied.differences).to.equal([{ path: '$.applied[\'pay.transaction.completed\']', expected: 1, got: 0 }, { path: '$.attempted', expected: 2, got: 0 }]);

            const deposit = { as: 'alice', request: { method: 'POST', path: '/v1/pay/gateway/deposit', headers: { 'Idempotency-Key': 'k1' }, body: { provider_id: 'bank-transfer', asset: 'EUR', amount: 100 } } };
            const more = await failed([deposit, { clock: { advance: '1h' } }, { clock: { advance: '3d' }, expect: { applied: { 'pay.transaction.completed': 2 } } }]);
            expect(more.differences).to.equal([{ path: '$.applied[\'pay.transaction.completed\']', expected: 2, got: 1 }]);

            const range = await failed([{ clock: { advance: `${400_000 * 365}d` } }]);
            expect(range.reason).to.match(/^PUT \/_instances\/[\w-]+\/clock answered 422: /);
        });

        it('an event the log does not hold, with the closest one below', async () => {

            const none = await failed([{ event: { type: 'pay.transaction.completed' } }]);
            expect(none.reason).to.equal('the event log holds no pay.transaction.completed event');

            const deposit = { as: 'alice', request: { method: 'POST', path: '/v1/pay/gateway/deposit', headers: { 'Idempotency-Key': 'k1' }, body: { provider_id: 'card', asset: 'EUR', amount: 100 } } };
            const second = { ...deposit, request: { ...deposit.request, headers: { 'Idempotency-Key': 'k2' }, body: { provider_id: 'card', asset: 'EUR', amount: 200 } } };
            const closest = await failed([deposit, second, { event: { type: 'pay.transaction.created', data: { amount: 300, asset: 'EUR' } } }]);
            expect(closest.reason).to.equal('none of the 2 pay.transaction.created events of the log matches (the closest differs as below)');
            expect(closest.differences).to.equal([{ path: '$.amount', expected: 300, got: 100 }]);

            // Read a page of one event at a time: the second page holds the one asked for, and any event matches no data.
            const id = await instance();
            const scenario = readScenario({ name: 'paged', actors: { alice: {} }, steps: [deposit, second, { event: { type: 'pay.transaction.created', data: { amount: 200 } } }, { event: { type: 'pay.transaction.created' } }] }, scenarioRules(server));
            const run = await runScenario(scenario, serverTarget(server, id), { eventPage: 1 });
            expect(run.ok).to.equal(true);
            expect(run.steps[2]?.line).to.match(/^event pay\.transaction\.created 00000000-0000-4000-9000-\d+$/);
            expect(run.steps[3]?.line).to.match(/^event pay\.transaction\.created 00000000-0000-4000-9000-\d+$/);
            expect(run.steps[2]?.line).to.not.equal(String(run.steps[3]?.line));
        });

        it('a webhook with no endpoints, or none that came in time', async () => {

            const unwired = await failed([{ webhook: { type: 'pay.transaction.created' } }]);
            expect(unwired.reason).to.equal('the scenario sets no webhooks, so no delivery can come: add webhooks: [{ types: [...] }] to it');

            const deposit = { as: 'alice', request: { method: 'POST', path: '/v1/pay/gateway/deposit', headers: { 'Idempotency-Key': 'k1' }, body: { provider_id: 'card', asset: 'EUR', amount: 100 } } };
            const late = await failed([deposit, { webhook: { type: 'pay.transaction.created', data: { amount: 5 }, within: '500ms' } }, { say: 'never reached' }], { webhooks: [{ types: ['pay.*'] }] });
            expect(late.step).to.equal(2);
            expect(late.reason).to.match(/^no pay\.transaction\.created delivery that matches came within 500ms \(\d+ deliveries came in all\)$/);
            expect(late.differences).to.equal([{ path: '$.amount', expected: 5, got: 100 }]);

            const second = { ...deposit, request: { ...deposit.request, headers: { 'Idempotency-Key': 'k2' }, body: { provider_id: 'card', asset: 'EUR', amount: 200 } } };
            const third = { ...deposit, request: { ...deposit.request, headers: { 'Idempotency-Key': 'k3' }, body: { provider_id: 'card', asset: 'USD', amount: 300 } } };
            const closest = await failed([deposit, second, third, { webhook: { type: 'pay.transaction.created', data: { amount: 200, asset: 'USD' }, within: '1s' } }], { webhooks: [{ types: ['pay.transaction.created'] }] });
            expect(closest.differences.length).to.equal(1);

            const never = await failed([{ webhook: { type: 'pay.transaction.failed', within: '100ms' } }], { webhooks: [{ types: ['pay.*'], retry_schedule: ['1m'] }] });
            expect(never.reason).to.equal('no pay.transaction.failed delivery that matches came within 100ms (0 deliveries came in all)');
            expect(never.differences).to.equal([]);
        });

        it('a delivery that did not verify', async () => {

            const id = await instance();
            const scenario = readScenario({ name: 'forged', instance: world, actors: { alice: {} }, webhooks: [{ types: ['pay.*'] }], steps: [
                { as: 'alice', request: { method: 'POST', path: '/v1/pay/gateway/deposit', headers: { 'Idempotency-Key': 'k1' }, body: { provider_id: 'card', asset: 'EUR', amount: 100 } } },
                { webhook: { type: 'pay.transaction.created' } }
            ] }, scenarioRules(server));
            const target = serverTarget(server, id);
            // The endpoints are set with a secret other than the receiver's.
            const send = target.send;
            target.send = (exchange) => send(exchange.method === 'PUT' && exchange.url.endsWith('/webhooks') && exchange.payload?.includes('whsec_') ? { ...exchange, payload: exchange.payload.replace(/whsec_[^"]+/, `whsec_${Buffer.alloc(32, 1).toString('base64')}`) } : exchange);
            const run = await runScenario(scenario, target);
            expect(run.failure?.reason).to.equal('the pay.transaction.created delivery did not verify: No matching signature found');
        });

        it('a captured value that takes a path out of the API', async () => {

            const run = await failed([
                { as: 'alice', request: { method: 'POST', path: '/v1/commerce/products', body: { name: '../../_scenario', price: 1, currency: 'EUR', business_id: bakery } }, capture: { name: '$.name' } },
                { as: 'alice', request: { method: 'POST', path: '/v1/commerce/{{name}}', body: {} } }
            ]);
            expect(run.step).to.equal(2);
            expect(run.reason).to.equal('the path /v1/commerce/../../_scenario must be a path of the data set\'s API, /v1/... or /health, with no dot segment, escaped dot or slash, space or #');
        });

        it('a run past its deadline, and a run whose client went away', async () => {

            const id = await instance();
            const scenario = readScenario({ name: 'slow', actors: { alice: {} }, steps: [
                { fault: { set: [{ path: '/v1/pay/wallet', latency_ms: 150 }] } },
                { as: 'alice', request: { method: 'GET', path: '/v1/pay/wallet' } },
                { say: 'too late' }
            ] }, scenarioRules(server));
            const late = await runScenario(scenario, serverTarget(server, id), { runMs: 100 });
            expect(late.failure).to.include({ step: 3, reason: 'the run took longer than 0.1 s, the most a run may, before this step began' });

            const gone = new AbortController();
            gone.abort();
            const stopped = await runScenario(scenario, serverTarget(server, id), { signal: gone.signal });
            expect(stopped.failure).to.include({ step: 1, reason: 'the run was stopped before this step: whoever asked for it went away' });
        });

        it('webhooks the data set refuses, and more runs at once than a server plays', async () => {

            const closed = await testServer({ memoryPay: true, webhookHosts: ['hooks.example'] });
            try {
                const res = await closed.inject({ method: 'POST', url: '/_scenarios/run', headers: { ...adminBearer(closed), 'content-type': 'application/yaml' }, payload: 'name: x\nwebhooks: [{ types: [pay.*] }]\nsteps: [{ say: hi }]' });
                expect(res.statusCode).to.equal(422);
                expect(body(res)).to.include({ code: 'scenario_webhooks_refused' });
                expect(String(body(res).message)).to.startWith('The scenario\'s webhooks cannot be set: PUT /_instances/');
                expect(body<{ details: { field: string }[] }>(res).details[0]?.field).to.equal('webhooks');

                const slow = { name: 'slow', instance: world, actors: { alice: {} }, steps: [{ fault: { set: [{ path: '/v1/pay/wallet', latency_ms: 300 }] } }, { as: 'alice', request: { method: 'GET', path: '/v1/pay/wallet' } }] };
                const runs = await Promise.all(Array.from({ length: 9 }, () => closed.inject({ method: 'POST', url: '/_scenarios/run', headers: { ...adminBearer(closed), 'content-type': 'application/json' }, payload: JSON.stringify(slow) })));
                expect(runs.map((answer) => answer.statusCode).sort()).to.equal([200, 200, 200, 200, 200, 200, 200, 200, 429]);
                expect(body(runs.find((answer) => answer.statusCode === 429) as never)).to.include({ code: 'scenario_limit_reached' });
            }
            finally {
                await closed.stop();
            }
        });

        it('a request that could not be sent', async () => {

            const scenario = readScenario({ name: 'unsent', steps: [{ request: { method: 'GET', path: '/health' } }] }, scenarioRules(server));
            const run = await runScenario(scenario, { ...serverTarget(server, null), send: () => Promise.reject(new Error('socket hang up')) });
            expect(run.failure).to.equal({ step: 1, say: null, line: 'GET /health', reason: 'socket hang up', differences: [] });
        });
    });

    describe('fault and say steps', () => {

        it('set and clear fault rules between requests', async () => {

            const run = await played({ name: 'faults', instance: world, actors: { alice: {} }, steps: [
                { say: 'The wallet is down' },
                { fault: { set: [{ path: '/v1/pay/wallet', status: 503 }], seed: 7 } },
                { as: 'alice', request: { method: 'GET', path: '/v1/pay/wallet' }, expect: { status: 503 } },
                { fault: { clear: true } },
                { as: 'alice', request: { method: 'GET', path: '/v1/pay/wallet' }, expect: { status: 200 } },
                { fault: { set: [{ path: '/v1/pay/wallet', status: 500 }] } },
                { clock: { advance: '1s' }, expect: { attempted: 0, applied: {} } }
            ] });
            expect(run.ok).to.equal(true);
            expect(run.steps.map((step) => step.line)).to.equal(['The wallet is down', 'faults set (1)', 'GET /v1/pay/wallet 503', 'faults cleared', 'GET /v1/pay/wallet 200', 'faults set (1)', 'clock +1s: nothing applied']);
        });
    });

    describe('a file that cannot run', () => {

        const head = { name: 'bad', instance: world, actors: { alice: {} } };

        it('names the step and the field', async () => {

            expect(await refusal({ ...head, steps: [{ say: 'fine' }, { as: 'alice', expect: { status: 200 } }] })).to.equal({ message: 'Step 2 is of no step kind: give one of request, clock, event, webhook or fault, or say alone for a caption', field: 'steps[1]' });
            expect(await refusal({ ...head, steps: [{ play: 'x' }] })).to.equal({ message: 'Step 1 is of no step kind it knows (play): give one of request, clock, event, webhook or fault, or say alone for a caption', field: 'steps[0]' });
            expect(await refusal({ ...head, steps: [{ request: { method: 'GET', path: '/v1/pay/wallet' }, clock: { advance: '1d' } }] })).to.equal({ message: 'Step 1 (GET /v1/pay/wallet) has 2 step kinds (request, clock): a step does one of request, clock, event, webhook or fault', field: 'steps[0]' });
            expect(await refusal({ ...head, steps: [{ as: 'bob', request: { method: 'GET', path: '/v1/pay/wallet' } }] })).to.equal({ message: 'Step 1 (GET /v1/pay/wallet): "as" names the actor "bob", which actors does not hold (alice)', field: 'steps[0].as' });
            expect(await refusal({ ...head, steps: [{ request: { method: 'GET', path: '/v1/pay/{{wallet}}' } }] })).to.equal({ message: 'Step 1 (GET /v1/pay/{{wallet}}): {{wallet}} is never captured before it (no step before it captures anything)', field: 'steps[0]' });
            expect(await refusal({ ...head, steps: [{ request: { method: 'GET', path: '/v1/pay/wallet' }, capture: { id: '$.id' } }, { event: { type: 'pay.transaction.created', data: { id: '{{other}}' } } }] })).to.equal({ message: 'Step 2: {{other}} is never captured before it (captured so far: id)', field: 'steps[1]' });
            const traversal = { message: 'Step 1 (POST /v1/../_scenario): request.path must be a path of the data set\'s API, /v1/... or /health, with no dot segment, escaped dot or slash, space or #', field: 'steps[0].request.path' };
            expect(await refusal({ ...head, steps: [{ request: { method: 'POST', path: '/v1/../_scenario' } }] })).to.equal(traversal);
            for (const path of ['/v1/%2%65%2%65/_scenarios/run', '/v1/%%32%65/x', '/v1/a%2eb', '/v1/%2e%2e/_scenario', '/v1/%2E./_x', '/v1/..%2f_x', '/health/../_x', '/v1\\..', '/v1/./x', '/v1//../_x', '/v1/x#y', '/healthz']) {
                expect((await refusal({ ...head, steps: [{ request: { method: 'GET', path } }] })).field, path).to.equal('steps[0].request.path');
            }

            expect(await refusal({ ...head, steps: [{ request: { method: 'GET', path: '/v1/pay/wallet', headers: { 'x-localgate-INSTANCE': 'other' } } }] })).to.equal({ message: 'Step 1 (GET /v1/pay/wallet): request.headers names another data set with X-Localgate-Instance: a step sends to the run\'s own', field: 'steps[0].request.headers' });
            expect(await refusal({ ...head, webhooks: [{ types: ['pay.*'], retry_schedule: ['30d'] }], steps: [{ say: 'x' }] })).to.equal({ message: 'The scenario: webhooks[0].retry_schedule[0] must be a duration of at most 7d, such as 500ms, 5s, 5m, 2h or 1d', field: 'webhooks[0].retry_schedule[0]' });
            // No step calls an admin route: a scenario that ran scenarios would run without end.
            expect(await refusal({ ...head, actors: { root: { admin: true } }, steps: [{ as: 'root', request: { method: 'POST', path: '/_scenarios/run', body: {} } }] })).to.equal({ message: 'Step 1 (POST /_scenarios/run): request.path must be a path of the data set\'s API, /v1/... or /health, with no dot segment, escaped dot or slash, space or #', field: 'steps[0].request.path' });
            expect((await refusal({ ...head, steps: [{ request: { method: 'GET', path: '/v1/pay/wallet ' } }] })).field).to.equal('steps[0].request.path');
            expect(await refusal({ ...head, steps: [{ request: { method: 'FETCH', path: '/v1/pay/wallet' } }] })).to.equal({ message: 'Step 1 (FETCH /v1/pay/wallet): request.method must be one of [GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS]', field: 'steps[0].request.method' });
            expect(await refusal({ ...head, steps: [{ request: { method: 'GET', path: '/v1/pay/wallet' }, expectt: {} }] })).to.equal({ message: 'Step 1 (GET /v1/pay/wallet): "expectt" is not a field of this kind of step', field: 'steps[0].expectt' });
            expect(await refusal({ ...head, steps: [{ say: 'x'.repeat(90), clock: { advance: 'tomorrow' } }] })).to.equal({ message: `Step 1 (${'x'.repeat(77)}...): clock.advance must be a duration such as 90s, 2h or 2d`, field: 'steps[0].clock.advance' });
            expect(await refusal({ ...head, steps: [{ webhook: { type: 'pay.transaction.created', within: '2m' } }] })).to.equal({ message: 'Step 1: webhook.within must be at most 30s', field: 'steps[0].webhook.within' });
            expect(await refusal({ ...head, steps: [{ webhook: { type: 'pay.transaction.created', within: 'soon' } }] })).to.equal({ message: 'Step 1: webhook.within must be a duration such as 500ms, 5s or 30s', field: 'steps[0].webhook.within' });
            expect((await refusal({ ...head, steps: [{ event: { type: 'pay.*' } }] })).message).to.startWith('Step 1: event.type must be an event type this server writes (commerce.product.created, ');
            expect(await refusal({ ...head, steps: [{ fault: { set: [{ path: '/v1/pay/wallet', status: 200 }] } }] })).to.equal({ message: 'Step 1: fault.set[0].status must be an error status from 400 to 599', field: 'steps[0].fault.set[0].status' });
            expect(await refusal({ ...head, steps: [{ fault: { clear: true, seed: 1 } }] })).to.equal({ message: 'Step 1: fault contains a conflict between optional exclusive peers [seed, clear]', field: 'steps[0].fault' });
            expect(await refusal({ ...head, stepz: [] , steps: [{ say: 'x' }] })).to.equal({ message: 'The scenario: "stepz" is not a field of a scenario', field: 'stepz' });
            expect(await refusal({ '': 1, name: 'x', steps: [{ say: 'x' }] })).to.equal({ message: 'The scenario: "" is not a field of a scenario', field: '""' });
            expect(await refusal({ name: 'x', steps: [{ say: 'x', '': 1 }] })).to.equal({ message: 'Step 1 (x): "" is not a field of this kind of step', field: 'steps[0].""' });
            expect(await refusal({ name: 'no steps' })).to.equal({ message: 'The scenario: steps is required', field: 'steps' });
            expect(await refusal({ name: 'x', instance: { clock: 'soon' }, steps: [{ say: 'x' }] })).to.include({ field: 'instance.clock' });
        });

        it('says a file is not a scenario, not YAML, too large or too deep', async () => {

            expect((await refusal('')).message).to.equal('A scenario is a map with name and steps (and instance, actors and webhooks if it needs them)');
            expect((await refusal('just words')).message).to.equal('A scenario is a map with name and steps (and instance, actors and webhooks if it needs them)');
            const empty = await server.inject({ method: 'POST', url: '/_scenarios/run', headers: adminBearer(server) });
            expect(body(empty).message).to.equal('A scenario is a map with name and steps (and instance, actors and webhooks if it needs them)');
            expect(await refusal('- a list')).to.equal({ message: 'A scenario is a map with name and steps (and instance, actors and webhooks if it needs them)', field: 'scenario' });
            expect((await refusal('name: [unclosed')).message).to.startWith('The scenario is not YAML or JSON: ');
            expect((await refusal('name: a\nname: b\nsteps: []')).message).to.startWith('The scenario is not YAML or JSON: Map keys must be unique');
            expect((await refusal('name: a\nsteps: [{ say: x }]\nwith: { list: [{ k: 1, k: 2 }] }')).message).to.equal('The scenario is not YAML or JSON: Map keys must be unique; "k" is repeated');
            // A key that is a list is no field either, and keys are counted once each however many a map holds.
            expect((await refusal('name: a\nsteps: [{ say: x }]\n? [a]\n: 1\n')).field).to.equal('[ a ]');
            const many = `name: a\nsteps: [{ say: x }]\nmany:\n${Array.from({ length: 9_000 }, (_, i) => `  k${i}: ${i}`).join('\n')}\n`;
            expect((await refusal(many)).field).to.equal('many');
            const deepFlow = `name: deep\nsteps: [{ say: x }]\nextra: ${'['.repeat(70)}${']'.repeat(70)}`;
            expect(await refusal(deepFlow, 'body_too_deep')).to.equal({ message: 'The body nests arrays and objects deeper than 64 levels, the most the server accepts', field: 'scenario' });
            const deepBlock = `name: deep\nsteps: [{ say: x }]\nextra:\n${Array.from({ length: 70 }, (_, i) => `${'  '.repeat(i + 1)}k${i}:`).join('\n')} 1\n`;
            expect((await refusal(deepBlock, 'body_too_deep')).message).to.contain('deeper than 64 levels');
            // Aliases that repeat a part deeper than the text shows.
            const aliases = `name: deep\nsteps: [{ say: x }]\na: &a ${'['.repeat(40)}1${']'.repeat(40)}\nb: ${'['.repeat(30)}*a${']'.repeat(30)}\n`;
            expect((await refusal(aliases, 'body_too_deep')).message).to.contain('deeper than 64 levels');
            expect((await refusal('---\n...\n---\nname: x\nempty:\nsteps: []\n')).message).to.startWith('The scenario is not YAML or JSON: ');
            const deepObject = { name: 'deep', steps: [{ say: 'x' }], extra: JSON.parse(`${'['.repeat(70)}${']'.repeat(70)}`) as unknown };
            expect(() => readScenario(deepObject, scenarioRules(server))).to.throw('The body nests arrays and objects deeper than 64 levels, the most the server accepts');

            const big = `name: big\nsteps: [{ say: x }]\n# ${'x'.repeat(2 ** 20)}\n`;
            expect(() => parseScenarioJson(`"${'x'.repeat(2 ** 20)}"`)).to.throw('The scenario is larger than 1 MiB, the most a scenario may hold');
            const tooBig = await post('/_scenarios/run', big);
            expect(tooBig.statusCode).to.equal(413);

            // YAML is held to 256 KiB, which its parser reads in about a quarter of a second; the same as JSON is taken.
            const yamlLimit = 'The scenario is larger than 256 KiB, the most a scenario may hold as YAML; as JSON (Content-Type: application/json, or a .json file) it may hold 1 MiB';
            expect(() => readScenario(big, scenarioRules(server))).to.throw(yamlLimit);
            const padded = { name: 'padded', steps: Array.from({ length: 300 }, (_, i) => ({ say: `${i} ${'y'.repeat(900)}` })) };
            expect(await refusal(JSON.stringify(padded))).to.equal({ message: yamlLimit, field: 'scenario' });
            expect(await refusal(`name: x\nsteps: [{ say: x }]\n${'#\n'.repeat(10_000)}`)).to.equal({ message: 'The scenario holds more than 10000 lines, commas and opening brackets, the most a scenario may hold as YAML; as JSON (Content-Type: application/json, or a .json file) it may hold 1 MiB', field: 'scenario' });
            const asJson = await played(padded);
            expect(asJson.steps).to.have.length(300);
            expect((await refusal('{ "name": "x", ', 'invalid_scenario', 'application/json')).message).to.startWith('The scenario is not JSON: ');
        });
    });

    describe('its JSON Schema', () => {

        it('is the Scenario schema of the OpenAPI document, which the example meets and a mistaken file does not', async () => {

            const document = body<{ paths: Record<string, { post: { requestBody: { content: Record<string, { schema: object }> } } }>; components: { schemas: Record<string, object> } }>(await server.inject('/openapi.json'));
            const content = document.paths['/_scenarios/run']?.post.requestBody.content ?? {};
            expect(Object.keys(content)).to.equal(['application/json', 'application/yaml', 'application/x-yaml', 'text/yaml', 'text/plain']);
            expect(content['application/yaml']?.schema).to.equal({ $ref: '#/components/schemas/Scenario' });
            expect(document.paths['/_instances/{instance_id}/scenario']?.post.requestBody.content['application/json']?.schema).to.equal({ $ref: '#/components/schemas/Scenario' });

            // As draft 7 reads it: OpenAPI's nullable spelled as a type that may be null.
            const rewritten = JSON.parse(JSON.stringify(document.components.schemas).replaceAll('"#/components/schemas/', '"#/definitions/')) as Record<string, object>;
            const validate = addFormats(new Ajv({ strict: false, allowUnionTypes: true })).compile({ $ref: '#/definitions/Scenario', definitions: rewritten });
            expect(validate(parseScenarioText(example)), JSON.stringify(validate.errors)).to.be.true();
            expect(validate(parseScenarioText(Fs.readFileSync(wrongPath, 'utf8')))).to.be.true();
            expect(validate({ name: 'x', steps: [{ request: { method: 'GET', path: '/v1/pay/wallet' }, expext: {} }] })).to.be.false();
            expect(validate({ name: 'x', steps: [] })).to.be.false();
        });
    });

    describe('its helpers', () => {

        it('substitute keeps a lone placeholder\'s type and writes others into the text', () => {

            expect(substitute<unknown>({ '{{k}}': ['{{n}}', 'n={{n}}', 'o={{o}}', 'k={{ k }}', 5, null] }, { k: 'key', n: 2, o: { a: 1 } })).to.equal({ key: [2, 'n=2', 'o={"a":1}', 'k=key', 5, null] });
        });

        it('a journal notes at most 500 moves of the clock, and none once closed or when it keeps nothing', () => {

            const budget = new JournalBudget(2 ** 20);
            const journal = new Journal(10, budget);
            for (let i = 0; i < 501; ++i) {
                journal.noteMove({ advance: i + 1 }, {});
            }

            expect(journal.clockMoves()).to.have.length(500);
            expect(journal.clockMoves()[0]).to.equal({ after: 0, to: { advance: 2 }, applied: {} });
            journal.clear();
            expect(journal.clockMoves()).to.equal([]);
            budget.leave(journal);
            journal.noteMove({ advance: 1 }, {});
            expect(journal.clockMoves()).to.equal([]);

            const none = new Journal(0, budget);
            none.noteMove({ advance: 1 }, {});
            expect(none.clockMoves()).to.equal([]);
        });

        it('a digest of an answer keeps its id and short values, never an instant or a credential by name or value', () => {

            const { digest } = digestOf({ id: 'p1', name: 'loaf', price: 3, open: true, gone: null, created_at: 'x', api_key: 'k', session_id: 's', note: 'hunter2', long: 'x'.repeat(201), tags: ['a'] });
            expect(withoutCredentials(digest, ['hunter2'])).to.equal({ id: 'p1', fields: { name: 'loaf', price: 3, open: true, gone: null } });
            expect(digestOf({ data: [], total: 0 }).digest).to.equal({ id: null, fields: { total: 0 } });
        });

        it('placeholdersIn finds every {{name}} in strings and keys', () => {

            expect(placeholdersIn({ a: null, b: 1, '{{k}}': ['{{x}} and {{ y }}', true] }).sort()).to.equal(['k', 'x', 'y']);
        });

        it('bodyDifferences compares a subset: extra keys and items are left out', () => {

            expect(bodyDifferences(undefined, 1)).to.equal([]);
            expect(bodyDifferences({ a: [1, { b: 2 }], 'odd key': 1 }, { a: [1, { b: 2, c: 3 }, 4], 'odd key': 1, z: 0 })).to.equal([]);
            expect(bodyDifferences({ a: [1, 2] }, { a: [1] })).to.equal([{ path: '$.a', expected: [1, 2], got: [1] }]);
            expect(bodyDifferences({ a: { b: 1 } }, { a: [1] })).to.equal([{ path: '$.a', expected: { b: 1 }, got: [1] }]);
            expect(bodyDifferences({ a: { b: 1 } }, {})).to.equal([{ path: '$.a', expected: { b: 1 }, got: null }]);
            expect(bodyDifferences({ 'odd key': [1] }, { 'odd key': 'x' })).to.equal([{ path: '$["odd key"]', expected: [1], got: 'x' }]);
            expect(bodyDifferences([0], null)).to.equal([{ path: '$', expected: [0], got: null }]);
            expect(bodyDifferences({ a: null, b: { c: 1 } }, { a: 1, b: null })).to.equal([{ path: '$.a', expected: null, got: 1 }, { path: '$.b', expected: { c: 1 }, got: null }]);
            const many = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, i]));
            expect(bodyDifferences(many, {})).to.have.length(20);
        });

        it('answerBody parses JSON answers only, and keeps broken JSON as text', () => {

            expect(answerBody('', 'application/json')).to.equal(null);
            expect(answerBody('{"a":1}', 'application/problem+json; charset=utf-8')).to.equal({ a: 1 });
            expect(answerBody('{broken', 'application/json')).to.equal('{broken');
            expect(answerBody('<p>', 'text/html')).to.equal('<p>');
            expect(answerBody('{"a":1}', undefined)).to.equal('{"a":1}');
        });
    });
});


describe('Save as scenario', () => {

    let server: Server;

    before(async () => {

        server = await testServer({ memoryPay: true });
    });

    after(() => server.stop());

    const admin = () => adminBearer(server);
    const as = (sub: string, role?: { admin: true }) => ({ authorization: `Bearer ${serverTarget(server, null).token({ sub, admin: Boolean(role?.admin) })}` });
    const make = async (options: object) => body<{ id: string }>(await server.inject({ method: 'POST', url: '/_instances', headers: admin(), payload: options })).id;

    it('replays what an instance saw on a fresh one, its ids captured, random ids and all', async () => {

        const id = await make({ pay: true, clock: '2030-01-01T00:00:00Z' });
        const api = (method: string, url: string, headers: object, payload?: object) => server.inject({ method, url: `/i/${id}${url}`, headers: { ...headers }, payload });
        const product = await api('POST', '/v1/commerce/products', as('alice'), { name: 'Saved rye', description: 'x'.repeat(300), price: 4, currency: 'EUR', business_id: bakery });
        expect(product.statusCode).to.equal(201);
        const productId = body<{ id: string }>(product).id;
        await api('GET', `/v1/commerce/products/${productId}`, {});
        await api('POST', '/v1/commerce/inquiries', as('bob smith'), { product_id: productId, message: `About ${productId}` });
        await api('POST', '/v1/commerce/inquiries', as('carol jones'), { product_id: productId, message: 'Still there?' });
        await api('POST', '/v1/commerce/products', as('alice'), { name: server.app.localgate.secret, price: 1, currency: 'EUR', business_id: bakery });
        await api('POST', '/v1/commerce/products', as('alice'), [productId] as never);
        await api('GET', '/v1/logistics/vehicles/67f7b2a9-5639-460c-a9f5-d114637c1b43', {});
        const deposit = await api('POST', '/v1/pay/gateway/deposit', { ...as('alice'), 'idempotency-key': 'save-1' }, { provider_id: 'bank-transfer', asset: 'EUR', amount: 2500 });
        const depositId = body<{ id: string }>(deposit).id;
        await server.inject({ method: 'PUT', url: `/_instances/${id}/clock`, headers: admin(), payload: { advance: '2d' } });
        await api('GET', `/v1/pay/wallet/transactions/${depositId}`, as('alice'));
        await api('GET', '/v1/pay/wallet', as('alice', { admin: true }));
        await api('GET', '/v1/pay/wallet/transactions/00000000-0000-4000-8000-00000000dead', as('alice'));
        await server.inject({ method: 'PUT', url: `/_instances/${id}/clock`, headers: admin(), payload: { now: '2030-02-01T00:00:00Z' } });

        const yaml = await server.inject({ url: `/_instances/${id}/scenario`, headers: { ...admin(), accept: 'application/yaml' } });
        expect(yaml.statusCode).to.equal(200);
        expect(yaml.headers['content-type']).to.equal('application/yaml; charset=utf-8');
        const saved = parseScenarioText(yaml.payload) as { name: string; instance: object; actors: object; steps: Record<string, unknown>[] };
        expect(saved.name).to.equal(`Saved from instance ${id}`);
        expect(saved.instance).to.equal({ seed: 'demo', ids: 'random', pay: true, clock: '2030-01-01T00:00:00.000Z' });
        expect(saved.actors).to.equal({ alice: { sub: 'alice' }, caller: { sub: 'bob smith' }, caller_2: { sub: 'carol jones' }, alice_admin: { sub: 'alice', admin: true } });
        expect(saved.steps[0]).to.equal({
            as: 'alice',
            request: { method: 'POST', path: '/v1/commerce/products', body: { name: 'Saved rye', description: 'x'.repeat(300), price: 4, currency: 'EUR', business_id: bakery } },
            expect: { status: 201, body: { name: 'Saved rye', price: 4, currency: 'EUR', business_id: bakery, created_by: 'alice', scam_report_count: 0 } },
            capture: { products_1: '$.id' }
        });
        expect(saved.steps[1]).to.include({ request: { method: 'GET', path: '/v1/commerce/products/{{products_1}}' } });
        expect(saved.steps[2]).to.include({ as: 'caller' });
        expect((saved.steps[2]?.request as { body: object }).body).to.equal({ product_id: '{{products_1}}', message: `About ${productId}` });
        expect(saved.steps[4]).to.include({ request: { method: 'POST', path: '/v1/commerce/products', body: { name: '[hidden]', price: 1, currency: 'EUR', business_id: bakery } }, capture: { products_2: '$.id' } });
        expect(saved.steps[5]).to.include({ request: { method: 'POST', path: '/v1/commerce/products', body: ['{{products_1}}'] }, expect: { status: 400 } });
        expect((saved.steps[6]?.expect as { body: object }).body).to.include({ is_available: true });
        const whole = structuredClone(saved);
        saved.steps.splice(3, 4);
        expect(saved.steps[3]).to.include({ request: { method: 'POST', path: '/v1/pay/gateway/deposit', headers: { 'idempotency-key': 'save-1' }, body: { provider_id: 'bank-transfer', asset: 'EUR', amount: 2500 } } });
        expect(saved.steps[4]).to.equal({ clock: { advance: '2d' }, expect: { applied: { 'pay.transaction.completed': 1 } } });
        expect(saved.steps[7]).to.equal({ as: 'alice', request: { method: 'GET', path: '/v1/pay/wallet/transactions/00000000-0000-4000-8000-00000000dead' }, expect: { status: 404 } });
        expect(saved.steps.at(-1)).to.equal({ clock: { now: '2030-02-01T00:00:00.000Z' }, expect: { applied: {} } });

        const replay = await server.inject({ method: 'POST', url: '/_scenarios/run', headers: { ...admin(), 'content-type': 'application/yaml' }, payload: yaml.payload });
        const run = body<Played>(replay);
        expect(run.message).to.equal(null);
        expect(run.steps).to.have.length(whole.steps.length);
        expect(run.captures.products_1).to.not.equal(productId);

        const json = await server.inject({ url: `/_instances/${id}/scenario`, headers: admin() });
        expect(json.headers['content-type']).to.equal('application/json; charset=utf-8');
        expect(body(json)).to.equal(whole as never);
    });

    it('says what it leaves out: a body the journal cut, an answer a fault dropped, the world of a fixture or a fork', async () => {

        const short = await testServer({ journalBodyBytes: 20 });
        try {
            const id = body<{ id: string }>(await short.inject({ method: 'POST', url: '/_instances', headers: adminBearer(short), payload: { fixture: { commerce: { products: [] } } } })).id;
            const headers = { authorization: `Bearer ${serverTarget(short, null).token({ sub: 'alice', admin: false })}` };
            await short.inject({ method: 'POST', url: `/i/${id}/v1/commerce/inquiries`, headers, payload: { product_id: 'e7f64181-1fb9-5a31-aa9d-dc7469ce77f5', message: 'A message longer than twenty bytes' } });
            await short.inject({ method: 'PUT', url: `/_instances/${id}/faults`, headers: adminBearer(short), payload: { rules: [{ path: '/v1/commerce/products', drop: 'before' }] } });
            await short.inject({ url: `/i/${id}/v1/commerce/products` });
            const saved = body<{ description: string; steps: { say?: string }[] }>(await short.inject({ url: `/_instances/${id}/scenario`, headers: { ...adminBearer(short), accept: 'application/json' } }));
            expect(saved.steps.map((step) => step.say)).to.equal([
                'POST /v1/commerce/inquiries: its body was longer than the journal keeps (JOURNAL_BODY_BYTES) and is left out',
                'GET /v1/commerce/products: a fault rule acted on it, so its answer is not expected (the file sets no fault rule)'
            ]);
            expect(saved.description).to.endWith('The instance was made with a fixture, which the file does not carry: give instance.fixture (an export of the instance as it was made) for a replay to start from the same world.');

            const fork = body<{ id: string }>(await short.inject({ method: 'POST', url: '/_instances', headers: adminBearer(short), payload: { from: id } })).id;
            const forked = body<{ description: string; steps: { say?: string }[] }>(await short.inject({ url: `/_instances/${fork}/scenario`, headers: { ...adminBearer(short), accept: 'application/json' } }));
            expect(forked.description).to.contain('The instance was made as a fork, which the file does not carry');
            expect(forked.steps).to.equal([{ say: `instance ${fork} had seen no request and no move of its clock` }]);
        }
        finally {
            await short.stop();
        }
    });

    it('saves the default data set too', async () => {

        const saved = body<{ name: string; instance: object }>(await server.inject({ url: '/_scenario', headers: { ...admin(), accept: 'application/json' } }));
        expect(saved).to.include({ name: 'Saved from the default data set', instance: {} });
    });
});


describe('The kit runs scenarios', () => {

    let kit: TestKit;

    before(async () => {

        kit = await createTestKit({ memoryPay: true, validateResponses: true });
    });

    after(() => kit.close());

    it('on a fresh instance from a file, and on an instance of its own as it stands', async () => {

        const fresh = await kit.scenario(examplePath);
        expect(fresh).to.include({ ok: true, instance: null });
        const json = Path.join(tempDir(), 'bank-transfer.JSON');
        Fs.writeFileSync(json, JSON.stringify(parseScenarioText(example)));
        expect((await kit.scenario(json)).captures).to.equal(fresh.captures);

        const t = await kit.instance({ seed: 'none', pay: true, clock: '2030-01-01T00:00:00Z', ids: 'sequential' });
        const run = await t.scenario(parseScenarioText(example) as object);
        expect(run.captures).to.equal({ deposit: '00000000-0000-4000-8000-000000000002' });
        expect(run.instance).to.equal(t.id);
        await t.close();
        await expect(t.scenario(examplePath)).to.reject(`There is no instance "${t.id}": it was deleted, it expired, or it never existed (POST /_instances makes one)`);
    });

    it('plays the README\'s demo as its scenario file tells it', async () => {

        const run = await kit.scenario(Path.join(__dirname, '..', 'examples', 'scenarios', 'demo.yaml'));
        expect(run.steps).to.have.length(14);
        expect(run.events.map((event) => event.type)).to.include(['commerce.scam_report.created', 'logistics.booking.created', 'pay.transaction.created', 'pay.transaction.completed']);
    });

    it('rejects with the failing step, and with the step and field of a file that cannot run', async () => {

        await expect(kit.scenario(wrongPath)).to.reject(wrongMessage);
        const t = await kit.instance();
        await expect(t.scenario({ name: 'x', steps: [{ as: 'nobody', request: { method: 'GET', path: '/health' } }] })).to.reject('Step 1 (GET /health): "as" names the actor "nobody", which actors does not hold (it holds none)');
        await expect(t.scenario(Path.join(tempDir(), 'missing.yaml'))).to.reject(/ENOENT/);
        await t.close();
    });
});


describe('localgate scenario run', () => {

    const io = () => {

        const out: string[] = [];
        const err: string[] = [];
        return { out, err, io: { out: (line: string) => out.push(line), err: (line: string) => err.push(line) } };
    };

    it('runs files on a server of its own in memory, a line a step, and exits 1 when one failed', async () => {

        const { out, io: printer } = io();
        const dir = tempDir();
        const unreadable = Path.join(dir, 'missing.yaml');
        const big = Path.join(dir, 'big.yaml');
        Fs.writeFileSync(big, 'x'.repeat(2 ** 20 + 1));
        const bad = Path.join(dir, 'bad.yaml');
        Fs.writeFileSync(bad, 'name: bad\nsteps: [{ nothing: 1 }]\n');
        const report = Path.join(dir, 'report.xml');
        const code = await main(['scenario', 'run', examplePath, wrongPath, unreadable, big, bad, '--reporter', 'junit', '--out', report], { DATA_DIR: dir }, printer);
        expect(code).to.equal(1);
        expect(out[0]).to.equal(`✓ A bank transfer settles and the shop hears of it (${examplePath})`);
        expect(out[1]).to.equal('    1 ✓ POST /v1/pay/gateway/deposit 201  · Alice deposits 25 euros by bank transfer');
        expect(out).to.include([`✗ A deposit expected settled at once (${wrongPath})`, '    1 ✗ POST /v1/pay/gateway/deposit 201  · Alice deposits by bank transfer', ...wrongMessage.split('\n').map((line) => `      ${line}`)]);
        expect(out).to.include(`✗ ${big}: the file is larger than 1 MiB, the most a scenario may hold`);
        expect(out.find((line) => line.startsWith(`✗ ${unreadable}: cannot read it: ENOENT`))).to.exist();
        expect(out).to.include(`✗ ${bad}: Step 1 is of no step kind it knows (nothing): give one of request, clock, event, webhook or fault, or say alone for a caption (400 invalid_scenario)`);
        expect(out.at(-1)).to.equal('1 of 5 scenarios passed');

        const xml = Fs.readFileSync(report, 'utf8');
        expect(xml).to.startWith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="localgate scenarios" tests="9" failures="1" errors="3">');
        expect(xml).to.contain('<testcase name="4 event pay.transaction.completed 00000000-0000-4000-9000-000000000002" classname="A bank transfer settles and the shop hears of it" time="');
        expect(xml).to.contain('<failure message="the answer&apos;s body is not what was expected (1 difference)">'.replace('&apos;', '\''));
        expect(xml).to.contain('$.status: expected &quot;completed&quot;, got &quot;pending&quot;</failure>');
        expect(xml).to.contain(`<error message="the file is larger than 1 MiB, the most a scenario may hold"/>`);
    });

    it('reports in TAP on standard output', async () => {

        const { out, io: printer } = io();
        const json = Path.join(tempDir(), 'bank-transfer.json');
        Fs.writeFileSync(json, JSON.stringify(parseScenarioText(example)));
        expect(await main(['scenario', 'run', json], { DATA_DIR: tempDir() }, io().io)).to.equal(0);
        const code = await main(['scenario', 'run', examplePath, '--reporter', 'tap'], { DATA_DIR: tempDir() }, printer);
        expect(code).to.equal(0);
        const tap = out.find((line) => line.startsWith('TAP version 13'));
        expect(String(tap)).to.startWith('TAP version 13\n1..1\n# Subtest: A bank transfer settles and the shop hears of it\n    1..5\n    ok 1 - Alice deposits 25 euros by bank transfer\n');
        expect(String(tap)).to.endWith('ok 1 - A bank transfer settles and the shop hears of it');
        expect(out.at(-1)).to.equal('1 of 1 scenario passed');
    });

    it('runs on the server at --url with a token minted from AUTH_JWT_SECRET', async () => {

        const secret = 'a'.repeat(64);
        const served = await testServer({ memoryPay: true, jwtSecret: secret });
        await served.start();
        try {
            const { out, io: printer } = io();
            expect(await main(['scenario', 'run', examplePath, '--url', served.info.uri], { AUTH_JWT_SECRET: secret }, printer)).to.equal(0);
            expect(out.at(-1)).to.equal('1 of 1 scenario passed');

            const wrong = io();
            expect(await main(['scenario', 'run', examplePath, '--url', served.info.uri], { AUTH_JWT_SECRET: 'b'.repeat(64) }, wrong.io)).to.equal(1);
            expect(wrong.out[0]).to.match(/^✗ .*bank-transfer\.yaml: .*\(401 unauthorized\)$/);
        }
        finally {
            await served.stop();
        }

        const gone = io();
        expect(await main(['scenario', 'run', examplePath, '--url', served.info.uri], { AUTH_JWT_SECRET: secret }, gone.io)).to.equal(1);
        expect(gone.out[0]).to.match(/: nothing answers at http:\/\/127\.0\.0\.1:\d+: \w/);

        let answersJson = false;
        const other = Http.createServer((req, res) => (answersJson ? res.writeHead(404, { 'content-type': 'application/json' }).end('{}') : res.end('not localgate')));
        await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
        try {
            const text = io();
            const url = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
            expect(await main(['scenario', 'run', examplePath, '--url', url], { AUTH_JWT_SECRET: secret }, text.io)).to.equal(1);
            expect(String(text.out[0])).to.endWith(`: ${url} answered 200 with no JSON: is it a localgate server?`);
            const json = io();
            answersJson = true;
            expect(await main(['scenario', 'run', examplePath, '--url', url], { AUTH_JWT_SECRET: secret }, json.io)).to.equal(1);
            expect(String(json.out[0])).to.endWith(': the server answered 404, with no error of localgate\'s');
        }
        finally {
            other.close();
        }
    });

    it('refuses a command line it cannot run', async () => {

        const refused = async (argv: string[]) => {

            const { err, io: printer } = io();
            expect(await main(argv, { DATA_DIR: tempDir() }, printer)).to.equal(2);
            return err[0];
        };

        expect(await refused(['scenario'])).to.equal('localgate: scenario takes run and the files to run, for example: npx localgate scenario run demo.yaml');
        expect(await refused(['scenario', 'play', 'x.yaml'])).to.equal('localgate: scenario takes run and the files to run, for example: npx localgate scenario run demo.yaml (not "play")');
        expect(await refused(['scenario', 'run'])).to.equal('localgate: scenario run needs at least one file, for example: npx localgate scenario run demo.yaml');
        expect(await refused(['scenario', 'run', 'x.yaml', '--reporter', 'html'])).to.equal('localgate: --reporter must be tap or junit, not "html"');
        expect(await refused(['scenario', 'run', 'x.yaml', '--out', 'x.xml'])).to.equal('localgate: --out names where the --reporter writes its report: give --reporter tap or junit with it');
        expect(await refused(['scenario', 'run', 'x.yaml', '--url', 'nowhere'])).to.equal('localgate: --url must be the http: or https: URL of a localgate server, such as http://127.0.0.1:3000, not "nowhere"');
        expect(await refused(['scenario', 'run', 'x.yaml', '--url', 'ftp://host'])).to.equal('localgate: --url must be the http: or https: URL of a localgate server, such as http://127.0.0.1:3000, not "ftp://host"');
    });

    it('writes reports that hold any text', () => {

        const run = { name: 'a <b> & "c" # d', instance: null, ok: true, steps: [{ step: 1, kind: 'say' as const, say: 'x\u0001\ty', line: 'x', ok: true, ms: 1 }], failure: null, message: null, captures: {}, events: [] };
        expect(junitReport([{ file: 'f', run, error: null }])).to.contain('<testsuite name="a &lt;b&gt; &amp; &quot;c&quot; # d" file="f" tests="1" failures="0" errors="0" time="0.001">');
        expect(junitReport([{ file: 'f', run, error: null }])).to.contain('<testcase name="1 x\ty"');
        expect(tapReport([{ file: 'f', run, error: null }])).to.contain('ok 1 - a <b> & "c" \\# d');
        const failing = { ...run, ok: false, steps: [{ ...run.steps[0] as RunResult['steps'][number], ok: false }], message: 'Step 1 failed\n  $.a: expected 1, got 2', failure: { step: 1, say: null, line: 'x', reason: 'r', differences: [] } };
        expect(tapReport([{ file: 'f', run: failing, error: null }])).to.contain('    not ok 1 - x\u0001\ty\nnot ok 1 - a <b> & "c" \\# d\n  ---\n  file: "f"\n  message: |\n    Step 1 failed\n      $.a: expected 1, got 2\n  ...\n');
        expect(tapReport([{ file: 'g', run: null, error: 'gone' }])).to.equal('TAP version 13\n1..1\nnot ok 1 - g\n  ---\n  file: "g"\n  message: |\n    gone\n  ...\n');
        expect(stepLines({ file: 'f', run: { ...run, steps: [{ ...run.steps[0] as RunResult['steps'][number], say: 'x' }] }, error: null })).to.equal(['✓ a <b> & "c" # d (f)', '    1 ✓ x']);
    });
});
