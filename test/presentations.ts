import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';
import type { Server, ServerInjectResponse } from '@hapi/hapi';

import { createServer } from '../lib';
import { readScenario, scenarioRules } from '../lib/scenarios';
import { maxBackSteps, maxPresentations, maxShownChars, Presentations, type PresentationView } from '../lib/scenarios/present';
import { adminBearer, bearer, body, tempDir, testServer } from './helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


const world = { clock: '2030-01-01T00:00:00Z', pay: true, ids: 'sequential' };


describe('Presentations', () => {

    let server: Server;

    before(async () => {

        server = await testServer({ memoryPay: true });
    });

    after(() => server.stop());

    const call = (method: string, url: string, payload?: object, on = server): Promise<ServerInjectResponse> => {

        return on.inject({ method, url, headers: adminBearer(on), ...(payload === undefined ? {} : { payload }) });
    };

    const present = async (payload: object, on = server): Promise<PresentationView> => {

        const res = await call('POST', '/_presentations', payload, on);
        expect(res.statusCode, res.payload).to.equal(201);
        return body<PresentationView>(res);
    };

    const step = async (id: string, action: 'next' | 'back' | 'restart', status = 200): Promise<PresentationView> => {

        const res = await call('POST', `/_presentations/${id}/${action}`);
        expect(res.statusCode, res.payload).to.equal(status);
        return body<PresentationView>(res);
    };

    const end = async (id: string): Promise<void> => {

        expect((await call('DELETE', `/_presentations/${id}`)).statusCode).to.equal(204);
    };

    const wallet = async (instance: string, who = 'alice') => {

        const res = await server.inject({ method: 'GET', url: `/i/${instance}/v1/pay/wallet`, headers: bearer(server, who) });
        return body<{ balances: { asset: string; amount: number; pending_in: number; pending_out: number }[] }>(res).balances;
    };

    describe('GET /_scenarios', () => {

        it('lists the built-ins, the examples and the files of DATA_DIR/scenarios, each checked as a run reads it', async () => {

            const dir = tempDir();
            Fs.mkdirSync(Path.join(dir, 'scenarios'));
            Fs.writeFileSync(Path.join(dir, 'scenarios', 'mine.yaml'), 'name: Mine\ndescription: my own\nsteps: [{ say: hello }]\n');
            Fs.writeFileSync(Path.join(dir, 'scenarios', 'broken.json'), '{"name": "no steps"}');
            Fs.writeFileSync(Path.join(dir, 'scenarios', 'huge.yaml'), `name: huge\n# ${'x'.repeat(2 ** 20)}\nsteps: [{ say: hi }]\n`);
            Fs.writeFileSync(Path.join(dir, 'scenarios', 'notes.txt'), 'not a scenario');
            const own = await createServer({ storage: 'memory', dataDir: dir, port: 0, logLevel: 'silent', keepSecret: false, validateResponses: true });
            try {
                expect((await own.inject({ method: 'GET', url: '/_scenarios', headers: bearer(own, 'alice') })).statusCode).to.equal(403);
                const res = await call('GET', '/_scenarios', undefined, own);
                expect(res.statusCode).to.equal(200);
                const { data } = body<{ data: { id: string; source: string; file: string; name: string | null; steps: number | null; error: string | null; description: string | null }[] }>(res);
                const ids = data.map((listed) => listed.id);
                expect(ids).to.include(['builtin/pay.transaction.completed.yaml', 'example/demo.yaml', 'example/bank-transfer.yaml', 'data/mine.yaml', 'data/broken.json', 'data/huge.yaml']);
                expect(ids).to.not.include('data/notes.txt');
                expect(data.filter((listed) => listed.source === 'builtin')).to.have.length(12);
                expect(data.find((listed) => listed.id === 'example/demo.yaml')).to.include({ name: 'The README\'s demo in five minutes, as a story', steps: 14, error: null });
                expect(data.find((listed) => listed.id === 'data/mine.yaml')).to.equal({ id: 'data/mine.yaml', source: 'data', file: 'mine.yaml', name: 'Mine', description: 'my own', steps: 1, error: null });
                expect(data.find((listed) => listed.id === 'data/broken.json')).to.include({ name: null, steps: null });
                expect(data.find((listed) => listed.id === 'data/broken.json')?.error).to.contain('steps');
                expect(data.find((listed) => listed.id === 'data/huge.yaml')?.error).to.equal('The file is larger than 1 MiB, the most a scenario may hold');

                const mine = await present({ scenario: 'data/mine.yaml' }, own);
                expect(mine).to.include({ name: 'Mine', file: 'data/mine.yaml', description: 'my own', position: 0 });
                expect((await call('DELETE', `/_presentations/${mine.id}`, undefined, own)).statusCode).to.equal(204);
            }
            finally {
                await own.stop();
                Fs.rmSync(dir, { recursive: true, force: true });
            }
        });

        it('the default folder of a checkout is the built-ins\' own, listed once; a DATA_DIR without scenarios lists none of its own', async () => {

            const { data } = body<{ data: { id: string }[] }>(await call('GET', '/_scenarios'));
            expect(data.filter((listed) => listed.id.startsWith('data/'))).to.equal([]);

            const dir = tempDir();
            const bare = await createServer({ storage: 'memory', dataDir: dir, port: 0, logLevel: 'silent', keepSecret: false });
            try {
                const listed = body<{ data: { id: string }[]; total: number }>(await call('GET', '/_scenarios', undefined, bare));
                expect(listed.data.filter((entry) => entry.id.startsWith('data/'))).to.equal([]);
                expect(listed.total).to.equal(listed.data.length);
                const res = await call('POST', '/_presentations', { scenario: 'data/mine.yaml' }, bare);
                expect(res.statusCode).to.equal(404);
                expect(body(res)).to.include({ code: 'scenario_not_found' });
            }
            finally {
                await bare.stop();
                Fs.rmSync(dir, { recursive: true, force: true });
            }
        });
    });

    describe('POST /_presentations', () => {

        it('presents the README\'s demo step by step, each request as its actor with its answer, and the webhook in the inbox', async () => {

            const shown = await present({ scenario: 'example/demo.yaml' });
            expect(shown).to.include({ name: 'The README\'s demo in five minutes, as a story', file: 'example/demo.yaml', position: 0, ended: false, back: false, message: null, played: [], deliveries: [] });
            expect(shown.steps).to.have.length(14);
            expect(shown.steps[0]).to.equal({ step: 1, kind: 'request', say: 'Trust signals. The flagship phone of Quayside Gadget Outlet has two scam reports', line: 'GET /v1/commerce/products/9543bdcf-7b7f-59a3-a50a-48bbf6112be1' });
            expect(shown.steps[10]).to.equal({ step: 11, kind: 'clock', say: 'Three days later the transfer has settled', line: 'clock +3d' });
            expect(shown.actors).to.equal([{ name: 'alice', sub: 'alice', admin: false }, { name: 'bob', sub: 'bob', admin: false }]);
            const made = body<{ clock: string; pay: boolean }>(await call('GET', `/_instances/${shown.instance}`));
            expect(made).to.include({ clock: '2030-01-01T00:00:00.000Z', pay: true });

            let now = shown;
            for (let i = 0; i < 14; ++i) {
                now = await step(shown.id, 'next');
                expect(now.position).to.equal(i + 1);
                expect(now.played.at(-1)?.ok, now.message ?? '').to.be.true();
            }

            expect(now).to.include({ ended: true, message: null, back: true });
            const report = now.played[1];
            expect(report?.shown).to.equal({
                request: { method: 'POST', path: '/v1/commerce/scam-reports', as: 'alice', body: { target_type: 'product', target_id: '9543bdcf-7b7f-59a3-a50a-48bbf6112be1', reason: 'Paid and nothing came' } },
                answer: { status: 201, body: report?.shown?.answer.body }
            });
            expect(report?.shown?.answer.body).to.include({ target_id: '9543bdcf-7b7f-59a3-a50a-48bbf6112be1', reporter_id: 'alice' });
            expect(now.played[0]?.shown?.request).to.equal({ method: 'GET', path: '/v1/commerce/products/9543bdcf-7b7f-59a3-a50a-48bbf6112be1', as: null, body: null });
            expect(now.played[10]).to.include({ kind: 'clock', shown: null, line: 'clock +3d: pay.transaction.completed 1, webhook attempts 1' });
            expect(now.captures).to.include({ booking: '00000000-0000-4000-8000-000000000002' });
            expect(now.deliveries.some((delivery) => delivery.type === 'pay.transaction.completed' && delivery.verified && delivery.status === 204)).to.be.true();
            // A token never leaves: the actors are named, not credentialed.
            expect(JSON.stringify(now)).to.not.contain('Bearer');
            expect(JSON.stringify(now)).to.not.contain('authorization');

            const over = await call('POST', `/_presentations/${shown.id}/next`);
            expect(over.statusCode).to.equal(409);
            expect(body(over)).to.include({ code: 'presentation_ended', message: 'The presentation has ended: go back, or from the start' });
            expect((await call('GET', `/_presentations/${shown.id}`)).statusCode).to.equal(200);
            await end(shown.id);
            expect((await call('GET', `/_instances/${shown.instance}`)).statusCode).to.equal(404);
            expect((await call('GET', `/_presentations/${shown.id}`)).statusCode).to.equal(404);
        });

        it('goes back a step and from the start, putting the world, captures and inbox back as they were', async () => {

            const shown = await present({ scenario: 'example/demo.yaml' });
            const none = await call('POST', `/_presentations/${shown.id}/back`);
            expect(none.statusCode).to.equal(409);
            expect(body(none)).to.include({ code: 'presentation_cannot_go_back', message: 'The presentation is at its start: there is no step to go back from' });

            for (let i = 0; i < 11; ++i) {
                await step(shown.id, 'next');
            }

            expect(await wallet(shown.instance)).to.equal([{ asset: 'EUR', amount: 2500, pending_in: 0, pending_out: 0 }]);
            let now = await step(shown.id, 'back');
            expect(now).to.include({ position: 10, ended: false, back: true });
            expect(now.played).to.have.length(10);
            expect(await wallet(shown.instance)).to.equal([{ asset: 'EUR', amount: 0, pending_in: 2500, pending_out: 0 }]);
            expect(body<{ clock: string }>(await call('GET', `/_instances/${shown.instance}`)).clock).to.equal('2030-01-01T00:00:00.000Z');
            // Played again, the same step applies the same transition.
            now = await step(shown.id, 'next');
            expect(now.played.at(-1)).to.include({ ok: true, line: 'clock +3d: pay.transaction.completed 1, webhook attempts 1' });

            now = await step(shown.id, 'restart');
            expect(now).to.include({ position: 0, ended: false, back: false, captures: {}, deliveries: [], played: [] });
            expect(await wallet(shown.instance)).to.equal([]);
            const events = body<{ data: unknown[] }>(await call('GET', `/_instances/${shown.instance}/events`));
            expect(events.data).to.equal([]);
            for (let i = 0; i < 14; ++i) {
                now = await step(shown.id, 'next');
            }

            // Alice's wallet, read above, took an id of the instance's sequence: the booking after it takes the next.
            expect(now).to.include({ ended: true, message: null });
            expect(now.captures).to.include({ booking: '00000000-0000-4000-8000-000000000003' });
            expect(now.deliveries.map((delivery) => [delivery.seq, delivery.type])).to.equal([[1, 'pay.transaction.created'], [2, 'pay.transaction.completed']]);
            await end(shown.id);
        });

        it('a dropped file, YAML or JSON, and a step that fails ends it with its reason', async () => {

            const yaml = [
                'name: Wrong',
                `instance: ${JSON.stringify(world)}`,
                'actors: { alice: {} }',
                'steps:',
                '  - say: Alice deposits by bank transfer',
                '    as: alice',
                '    request: { method: POST, path: /v1/pay/gateway/deposit, headers: { Idempotency-Key: k-1 }, body: { provider_id: bank-transfer, asset: EUR, amount: 2500 } }',
                '    expect: { status: 201, body: { status: completed } }',
                '  - say: never played'
            ].join('\n');
            const wrong = await present({ text: yaml, file: 'wrong.yaml' });
            expect(wrong).to.include({ file: 'wrong.yaml', description: null });
            const failed = await step(wrong.id, 'next');
            expect(failed).to.include({ ended: true, position: 1 });
            expect(failed.played[0]).to.include({ ok: false, reason: 'the answer\'s body is not what was expected (1 difference)', differences: [{ path: '$.status', expected: 'completed', got: 'pending' }] });
            expect(String(failed.message)).to.startWith('Step 1 (Alice deposits by bank transfer) failed');
            const over = await call('POST', `/_presentations/${wrong.id}/next`);
            expect(body(over)).to.include({ code: 'presentation_ended', message: 'The presentation has ended at step 1, which failed: go back, or from the start' });
            // Back from a failure: the world as it was, to try again.
            expect(await step(wrong.id, 'back')).to.include({ position: 0, ended: false });
            await end(wrong.id);

            const json = await present({ text: JSON.stringify({ name: 'As JSON', steps: [{ say: 'hi' }] }), file: 'x.json' });
            expect(json).to.include({ name: 'As JSON', file: 'x.json' });
            expect((await step(json.id, 'next')).played[0]).to.include({ kind: 'say', line: 'hi', shown: null, reason: null });
            await end(json.id);

            const unnamed = await present({ text: 'name: Unnamed\nsteps: [{ say: hi }]' });
            expect(unnamed.file).to.equal('scenario.yaml');
            await end(unnamed.id);
        });

        it('refuses what cannot be presented, in one line each', async () => {

            const refused = async (payload: object, status: number, code: string): Promise<string> => {

                const res = await call('POST', '/_presentations', payload);
                expect(res.statusCode, res.payload).to.equal(status);
                expect(body(res).code).to.equal(code);
                return String(body(res).message);
            };

            expect(await refused({ text: 'name: x\nsteps: [{ sing: hi }]' }, 400, 'invalid_scenario')).to.contain('is of no step kind it knows (sing)');
            expect(await refused({ scenario: 'example/none.yaml' }, 404, 'scenario_not_found')).to.equal('No scenario example/none.yaml: GET /_scenarios lists the ids there are');
            await refused({ scenario: 'example/../../package.json' }, 404, 'scenario_not_found');
            await refused({ scenario: 'elsewhere/demo.yaml' }, 404, 'scenario_not_found');
            await refused({ scenario: 'example' }, 404, 'scenario_not_found');
            await refused({ scenario: 'example/demo.yaml', text: 'name: x' }, 400, 'validation_failed');
            await refused({}, 400, 'validation_failed');
            await refused({ text: 'name: x\ninstance: { pay: 7 }\nsteps: [{ say: hi }]' }, 400, 'invalid_scenario');
            const live = body<{ total: number }>(await call('GET', '/_instances')).total;
            await refused({ text: 'name: x\ninstance: { fixture: { localgate: { format: 99 } } }\nsteps: [{ say: hi }]' }, 400, 'invalid_fixture');
            expect(body<{ total: number }>(await call('GET', '/_instances')).total).to.equal(live);
            expect((await server.inject({ method: 'POST', url: '/_presentations', headers: bearer(server, 'alice'), payload: { scenario: 'example/demo.yaml' } })).statusCode).to.equal(403);
            for (const path of ['/_presentations/nope', '/_presentations/nope/next']) {
                const res = await call(path.endsWith('next') ? 'POST' : 'GET', path);
                expect(res.statusCode).to.equal(404);
                expect(body(res)).to.include({ code: 'presentation_not_found' });
            }

            expect((await call('DELETE', '/_presentations/nope')).statusCode).to.equal(404);
        });
    });

    describe('the world a step leaves', () => {

        it('fault rules go back with the steps that set them', async () => {

            const shown = await present({ text: JSON.stringify({
                name: 'Faults', instance: world, actors: { alice: {} }, steps: [
                    { fault: { set: [{ path: '/v1/pay/wallet', status: 503 }], seed: 7 } },
                    { as: 'alice', request: { method: 'GET', path: '/v1/pay/wallet' }, expect: { status: 503 } },
                    { fault: { clear: true } },
                    { as: 'alice', request: { method: 'GET', path: '/v1/pay/wallet' }, expect: { status: 200 } }
                ]
            }), file: 'faults.json' });
            const rules = async () => body<{ rules: { path: string }[]; seed: number }>(await call('GET', `/_instances/${shown.instance}/faults`));
            for (let i = 0; i < 4; ++i) {
                expect((await step(shown.id, 'next')).played.at(-1)?.ok).to.be.true();
            }

            expect((await rules()).rules).to.equal([]);
            await step(shown.id, 'back');
            // Before step 4: the rules step 3 cleared.
            expect((await rules()).rules).to.equal([]);
            await step(shown.id, 'back');
            // Before step 3: the rule step 1 set, with its seed.
            expect((await rules()).rules.map((rule) => rule.path)).to.equal(['/v1/pay/wallet']);
            expect((await rules()).seed).to.equal(7);
            await step(shown.id, 'back');
            await step(shown.id, 'back');
            // Before step 1: none.
            expect((await rules()).rules).to.equal([]);
            await end(shown.id);
        });

        it(`keeps the state before the last ${maxBackSteps} steps, and the start`, async () => {

            const steps = Array.from({ length: maxBackSteps + 2 }, (_, i) => ({ say: `slide ${i + 1}` }));
            const shown = await present({ text: JSON.stringify({ name: 'Long', steps }), file: 'long.json' });
            for (let i = 0; i < steps.length; ++i) {
                await step(shown.id, 'next');
            }

            let now = shown;
            for (let i = 0; i < maxBackSteps; ++i) {
                now = await step(shown.id, 'back');
            }

            expect(now).to.include({ position: 2, back: false });
            const refused = await call('POST', `/_presentations/${shown.id}/back`);
            expect(body(refused)).to.include({ code: 'presentation_cannot_go_back', message: `Step 2 can no longer be gone back from (a presentation keeps the state before its last ${maxBackSteps} steps): start again from the start` });
            expect(await step(shown.id, 'restart')).to.include({ position: 0 });
            await end(shown.id);
        });

        it('a body too long to show is cut, and a request to the receiver that is no event is shown as such', async () => {

            const long = 'x'.repeat(maxShownChars);
            const shown = await present({ text: JSON.stringify({
                name: 'Long body', instance: world, actors: { alice: {} }, webhooks: [{ types: ['pay.*'] }], steps: [
                    { as: 'alice', request: { method: 'POST', path: '/v1/commerce/inquiries', body: { message: long } } }
                ]
            }), file: 'long.json' });
            const played = (await step(shown.id, 'next')).played[0];
            expect(played?.shown?.request.body).to.be.a.string();
            expect(String(played?.shown?.request.body)).to.endWith(` … (cut: ${JSON.stringify({ message: long }).length} characters in all)`);
            expect(String(played?.shown?.request.body)).to.have.length(maxShownChars + ` … (cut: ${JSON.stringify({ message: long }).length} characters in all)`.length);
            expect(played?.shown?.answer.status).to.equal(400);

            const endpoints = body<{ endpoints: { url: string }[] }>(await call('GET', `/_instances/${shown.instance}/webhooks`)).endpoints;
            await fetch(String(endpoints[0]?.url), { method: 'POST', body: 'hello' });
            const now = body<PresentationView>(await call('GET', `/_presentations/${shown.id}`));
            expect(now.deliveries).to.equal([{ seq: 1, type: null, event_id: null, verified: false, failure: now.deliveries[0]?.failure ?? null, status: now.deliveries[0]?.status ?? 0 }]);
            // Ended and kept: the instance stays, and the endpoints pointing at the receiver are gone.
            expect((await call('DELETE', `/_presentations/${shown.id}?keep=true`)).statusCode).to.equal(204);
            expect(body<{ endpoints: unknown[] }>(await call('GET', `/_instances/${shown.instance}/webhooks`)).endpoints).to.equal([]);
            expect((await call('DELETE', `/_instances/${shown.instance}`)).statusCode).to.equal(204);
        });

        it('an instance deleted under it: its steps say so, and it still ends', async () => {

            const shown = await present({ scenario: 'example/demo.yaml' });
            await step(shown.id, 'next');
            const unknown = await call('DELETE', `/_instances/${shown.instance}/snapshots/00000000-0000-4000-8000-00000000abcd`);
            expect(unknown.statusCode).to.equal(404);
            expect(body(unknown)).to.include({ code: 'snapshot_not_found', message: 'No snapshot 00000000-0000-4000-8000-00000000abcd of this instance: it was deleted, or taken of another' });
            expect((await call('DELETE', `/_instances/${shown.instance}`)).statusCode).to.equal(204);
            const gone = await call('POST', `/_presentations/${shown.id}/back`);
            expect(gone.statusCode).to.equal(404);
            expect(body(gone)).to.include({ code: 'instance_not_found' });
            expect(String(body(gone).message)).to.startWith(`The presentation's instance ${shown.instance}: `);
            await end(shown.id);
        });
    });

    describe('bounds', () => {

        it(`at most ${maxPresentations} at once, one step at a time each`, async () => {

            const slow = JSON.stringify({ name: 'slow', steps: [{ fault: { set: [{ path: '/v1/weather/status', latency_ms: 200 }] } }, { request: { method: 'GET', path: '/v1/weather/status' } }] });
            // Asked for all at once, one more than the most: the ones being made count.
            const asked = await Promise.all(Array.from({ length: maxPresentations + 1 }, () => call('POST', '/_presentations', { text: slow, file: 'slow.json' })));
            expect(asked.map((res) => res.statusCode).sort()).to.equal([...Array.from({ length: maxPresentations }, () => 201), 429]);
            const refused = asked.find((res) => res.statusCode === 429) as ServerInjectResponse;
            expect(body(refused)).to.include({ code: 'presentation_limit_reached' });
            const open = asked.filter((res) => res.statusCode === 201).map((res) => body<PresentationView>(res));

            const first = String(open[0]?.id);
            await step(first, 'next');
            const both = await Promise.all([call('POST', `/_presentations/${first}/next`), call('POST', `/_presentations/${first}/next`)]);
            expect(both.map((res) => res.statusCode).sort()).to.equal([200, 409]);
            expect(body(both.find((res) => res.statusCode === 409) as ServerInjectResponse)).to.include({ code: 'presentation_busy' });
            for (const presentation of open) {
                await end(presentation.id);
            }
        });

        it('an idle one ends with its instance, and all end as the server stops', async () => {

            const presentations = new Presentations(server, 60_000);
            const scenario = readScenario({ name: 'idle', steps: [{ say: 'hi' }] }, scenarioRules(server));
            const idle = await presentations.start(scenario, null);
            await presentations.expire(Date.now() + 30_000);
            expect(presentations.get(idle.id)).to.equal(idle);
            await presentations.expire(Date.now() + 60_000);
            expect(() => presentations.get(idle.id)).to.throw('No presentation ' + idle.id + ' is open: it ended, went idle for too long, or the server restarted');
            expect((await call('GET', `/_instances/${idle.instance}`)).statusCode).to.equal(404);

            // The sweep runs on its own too, as often as the idle time (at most a minute).
            const swept = new Presentations(server, 50);
            const soon = await swept.start(scenario, null);
            await new Promise((resolve) => setTimeout(resolve, 200));
            expect(() => swept.get(soon.id)).to.throw();
            await swept.closeAll();

            const kept = await presentations.start(scenario, null);
            await presentations.closeAll();
            expect(() => presentations.get(kept.id)).to.throw();
            expect((await call('DELETE', `/_instances/${kept.instance}`)).statusCode).to.equal(204);
            await new Presentations(server, 60_000).closeAll();
        });

        it('a start that cannot be kept, or webhooks the data set refuses, leave no instance behind', async () => {

            for (const [options, status, code] of [[{ maxSnapshotMib: 0 }, 409, 'snapshot_limit_reached'], [{ webhookHosts: ['hooks.example'] }, 422, 'scenario_webhooks_refused']] as [object, number, string][]) {
                const closed = await testServer({ memoryPay: true, ...options });
                try {
                    const res = await call('POST', '/_presentations', { scenario: 'example/demo.yaml' }, closed);
                    expect(res.statusCode, res.payload).to.equal(status);
                    expect(body(res).code).to.equal(code);
                    expect(body<{ total: number }>(await call('GET', '/_instances', undefined, closed)).total).to.equal(0);
                }
                finally {
                    await closed.stop();
                }
            }
        });
    });
});
