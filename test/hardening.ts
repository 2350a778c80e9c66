import Fs from 'node:fs';
import Path from 'node:path';
import Stream from 'node:stream';

import Code from '@hapi/code';
import type { Server } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { requireAdmin } from '../lib/auth';
import { main, type Io } from '../lib/cli';
import { maxIdCounter } from '../lib/record-context';
import { RequestFeed } from '../lib/console/feed';
import { FaultSet } from '../lib/data-set/fault-rules';
import { Journal } from '../lib/data-set/journal';
import { maxJsonDepth, nestsDeeperThan } from '../lib/nesting';
import { failureOf, safely } from '../lib/safe-listener';
import { createTestKit, type TestKit } from '../lib/testing';
import { expectError } from './helpers/errors';
import { adminBearer, bearer, body, tempDir, testServer, type List } from './helpers/server';
import { until } from './helpers/until';
import { bakery } from './helpers/world-records';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


// About 10 KB: far under every size limit, far over any depth a real body has.
const deepBody = '['.repeat(5000) + ']'.repeat(5000);

const json = { 'content-type': 'application/json' };

const tooDeep = `The body nests arrays and objects deeper than ${maxJsonDepth} levels, the most the server accepts`;


// An object nested `depth` levels: {"a":{"a":...{}}}.
function nested(depth: number): string {

    return '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
}


/** A server whose log lines are kept, parsed, in `lines`. */
async function loggedServer(options: Parameters<typeof testServer>[0] = {}): Promise<{ server: Server; lines: Record<string, unknown>[] }> {

    const lines: Record<string, unknown>[] = [];
    const logStream = new Stream.Writable({
        write(chunk: Buffer, encoding, done) {

            lines.push(JSON.parse(chunk.toString()));
            done();
        }
    });

    return { server: await testServer({ logLevel: 'info', logStream, ...options }), lines };
}


// The log lines a guarded listener wrote on failing.
function failures(lines: Record<string, unknown>[]): Record<string, unknown>[] {

    return lines.filter((line) => (line.tags as string[] | undefined)?.includes('listener'));
}


describe('nesting depth', () => {

    it('measures arrays and objects alike, and stops at the limit', () => {

        expect(nestsDeeperThan(null, 0)).to.be.false();
        expect(nestsDeeperThan('text', 0)).to.be.false();
        expect(nestsDeeperThan({}, 0)).to.be.true();
        expect(nestsDeeperThan(JSON.parse(nested(64)), 64)).to.be.false();
        expect(nestsDeeperThan(JSON.parse(nested(65)), 64)).to.be.true();
        expect(nestsDeeperThan([1, { a: [2, 'b', null] }], 3)).to.be.false();
        expect(nestsDeeperThan([1, { a: [2, 'b', [null]] }], 3)).to.be.true();
        expect(nestsDeeperThan(JSON.parse(deepBody), 64)).to.be.true();
    });

    it('walks a wide body whatever its width, and a deep one without running out of stack', { timeout: 20_000 }, () => {

        const wide = Array.from({ length: 20_000 }, (_, i) => ({ i, tags: [String(i)] }));
        expect(nestsDeeperThan(wide, 3)).to.be.false();
        expect(nestsDeeperThan(wide, 2)).to.be.true();
        expect(nestsDeeperThan(JSON.parse('['.repeat(1_000_000) + ']'.repeat(1_000_000)), 1_000_000)).to.be.false();
    });
});


describe('a body nested too deep', () => {

    let server: Server;
    let kit: TestKit;

    before(async () => {

        server = await testServer({ memoryPay: true });
        kit = await createTestKit({ validateResponses: true });
    });

    after(async () => {

        await server.stop();
        await kit.close();
    });

    it('is refused with a 400 and leaves the server answering', async () => {

        const res = await server.inject({ method: 'POST', url: '/v1/commerce/products', headers: { ...bearer(server, 'ann'), ...json }, payload: deepBody });
        expect(expectError(res, 400, 'body_too_deep').message).to.equal(tooDeep);
        expect((await server.inject('/health')).statusCode).to.equal(200);
    });

    it('is refused on every route that takes a body, user and admin, and the server goes on', async () => {

        // hapi parses a body on every method but GET (and HEAD, which GET routes answer).
        const routes = server.table().filter((route) => route.method !== 'get');
        const kinds = { admin: 0, user: 0 };
        for (const route of routes) {
            // A route that answers admins only runs requireAdmin after authentication; every other takes a user token.
            const admin = (route.settings.ext as { onPostAuth?: { method: unknown[] }[] }).onPostAuth?.some((step) => step.method.includes(requireAdmin)) ?? false;
            ++kinds[admin ? 'admin' : 'user'];
            const res = await server.inject({
                method: route.method,
                url: route.path.replace(/\{(\w+)\*?\}/g, '00000000-0000-4000-8000-000000000001'),
                headers: { ...(admin ? adminBearer(server) : bearer(server, 'ann')), ...json },
                payload: deepBody
            });
            expect(expectError(res, 400, 'body_too_deep').message, `${route.method} ${route.path}`).to.equal(tooDeep);
        }

        expect(kinds).to.equal({ admin: 47, user: 9 });

        expect((await server.inject('/health')).statusCode).to.equal(200);
        const product = { name: 'Loaf', price: 2, currency: 'USD', business_id: bakery };
        const made = await server.inject({ method: 'POST', url: '/v1/commerce/products', headers: bearer(server, 'ann'), payload: product });
        expect(made.statusCode, made.payload).to.equal(201);
    });

    it('takes a body nested as deep as the limit, and refuses one a level deeper', async () => {

        const headers = { ...bearer(server, 'ann'), ...json };
        const deepest = await server.inject({ method: 'POST', url: '/v1/commerce/products', headers, payload: `{"name":${nested(63)}}` });
        expect(expectError(deepest, 400, 'validation_failed', 'name').message).to.equal('Invalid payload: name must be a string; price is required; currency is required; business_id is required');
        expectError(await server.inject({ method: 'POST', url: '/v1/commerce/products', headers, payload: `{"name":${nested(64)}}` }), 400, 'body_too_deep');
    });

    it('is journaled as refused, without its body', async () => {

        const t = await kit.instance({ seed: 'none' });
        const sent = await t.inject({ method: 'POST', url: '/v1/logistics/bookings', headers: { ...t.auth('ann'), ...json }, payload: deepBody });
        expectError(sent, 400, 'body_too_deep');
        const entries = body<List<{ status: number; code: string; body: unknown; body_truncated: boolean }>>(await kit.server.inject({ url: `/_instances/${t.id}/requests`, headers: adminBearer(kit.server) }));
        expect(entries.data.map(({ status, code, body: kept, body_truncated: cut }) => ({ status, code, kept, cut }))).to.equal([{ status: 400, code: 'body_too_deep', kept: null, cut: false }]);
        await t.close();
    });

    it('refuses an equalToJson pattern nested 30,000 levels, as JSON or as its text', async () => {

        const headers = { ...adminBearer(server), ...json };
        const deepJson = '['.repeat(30_000) + ']'.repeat(30_000);
        const asJson = await server.inject({ method: 'POST', url: '/_requests/find', headers, payload: `{"bodyPatterns":[{"equalToJson":${deepJson}}]}` });
        expectError(asJson, 400, 'body_too_deep');
        const asText = await server.inject({ method: 'POST', url: '/_requests/count', headers, payload: { bodyPatterns: [{ equalToJson: deepJson }] } });
        expect(expectError(asText, 400, 'validation_failed', 'bodyPatterns.0.equalToJson').message).to.equal(`Invalid payload: bodyPatterns[0].equalToJson nests arrays and objects deeper than ${maxJsonDepth} levels, the most the server accepts`);
        expect(body(await server.inject({ method: 'POST', url: '/_requests/count', headers, payload: { bodyPatterns: [{ equalToJson: nested(64) }] } }))).to.equal({ count: 0 });
    });

    it('refuses a fixture nested too deep as an instance is made', async () => {

        const fixture = JSON.parse(nested(maxJsonDepth)) as object;
        const res = await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server), payload: { fixture } });
        expectError(res, 400, 'body_too_deep');
    });
});


describe('a seed file nested too deep', () => {

    function capture(): Io & { stdout: string[]; stderr: string[] } {

        const stdout: string[] = [];
        const stderr: string[] = [];
        return { stdout, stderr, out: (line) => stdout.push(line), err: (line) => stderr.push(line) };
    }

    const deepFixture = (dir: string): string => {

        const file = Path.join(dir, 'deep.json');
        Fs.writeFileSync(file, `{"commerce":{"businesses":[${nested(maxJsonDepth)}]}}`);
        return file;
    };

    it('stops the seed command with one line and exit 1, before any database is written', async () => {

        const dir = tempDir();
        const data = Path.join(dir, 'data');
        const file = deepFixture(dir);
        const io = capture();
        expect(await main(['seed', '--file', file, '--data-dir', data], { LOG_LEVEL: 'silent' }, io)).to.equal(1);
        expect(io.stderr).to.equal([`localgate: Cannot read fixture ${file}: it nests arrays and objects deeper than ${maxJsonDepth} levels, the most the server accepts`]);
        expect(io.stdout).to.equal([]);
        expect(Fs.existsSync(data)).to.be.false();
    });

    it('stops a start with SEED or --seed, before any database is written', async () => {

        const dir = tempDir();
        const file = deepFixture(dir);
        for (const [args, env] of [[['--seed', file], {}], [[], { SEED: file }]] as [string[], Record<string, string>][]) {
            const data = Path.join(dir, `data-${args.length}`);
            const io = capture();
            expect(await main(['start', '--data-dir', data, '--port', '0', ...args], { LOG_LEVEL: 'silent', ...env }, io)).to.equal(1);
            expect(io.stderr).to.equal([`localgate: Cannot read fixture ${file}: it nests arrays and objects deeper than ${maxJsonDepth} levels, the most the server accepts`]);
            expect(Fs.readdirSync(data).filter((name) => name.endsWith('.db'))).to.equal([]);
        }
    });
});


describe('the id counter a fixture carries', () => {

    let kit: TestKit;

    before(async () => {

        kit = await createTestKit({ validateResponses: true });
    });

    after(() => kit.close());

    const header = (idCounter: number) => ({ format: 1, migrations: {}, instance: { clock: null, ids: 'sequential', id_counter: idCounter, pay: false } });
    const business = { id: 'b-pier', name: 'Pier Kiosk', category: 'Kiosk', city: 'Harbourside', phone: '+1 207 555 0199' };

    it('goes on to the last id there is, refuses the next, and exports a file that loads back', async () => {

        const t = await kit.instance({ fixture: { localgate: header(maxIdCounter - 1), commerce: { businesses: [business] } } });
        const add = () => t.inject({ method: 'POST', url: '/v1/commerce/products', headers: t.auth('ann'), payload: { name: 'Ice', price: 1, currency: 'USD', business_id: 'b-pier' } });
        const last = await add();
        expect(last.statusCode, last.payload).to.equal(201);
        expect(body(last).id).to.equal('00000000-0000-4000-8000-ffffffffffff');
        expect(expectError(await add(), 409, 'ids_exhausted').message).to.equal(`The sequential ids of this data set are used up: its id counter is at ${maxIdCounter}, the last id a UUID's final 12 hex digits hold`);

        const file = await t.export();
        expect((file.localgate as { instance: { id_counter: number } }).instance.id_counter).to.equal(maxIdCounter);
        const copy = await kit.instance({ fixture: file });
        expect(await copy.export()).to.equal(file);
        await copy.close();
        await t.close();
    });

    it('is refused past the last id, naming the field', async () => {

        const res = await kit.server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(kit.server), payload: { fixture: { localgate: header(maxIdCounter + 1) } } });
        expect(expectError(res, 400, 'invalid_fixture', 'fixture.localgate.instance.id_counter').message).to.equal(`request body fixture: localgate.instance.id_counter: instance.id_counter must be less than or equal to ${maxIdCounter} (an export opens with {"localgate": {"format": 1, "migrations": {...}}})`);
        const near = await kit.server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(kit.server), payload: { fixture: { localgate: header(2 ** 53 - 1) } } });
        expectError(near, 400, 'invalid_fixture', 'fixture.localgate.instance.id_counter');
    });
});


describe('a listener that fails', () => {

    it('logs a failure thrown or rejected under its task, never its message, and returns', async () => {

        const logged: { tags: string[]; task: string; type: string; at: string[] }[] = [];
        const log = (tags: string[], data: object) => logged.push({ tags, ...data as { task: string; type: string; at: string[] } });
        safely('thrown', log, () => {

            throw new SyntaxError('Unexpected token in "secret-value"');
        })();
        safely('not an error', log, () => {

            throw 'secret-value';
        })();
        const rejected = new Error('secret-value');
        delete rejected.stack;
        safely('rejected', log, () => Promise.reject(rejected))();
        safely('fine', log, () => Promise.resolve())();
        await new Promise((resolve) => setImmediate(resolve));

        expect(JSON.stringify(logged)).to.not.contain('secret-value');
        expect(logged.map((line) => ({ ...line, at: line.at.length }))).to.equal([
            { tags: ['error', 'listener'], task: 'thrown', type: 'SyntaxError', at: 5 },
            { tags: ['error', 'listener'], task: 'not an error', type: 'string', at: 0 },
            { tags: ['error', 'listener'], task: 'rejected', type: 'Error', at: 0 }
        ]);
        expect(failureOf(new Error('x')).at[0]!).to.startWith('at ');
    });

    it('in the journal leaves the request answered and the server up, and is logged with the request id', async () => {

        const { server, lines } = await loggedServer();
        const add = Journal.prototype.add;
        Journal.prototype.add = () => {

            throw new Error('journal broke');
        };

        try {
            const headers = bearer(server, 'ann');
            const res = await server.inject({ url: '/v1/commerce/products?limit=1', headers });
            expect(res.statusCode).to.equal(200);
            expect((await server.inject('/health')).statusCode).to.equal(200);
            const [line] = failures(lines);
            expect(line).to.include({ level: 50, tags: ['error', 'listener'] });
            expect(line!.data).to.include({ task: 'journal', type: 'Error' });
            expect((line!.req as { id: string }).id).to.equal(res.headers['x-request-id'] as string);
            expect(JSON.stringify(lines)).to.not.contain(headers.authorization.slice(7));
            expect(JSON.stringify(lines)).to.not.contain('journal broke');
        }
        finally {
            Journal.prototype.add = add;
            await server.stop();
        }
    });

    it('in the live log leaves the request answered and the server up, and is logged with the request id', async () => {

        const { server, lines } = await loggedServer();
        const feed = (server.plugins as unknown as Record<string, { feed: RequestFeed }>)['localgate-console']!.feed;
        const prototype = RequestFeed.prototype as unknown as { publish(): void };
        const publish = prototype.publish;
        prototype.publish = () => {

            throw new Error('feed broke');
        };

        const stream = feed.open();
        try {
            const res = await server.inject('/v1/weather/status');
            expect(res.statusCode).to.equal(200);
            const logged = failures(lines);
            expect(logged.map((line) => [(line.data as { task: string }).task, (line.req as { id: string }).id])).to.equal([['live log', res.headers['x-request-id'] as string]]);
            expect(JSON.stringify(lines)).to.not.contain('feed broke');
            expect((await server.inject('/health')).statusCode).to.equal(200);
        }
        finally {
            prototype.publish = publish;
            stream.destroy();
            await server.stop();
        }
    });

    it('in a fault rule leaves the request answered in the common shape and the server up, logged with the request id', async () => {

        const { server, lines } = await loggedServer();
        const decide = FaultSet.prototype.decide;
        FaultSet.prototype.decide = () => {

            throw new Error('fault broke');
        };

        try {
            const admin = adminBearer(server);
            const set = await server.inject({ method: 'PUT', url: '/_faults', headers: admin, payload: { seed: 1, rules: [{ path: '/v1/weather/status', status: 503 }] } });
            expect(set.statusCode, set.payload).to.equal(200);
            const res = await server.inject('/v1/weather/status');
            expectError(res, 500, 'internal_server_error');
            expect((await server.inject('/health')).statusCode).to.equal(200);
            const logged = lines.filter((line) => (line.req as { id?: string } | undefined)?.id === res.headers['x-request-id'] && line.err);
            expect(logged.map((line) => (line.err as { message: string }).message)).to.equal(['fault broke']);
        }
        finally {
            FaultSet.prototype.decide = decide;
            await server.stop();
        }
    });

    it('on an instance\'s deletion in the idle sweeper is logged, the data set is still freed, and the sweeps and the server go on', { timeout: 20_000 }, async () => {

        const { server, lines } = await loggedServer({ instanceIdleTtlMs: 1000 });
        const { instances } = server.app.localgate;
        let deleted = 0;
        instances.onDelete(() => {

            ++deleted;
            throw new Error('sweep broke');
        });

        const release = instances.pool.release.bind(instances.pool);
        let released = 0;
        instances.pool.release = async (key, pooled) => {

            await release(key, pooled);
            ++released;
        };

        try {
            const made = body<{ id: string }>(await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server), payload: { seed: 'none' } }));
            instances.find(made.id)!.lastUsed -= 1000;
            await until('the idle instance to be released', () => released === 1);
            expect(failures(lines).map((line) => line.data)).to.part.include([{ task: 'instance deleted', type: 'Error' }]);
            expect(failures(lines).length).to.equal(1);
            expect(deleted).to.equal(1);
            expect((await server.inject('/health')).statusCode).to.equal(200);

            const next = body<{ id: string }>(await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server), payload: { seed: 'none' } }));
            instances.find(next.id)!.lastUsed -= 1000;
            await until('the second idle instance to be released', () => released === 2);
            expect(failures(lines).length).to.equal(2);
            expect(deleted).to.equal(2);
        }
        finally {
            await server.stop();
        }
    });

    it('on an instance\'s deletion by DELETE /_instances/{id} is logged, and the instance is deleted and its data set closed', async () => {

        const { server, lines } = await loggedServer();
        const { instances } = server.app.localgate;
        instances.onDelete(() => {

            throw new Error('delete broke');
        });

        try {
            const made = body<{ id: string }>(await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server), payload: { seed: 'none', pay: true } }));
            const data = instances.find(made.id)!.data;
            let closed = 0;
            const close = data.close.bind(data);
            data.close = async () => {

                await close();
                ++closed;
            };

            const res = await server.inject({ method: 'DELETE', url: `/_instances/${made.id}`, headers: adminBearer(server) });
            expect(res.statusCode).to.equal(204);
            expect(closed).to.equal(1);
            expect(failures(lines).map((line) => line.data)).to.part.include([{ task: 'instance deleted', type: 'Error' }]);
            expect(failures(lines).length).to.equal(1);
            expectError(await server.inject({ url: `/i/${made.id}/v1/commerce/products`, headers: bearer(server, 'alice') }), 404, 'instance_not_found');
        }
        finally {
            await server.stop();
        }
    });

    it('in the clientError handler is logged, frees the socket, and the server goes on', async () => {

        const { server, lines } = await loggedServer();
        let destroyed = false;
        const socket = {
            writable: true,
            bytesWritten: 0,
            write() {

                throw new Error('socket broke');
            },
            destroy() {

                destroyed = true;
            }
        };

        try {
            server.listener.emit('clientError', Object.assign(new Error('Parse Error'), { code: 'HPE_INVALID_METHOD' }), socket);
            expect(destroyed).to.be.true();
            expect(failures(lines)).to.have.length(1);
            expect(failures(lines)[0]!.data).to.include({ task: 'clientError', type: 'Error' });
            expect((await server.inject('/health')).statusCode).to.equal(200);
        }
        finally {
            await server.stop();
        }
    });
});
