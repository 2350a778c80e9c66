import Fs from 'node:fs';
import Http from 'node:http';
import type { AddressInfo } from 'node:net';
import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';
import type { Server } from '@hapi/hapi';

import { main } from '../lib/cli';
import { bodyDifferences, drift, maxShownChars, type DriftReport, type ReplayTarget } from '../lib/drift/drift';
import { maxHarBodyBytes, maxHarBytes, maxHarEntries, readHar, readHarFile, type Exchange } from '../lib/drift/har';
import { driftMarkdown } from '../lib/drift/report';
import { injectTarget, parsedBody } from '../lib/drift/targets';
import { worldFromHar } from '../lib/drift/world';
import { startRecorder, type Har, type Recorder } from '../lib/record';
import { adminBearer, bearer, body, tempDir, testServer } from './helpers/server';
import { until } from './helpers/until';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


const business = { id: '5b1c0f5e-8e3f-4d8e-9a51-1f0a4b0c0001', name: 'Harbour Kettles', category: 'Kitchen', city: 'Leith', phone: '+44 131 000 0000' };
const vehicle = { id: '5b1c0f5e-8e3f-4d8e-9a51-1f0a4b0c0002', make: 'Volvo', model: 'V60', year: 2024, seats: 5, daily_rate: 80, currency: 'EUR' };
const pickup = { id: '5b1c0f5e-8e3f-4d8e-9a51-1f0a4b0c0003', name: 'Quay', address: '1 Quay St', city: 'Leith', latitude: 55.97, longitude: -3.17 };
const dropoff = { id: '5b1c0f5e-8e3f-4d8e-9a51-1f0a4b0c0004', name: 'Station', address: '2 Station Rd', city: 'Leith', latitude: 55.96, longitude: -3.18 };
const world = { seed: 'none', pay: true, fixture: { commerce: { businesses: [business] }, logistics: { vehicles: [vehicle], locations: [pickup, dropoff] } } };
const booking = { vehicle_id: vehicle.id, pickup_location_id: pickup.id, dropoff_location_id: dropoff.id, pickup_at: '2031-06-01T10:00:00Z', return_at: '2031-06-03T10:00:00Z' };


describe('record, fixture from-har and drift', () => {

    let server: Server;
    let dir: string;

    before(async () => {

        server = await testServer({ port: 0, host: '127.0.0.1', memoryPay: true });
        await server.start();
        dir = tempDir('localgate-drift-');
    });

    after(async () => {

        await server.stop();
        Fs.rmSync(dir, { recursive: true, force: true });
    });

    const capture = () => {

        const io = { stdout: [] as string[], stderr: [] as string[], out: (line: string) => io.stdout.push(line), err: (line: string) => io.stderr.push(line) };
        return io;
    };

    // The scripted session of the walk-through: through a recorder in front of an instance of the upstream.
    const session = async (upstream: string, out: string): Promise<{ tokens: string[] }> => {

        const recorder: Recorder = await startRecorder({ upstream: new URL(upstream), port: 0, out, log: () => undefined });
        const alice = bearer(server, 'alice');
        const bob = bearer(server, 'bob');
        const json = { 'content-type': 'application/json' };
        const send = async (method: string, path: string, headers: Record<string, string> = {}, payload?: object) => {

            const res = await fetch(`${recorder.url}${path}`, { method, headers: { ...headers, ...(payload ? json : {}) }, ...(payload ? { body: JSON.stringify(payload) } : {}) });
            return { status: res.status, body: await res.json() as Record<string, unknown> };
        };

        try {
            // The answers are the upstream's, whatever they are: only the product's id is needed further on.
            await send('GET', `/v1/commerce/businesses/${business.id}`);
            const made = await send('POST', '/v1/commerce/products', alice, { name: 'Kettle', price: 12.5, currency: 'EUR', business_id: business.id });
            expect(made.status).to.equal(201);
            await send('GET', `/v1/commerce/products/${String(made.body.id)}`);
            await send('GET', '/v1/commerce/products?limit=10');
            await send('GET', '/v1/logistics/vehicles');
            await send('GET', '/v1/logistics/locations');
            await send('POST', '/v1/logistics/bookings', alice, booking);
            await send('POST', '/v1/logistics/bookings', bob, booking);
            await send('GET', '/v1/logistics/bookings', alice);
            await send('POST', '/v1/pay/gateway/deposit', { ...alice, 'idempotency-key': 'dep-1' }, { provider_id: 'sandbox', asset: 'EUR', amount: 2500 });
            await send('GET', '/v1/pay/wallet', alice);
            await until('the recording written', () => (JSON.parse(Fs.readFileSync(out, 'utf8')) as Har).log.entries.length === 11);
        }
        finally {
            await recorder.close();
        }

        return { tokens: [alice.authorization.slice(7), bob.authorization.slice(7)] };
    };

    const instance = async (options: object = world): Promise<string> => {

        const res = await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server), payload: options });
        expect(res.statusCode, res.payload).to.equal(201);
        return body<{ id: string }>(res).id;
    };

    it('walks the guide: a recorded session becomes a fixture, and replays with no drift against an unchanged upstream', async () => {

        const upstream = await instance();
        const har = Path.join(dir, 'session.har');
        const { tokens } = await session(`${server.info.uri}/i/${upstream}/`, har);
        expect((JSON.parse(Fs.readFileSync(har, 'utf8')) as Har).log.entries.map((entry) => entry.response.status)).to.equal([200, 201, 200, 200, 200, 200, 201, 409, 200, 201, 200]);

        // The world it saw: the records of the upstream, with their ids, and those the session made.
        const io = capture();
        const fixtureFile = Path.join(dir, 'fixture.json');
        expect(await main(['fixture', 'from-har', har, '--out', fixtureFile], {}, io)).to.equal(0);
        expect(io.stdout).to.equal([`${fixtureFile}: 1 commerce.businesses, 1 commerce.products, 2 logistics.locations, 1 logistics.vehicles, 1 logistics.bookings, 1 pay.wallets, 1 pay.transactions`]);
        const fixture = JSON.parse(Fs.readFileSync(fixtureFile, 'utf8')) as { localgate: unknown; commerce: { businesses: unknown[]; products: { created_by: string }[] }; logistics: { bookings: { customer_id: string }[] } };
        expect(fixture.localgate).to.equal({ format: 1 });
        expect(fixture.commerce.businesses).to.equal([{ ...business, description: '', created_at: (fixture.commerce.businesses[0] as { created_at: string }).created_at }]);
        expect(fixture.commerce.products[0]?.created_by).to.equal('alice');
        expect(fixture.logistics.bookings[0]?.customer_id).to.equal('alice');
        // It loads, as a test's world.
        const loaded = await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server), payload: { fixture } });
        expect(loaded.statusCode, loaded.payload).to.equal(201);
        const printed = capture();
        expect(await main(['fixture', 'from-har', har], {}, printed)).to.equal(0);
        expect(JSON.parse(printed.stdout.join('\n'))).to.equal(fixture);

        // Replayed on a fresh instance of the world it started from: no drift.
        const report = Path.join(dir, 'drift.json');
        const markdown = Path.join(dir, 'drift.md');
        const replay = capture();
        expect(await main(['drift', har, '--report', report, '--markdown', markdown], {}, replay), replay.stdout.join('\n')).to.equal(0);
        const written = JSON.parse(Fs.readFileSync(report, 'utf8')) as DriftReport;
        expect(written.totals, replay.stdout.join('\n')).to.equal({ operations: 10, errors: 0, warnings: 0, not_served: 0 });
        // The wallet, first read after the deposit that opened it, is taken as there from the start: its id is the recorded one.
        expect(written.world.counts).to.equal({ 'commerce.businesses': 1, 'logistics.locations': 2, 'logistics.vehicles': 1, 'pay.wallets': 1 });
        expect(replay.stdout.at(-1)).to.equal('11 entries, 10 operations: 0 errors, 0 warnings');
        expect(replay.stdout).to.include('✓ POST /v1/logistics/bookings (2 entries): 0 errors, 0 warnings');
        expect(Fs.readFileSync(markdown, 'utf8')).to.contain('No differences.');

        // Over HTTP, on a server of its own secret.
        const secret = capture();
        expect(await main(['drift', har, '--url', server.info.uri], { AUTH_JWT_SECRET: server.app.localgate.secret }, secret)).to.equal(0);
        expect(secret.stdout.at(-1)).to.equal('11 entries, 10 operations: 0 errors, 0 warnings');

        // No credential that was sent is in the recording, the fixture, the reports or the lines.
        for (const text of [Fs.readFileSync(har, 'utf8'), Fs.readFileSync(fixtureFile, 'utf8'), Fs.readFileSync(report, 'utf8'), Fs.readFileSync(markdown, 'utf8'), [...io.stdout, ...replay.stdout, ...secret.stdout].join('\n')]) {
            for (const token of [...tokens, server.app.localgate.secret]) {
                expect(text).to.not.contain(token);
            }
        }
    });

    it('reports each kind of drift in its class, against an upstream that answers otherwise', async () => {

        // A stand-in for a hosted service that moved on: localgate's own answers, changed as the test says.
        const base = await instance();
        const upstream = Http.createServer((request, response) => {

            const chunks: Buffer[] = [];
            request.on('data', (chunk: Buffer) => chunks.push(chunk));
            request.once('end', async () => {

                const path = String(request.url);
                if (path.startsWith('/v1/commerce/reviews')) {
                    response.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}');
                    return;
                }

                const res = await server.inject({ method: String(request.method), url: `/i/${base}${path}`, headers: request.headers as Record<string, string>, ...(chunks.length ? { payload: Buffer.concat(chunks) } : {}) });
                let answer = JSON.parse(res.payload) as Record<string, unknown>;
                let status = res.statusCode;
                if (path === `/v1/commerce/businesses/${business.id}`) {
                    // A field renamed, and one added.
                    const { description, ...rest } = answer;
                    answer = { ...rest, summary: description, rating: 4.5 };
                }
                else if (path.startsWith('/v1/commerce/products/')) {
                    // A number sent as a string.
                    answer = { ...answer, price: String(answer.price) };
                }
                else if (path === '/v1/logistics/bookings' && status === 409) {
                    // A 409 become a 422.
                    status = 422;
                }
                else if (path.startsWith('/v1/commerce/products?')) {
                    // A list paged differently: an empty first page.
                    answer = { ...answer, data: [], count: 0 };
                }

                const headers = Object.fromEntries(Object.entries(res.headers).filter(([name]) => !['content-length', 'transfer-encoding', 'connection'].includes(name)));
                response.writeHead(status, headers as Http.OutgoingHttpHeaders).end(JSON.stringify(answer));
            });
        });
        await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
        const har = Path.join(dir, 'moved.har');
        try {
            await session(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, har);
            const recorder = await startRecorder({ upstream: new URL(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`), port: 0, out: Path.join(dir, 'reviews.har'), log: () => undefined });
            await fetch(`${recorder.url}/v1/commerce/reviews?limit=5`).then((res) => res.arrayBuffer());
            await until('the review written', () => recorder.entries === 1);
            await recorder.close();
            const recorded = JSON.parse(Fs.readFileSync(har, 'utf8')) as Har;
            recorded.log.entries.push(...(JSON.parse(Fs.readFileSync(Path.join(dir, 'reviews.har'), 'utf8')) as Har).log.entries);
            Fs.writeFileSync(har, JSON.stringify(recorded));
        }
        finally {
            await new Promise((resolve) => upstream.close(resolve));
        }

        const report = (await drift(server, injectTarget(server), readHarFile(har))) as DriftReport;
        const of = (route: string, method = 'GET') => report.operations.find((operation) => operation.route === route && operation.method === method);
        const kinds = (route: string, method = 'GET') => of(route, method)?.differences.map((difference) => `${difference.level} ${difference.kind} ${difference.path}`);
        expect(kinds('/v1/commerce/businesses/{business_id}')).to.equal([
            // The recorded answer against localgate's own schema of it.
            'error contract $[\'description\']',
            'error contract $[\'summary\']',
            'error contract $[\'rating\']',
            'error removed $[\'summary\']',
            'error removed $[\'rating\']',
            'error added $[\'description\']'
        ]);
        expect(kinds('/v1/commerce/products/{product_id}')).to.equal(['error type $[\'price\']']);
        expect(of('/v1/logistics/bookings', 'POST')?.differences).to.include({ level: 'error', kind: 'status', path: '$', recorded: 422, replayed: 409, entry: 8 });
        expect(kinds('/v1/commerce/products')).to.equal(['warning value $[\'data\'].length', 'warning value $[\'count\']']);
        expect(kinds('/v1/commerce/reviews')).to.equal(['warning not_served /v1/commerce/reviews']);
        expect(of('/v1/commerce/businesses/{business_id}')?.example).to.include({ entry: 1 });
        expect(of('/v1/commerce/businesses/{business_id}')?.example?.replayed?.status).to.equal(200);
        expect(of('/v1/commerce/reviews')?.example).to.equal({ entry: 12, recorded: { status: 200, body: { data: [] } }, replayed: null });
        expect(report.totals).to.equal({ operations: 11, errors: 8, warnings: 3, not_served: 1 });
        expect(driftMarkdown(report)).to.contain('| GET `/v1/commerce/businesses/{business_id}` | 1 | error | removed | `$[\'summary\']` | `""` | `null` |');

        // From the command line: exit 1, a line an operation; --ignore leaves fields out, --strict makes not served an error.
        const io = capture();
        // Ignored, the fields differ no more; the recorded answer still breaks the contract.
        expect(await main(['drift', har, '--ignore', '$.rating', '--ignore', '$.summary', '--ignore', '$.description', '--strict'], {}, io)).to.equal(1);
        expect(io.stdout).to.include('✗ GET /v1/commerce/businesses/{business_id} (1 entry): 3 errors, 0 warnings');
        expect(io.stdout).to.include('✗ GET /v1/commerce/reviews (1 entry): 1 error, 0 warnings');
        expect(io.stdout).to.include('~ GET /v1/commerce/products (1 entry): 0 errors, 2 warnings');
        expect(io.stdout.at(-1)).to.equal('12 entries, 11 operations: 6 errors, 2 warnings, 1 not served');
    });

    it('builds the world a recording saw, and leaves out what refers to a record it never showed', () => {

        const entry = (method: string, url: string, status: number, answer: unknown, caller: string | null = null) => ({
            request: { method, url: `https://api.example.com/base${url}`, headers: [] },
            response: { status, headers: [{ name: 'Content-Type', value: 'application/json' }], content: { mimeType: 'application/json', text: JSON.stringify(answer) } },
            _caller: caller
        });
        const product = { id: 'p1', name: 'Kettle', price: 12, currency: 'EUR', business_id: 'b-unseen', created_by: 'alice', scam_report_count: 0 };
        const har = JSON.stringify({ log: { entries: [
            entry('GET', '/v1/commerce/products/p1', 200, product),
            entry('GET', '/v1/commerce/businesses?limit=1', 200, { data: [business, { name: 'no id' }], count: 2, total: 9 }),
            entry('GET', '/v1/commerce/businesses?limit=1', 200, { data: 'not a list' }),
            entry('GET', '/v1/commerce/inquiries', 200, { data: [{ id: 'i1', business_id: business.id, message: 'Open on Sundays?', owner_id: 'bob' }] }, 'caller-2'),
            entry('GET', `/v1/commerce/businesses/${business.id}`, 200, { ...business, name: 'Renamed' }),
            entry('GET', '/v1/weather/forecast', 200, { days: [] }),
            entry('GET', '/v1/commerce/unknown-things', 200, { id: 'x' }),
            entry('GET', '/v1/commerce/products/p2', 404, { code: 'not_found' }),
            entry('GET', '/v1/commerce/products/p3', 200, 'text, not JSON'),
            { ...entry('GET', '/v1/pay/wallet', 200, null), response: { status: 200, headers: [], content: { mimeType: 'application/json', text: Buffer.from('{}').toString('base64'), encoding: 'base64' } } }
        ] } });
        const exchanges = readHar(har, 'a.har');
        expect(exchanges[0]).to.include({ entry: 1, method: 'GET', path: '/v1/commerce/products/p1', caller: null, status: 200 });
        expect(exchanges[3]?.caller).to.equal('caller-2');
        expect(exchanges.at(-1)?.answer).to.be.null();

        const latest = worldFromHar(exchanges, server.app.localgate.settings.namespaces, 'latest');
        expect(latest.leftOut).to.equal(['commerce.products p1: its business_id b-unseen is a businesses record the recording never showed']);
        expect(latest.fixture).to.equal({ localgate: { format: 1 }, commerce: { businesses: [{ ...business, name: 'Renamed' }], inquiries: [{ id: 'i1', business_id: business.id, message: 'Open on Sundays?', owner_id: 'bob' }] } });
        const start = worldFromHar(exchanges, server.app.localgate.settings.namespaces, 'start');
        expect(start.fixture).to.include({ commerce: { businesses: [business], inquiries: [{ id: 'i1', business_id: business.id, message: 'Open on Sundays?', owner_id: 'bob' }] } });
    });

    it('refuses a file that is no HAR it can read, in one line', async () => {

        const refused = (text: string) => expect(() => readHar(text, 'x.har')).to.throw();
        expect(() => readHar('{', 'x.har')).to.throw(/^x\.har is not a HAR: it is not JSON/);
        expect(() => readHar('{"entries": []}', 'x.har')).to.throw('x.har is not a HAR: log is required');
        expect(() => readHar(`${'['.repeat(100)}${']'.repeat(100)}`, 'x.har')).to.throw('x.har is not a HAR: it nests deeper than 64 levels');
        expect(() => readHar(JSON.stringify({ log: { entries: Array.from({ length: maxHarEntries + 1 }, () => ({})) } }), 'x.har')).to.throw(`x.har is not a HAR: log.entries holds more than ${maxHarEntries} entries, the most a recording may`);
        expect(() => readHar(JSON.stringify({ log: { entries: [{ request: { method: 'GET', headers: [] }, response: { status: 200, headers: [], content: {} } }] } }), 'x.har')).to.throw('x.har: log.entries[0].request.url is required');
        expect(() => readHar(JSON.stringify({ log: { entries: [{ request: { method: 'GET', url: 'not a url', headers: [] }, response: { status: 200, headers: [], content: {} } }] } }), 'x.har')).to.throw('x.har: log.entries[0].request.url is not a URL: not a url');
        refused('[]');

        const big = Path.join(dir, 'big.har');
        Fs.writeFileSync(big, '');
        Fs.truncateSync(big, maxHarBytes + 1);
        const io = capture();
        expect(await main(['drift', big], {}, io)).to.equal(1);
        expect(io.stderr).to.equal([`localgate: ${big} is larger than 64 MiB, the most a recording may be`]);
        const missing = capture();
        expect(await main(['fixture', 'from-har', Path.join(dir, 'none.har')], {}, missing)).to.equal(1);
        expect(String(missing.stderr[0])).to.startWith(`localgate: ${Path.join(dir, 'none.har')} cannot be read: ENOENT`);

        for (const [args, said] of [
            [['fixture'], 'fixture takes from-har and one recording, for example: npx localgate fixture from-har session.har --out fixture.json'],
            [['fixture', 'from-har', 'a.har', 'b.har'], 'fixture takes from-har and one recording, for example: npx localgate fixture from-har session.har --out fixture.json'],
            [['drift'], 'drift takes one recording, for example: npx localgate drift session.har --report drift.json'],
            [['drift', 'a.har', '--url', 'localhost:3000'], '--url must be the http: or https: URL of a localgate server, such as http://127.0.0.1:3000, not "localhost:3000"'],
            [['drift', 'a.har', '--url', 'ftp://localhost'], '--url must be the http: or https: URL of a localgate server, such as http://127.0.0.1:3000, not "ftp://localhost"']
        ] as [string[], string][]) {
            const usage = capture();
            expect(await main(args, {}, usage)).to.equal(2);
            expect(usage.stderr[0]).to.equal(`localgate: ${said}`);
        }
    });

    it('says so when the server at --url does not answer, or cannot make the recording\'s world', async () => {

        const har = Path.join(dir, 'one.har');
        Fs.writeFileSync(har, JSON.stringify({ log: { entries: [
            { request: { method: 'TRACE', url: 'https://api.example.com/v1/commerce/products', headers: [] }, response: { status: 405, headers: [], content: { text: '' } } },
            { request: { method: 'GET', url: 'https://api.example.com/health', headers: [] }, response: { status: 200, headers: [{ name: 'content-type', value: 'application/json' }], content: { mimeType: 'application/json', text: '{"status":"ok"}' } } }
        ] } }));
        const io = capture();
        expect(await main(['drift', har, '--url', 'http://127.0.0.1:1'], { AUTH_JWT_SECRET: 'a'.repeat(32) }, io)).to.equal(1);
        expect(String(io.stderr[0])).to.startWith('localgate: nothing answers at http://127.0.0.1:1: ');

        const replayed = capture();
        // A TRACE no route takes is not served; the /health recorded lacks what localgate's holds.
        expect(await main(['drift', har], {}, replayed)).to.equal(1);
        expect(replayed.stdout[0]).to.equal('~ TRACE /v1/commerce/products (1 entry): 0 errors, 1 warning');
        expect(replayed.stdout).to.include(['✗ GET /health (1 entry): 2 errors, 0 warnings', '    error contract $[\'namespaces\']: recorded undefined, replayed "\\"NamespacesHealth\\" is required" (entry 2)']);

        const refusing = { send: () => Promise.resolve({ status: 429, headers: {}, body: { code: 'instance_limit_reached', message: 'full' } }), token: () => 'x' };
        await expect(drift(server, refusing, readHarFile(har))).to.reject('The recording\'s world cannot be made an instance: 429 instance_limit_reached: full');
    });

    it('compares bodies field by field: ids mapped, instants left alone, nulls a value', () => {

        const ids = new Map([['r1', 'n1']]);
        const differences = bodyDifferences({ entry: 3, answer: { id: 'r1', at: '2030-01-01T00:00:00Z', settled_at: 'x', note: null, tags: ['a'], n: 1 } }, { id: 'n1', at: '2031-02-02T00:00:00.000Z', settled_at: 'y', note: 'now', tags: ['a', 'b'], n: 2 }, ids, new Set(['$[\'n\']']));
        expect(differences).to.equal([
            { level: 'warning', kind: 'value', path: '$[\'note\']', recorded: null, replayed: 'now', entry: 3 },
            { level: 'warning', kind: 'value', path: '$[\'tags\'].length', recorded: 1, replayed: 2, entry: 3 }
        ]);
    });
});


describe('drift, case by case', () => {

    let server: Server;

    before(async () => {

        server = await testServer({ memoryPay: true });
    });

    after(() => server.stop());

    const exchange = (entry: number, method: string, path: string, status: number, answer: unknown, more: Partial<Exchange> = {}): Exchange => ({
        entry, method, path, headers: {}, body: null, caller: null, status, answerHeaders: { 'content-type': 'application/json' }, answer, ...more
    });

    // A target that answers what the test says, by entry, after making and before deleting the instance.
    const scripted = (answers: Record<string, { status: number; headers?: Record<string, string>; body: unknown }>): ReplayTarget => ({
        token: (subject) => subject,
        send(method, path) {

            if (path === '/_instances') {
                return Promise.resolve({ status: 201, headers: {}, body: { id: 'i1' } });
            }

            const answer = answers[`${method} ${path.replace(/^\/i\/i1/, '')}`] ?? { status: 204, body: null };
            return Promise.resolve({ status: answer.status, headers: answer.headers ?? { 'content-type': 'application/json' }, body: answer.body });
        }
    });

    it('maps ids, leaves instants and _at fields alone, and classes every other difference', async () => {

        const recorded = { id: 'r1', again_id: 'r1', other_id: 'r9', ref: 'r1', owner_id: 'o1', list: [{ id: 'r2' }], same_id: 'x', count_id: 5, at: '2030-01-01T00:00:00Z', at2: '2030-01-01T00:00:00Z', sent_at: 'yesterday', name: 'Kettle', tags: ['a'], shape: { a: 1 }, nothing: null, gone: 'x', word: 'a' };
        const replayed = { id: 'n1', again_id: 'n1', other_id: null, ref: 'n1', owner_id: 'o1', list: [{ id: 'n2' }], same_id: 'x', count_id: 6, at: '2031-01-01T00:00:00.000Z', at2: 'soon', sent_at: 'today', name: 'Kettles', tags: { a: 1 }, shape: [1], nothing: 3, gone: null, word: 'not an instant' };
        const report = await drift(server, scripted({
            'POST /v1/commerce/products': { status: 201, headers: { 'content-type': 'application/json', location: '/i/i1/v1/commerce/products/n1' }, body: replayed },
            'GET /v1/commerce/products/n1': { status: 200, headers: { 'content-type': 'text/plain' }, body: 'plain' },
            'GET /v1/commerce/products': { status: 200, headers: { 'content-type': 'application/json', 'x-total-count': '0' }, body: { data: [], count: 0, total: 0 } },
            'GET /v1/commerce/offers': { status: 200, headers: {}, body: 'no type' }
        }), [
            exchange(1, 'POST', '/v1/commerce/products', 201, recorded, { answerHeaders: { 'content-type': 'application/json', location: 'https://api.example.com/base/v1/commerce/products/r1' } }),
            exchange(2, 'GET', '/v1/commerce/products/r1', 200, { id: 'r1' }),
            exchange(3, 'GET', '/v1/commerce/products', 200, { data: [], count: 0, total: 3 }, { answerHeaders: { 'content-type': 'application/json', 'x-total-count': '3', location: '/v1/x' } }),
            exchange(4, 'GET', '/v1/commerce/products', 200, { data: [], count: 0, total: 0 }, { answerHeaders: { 'content-type': 'application/json', 'x-total-count': '0' } }),
            exchange(5, 'GET', '/v1/commerce/businesses', 204, null, { answerHeaders: {} }),
            exchange(6, 'GET', '/v1/commerce/offers', 200, 'no type')
        ], { ignore: ['$.list[0].nope'] });
        const [, , , none, offers] = report.operations;
        expect(none?.differences).to.equal([{ level: 'error', kind: 'header', path: 'content-type', recorded: null, replayed: 'application/json', entry: 5 }]);
        expect(offers?.differences.map((difference) => `${difference.kind} ${difference.path} ${String(difference.recorded)} ${String(difference.replayed)}`)).to.equal(['contract $ no type "OfferList" must be of type object', 'header content-type application/json null']);
        const [created, read, listed] = report.operations;
        // The recorded answer is no product of the contract's: the comparison is what this is about.
        expect(created?.differences.filter((difference) => difference.kind !== 'contract').map((difference) => `${difference.level} ${difference.kind} ${difference.path}`)).to.equal([
            'warning value $[\'other_id\']',
            'warning value $[\'count_id\']',
            'warning value $[\'at2\']',
            'warning value $[\'name\']',
            'error type $[\'tags\']',
            'error type $[\'shape\']',
            'warning value $[\'nothing\']',
            'warning value $[\'gone\']',
            'warning value $[\'word\']'
        ]);
        // The record the replay made is the recorded one: its id, in a path and in Location, is mapped.
        expect(read?.differences.filter((difference) => difference.kind !== 'contract').map((difference) => `${difference.level} ${difference.kind} ${difference.path}`)).to.equal(['error type $', 'error header content-type']);
        expect(read?.example?.replayed).to.equal({ status: 200, body: 'plain' });
        expect(listed?.differences.map((difference) => `${difference.level} ${difference.kind} ${difference.path}`)).to.equal(['warning value $[\'total\']', 'warning header x-total-count', 'error header location']);
        expect(listed?.example?.entry).to.equal(3);
        expect(listed?.entries).to.equal(2);
    });

    it('holds recorded answers to the contract where it says their shape, and shows long answers cut', async () => {

        const long = 'x'.repeat(maxShownChars);
        const report = await drift(server, scripted({ 'GET /v1/commerce/businesses': { status: 200, body: { data: [{ id: 'b', name: long }], count: 1, total: 1 } } }), [
            exchange(1, 'GET', '/v1/commerce/businesses', 200, { data: [{ id: 'b', name: 7 }], count: 1, total: 1 }),
            exchange(2, 'GET', '/v1/commerce/businesses/b', 404, { code: 'not_found' }),
            exchange(3, 'GET', '/v1/commerce/businesses/c', 200, null, { answerHeaders: {} }),
            exchange(4, 'GET', '/_clock', 200, { now: 'x' })
        ], { ignore: ['$.nothing'] });
        const [list, one, admin] = report.operations;
        expect(list?.differences.map((difference) => `${difference.kind} ${difference.path}`)).to.include(['contract $[\'data\'][0][\'name\']', 'contract $[\'data\'][0][\'description\']', 'type $[\'data\'][0][\'name\']']);
        expect(String(list?.example?.replayed?.body)).to.endWith('characters in all)');
        // A 404 has no schema of the route's to hold it to; an answer the recording did not keep is held to nothing. Their statuses still are.
        expect(one?.differences).to.equal([{ level: 'error', kind: 'status', path: '$', recorded: 404, replayed: 204, entry: 2 }, { level: 'error', kind: 'status', path: '$', recorded: 200, replayed: 204, entry: 3 }]);
        expect(admin?.differences.map((difference) => difference.kind)).to.equal(['not_served']);
    });

    it('reads what a HAR holds of each body, and builds the world of what it can load', () => {

        const entry = (url: string, status: number, content: object, method = 'GET') => ({
            request: { method, url, headers: [{ name: 'Authorization', value: '[hidden]' }] },
            response: { status, headers: [], content }
        });
        const exchanges = readHar(JSON.stringify({ log: { entries: [
            entry('https://api.example.com/other/path?x=1', 200, { mimeType: 'text/plain', text: 'hello' }),
            entry('https://api.example.com/v1/commerce/businesses', 200, { mimeType: 'application/json', text: '{"broken' }),
            entry('https://api.example.com/v1/commerce/businesses', 200, { mimeType: 'application/json', text: JSON.stringify({ data: [5, { id: 'bad', name: 'No city' }] }) }),
            entry('https://api.example.com/v1/commerce/businesses', 200, { mimeType: 'application/json', text: `{"data":${'['.repeat(70)}${']'.repeat(70)}}` }),
            entry('https://api.example.com/v1/commerce/businesses', 200, { mimeType: 'application/json', text: `"${'x'.repeat(maxHarBodyBytes)}"` }),
            entry('https://api.example.com/v1/commerce/businesses', 201, { mimeType: 'application/json', text: JSON.stringify(business) }, 'POST'),
            entry('https://api.example.com/v1/commerce/businesses', 201, { mimeType: 'application/json', text: JSON.stringify(business) }, 'POST'),
            entry('https://api.example.com/v1/commerce/businesses', 200, {}),
            // A browser's HAR: no alias, the credential in clear. It is known by a digest, never kept.
            { ...entry('https://api.example.com/v1/commerce/businesses', 200, {}), request: { method: 'GET', url: 'https://api.example.com/v1/x', headers: [{ name: 'authorization', value: 'Bearer abc' }] } },
            { ...entry('https://api.example.com/v1/commerce/businesses', 200, {}), request: { method: 'GET', url: 'https://api.example.com/v1/x', headers: [{ name: 'authorization', value: 'Bearer def' }] } },
            { ...entry('https://api.example.com/v1/commerce/businesses', 200, {}), request: { method: 'GET', url: 'https://api.example.com/v1/x', headers: [{ name: 'authorization', value: 'Bearer abc' }] } }
        ] } }), 'edge.har');
        expect(exchanges.map((one) => one.caller)).to.equal([null, null, null, null, null, null, null, null, 'caller-1', 'caller-2', 'caller-1']);
        expect(exchanges.slice(0, 8).map((one) => [one.path, typeof one.answer])).to.equal([
            ['/other/path?x=1', 'string'],
            ['/v1/commerce/businesses', 'string'],
            ['/v1/commerce/businesses', 'object'],
            ['/v1/commerce/businesses', 'string'],
            ['/v1/commerce/businesses', 'object'],
            ['/v1/commerce/businesses', 'object'],
            ['/v1/commerce/businesses', 'object'],
            ['/v1/commerce/businesses', 'object']
        ]);
        expect(exchanges[4]?.answer).to.be.null();
        expect(exchanges[0]?.headers).to.equal({ authorization: '[hidden]' });
        const built = worldFromHar(exchanges, server.app.localgate.settings.namespaces, 'start');
        expect(built.leftOut).to.equal(['commerce.businesses bad: "category" is required']);
        // Made by the session's first POST: not in the world it started from, whatever came after.
        expect(built.fixture).to.equal({ localgate: { format: 1 } });
        expect(parsedBody('', 'application/json')).to.be.null();
        expect(parsedBody('{"a"', 'application/json')).to.equal('{"a"');
        expect(parsedBody('text', 'text/plain')).to.equal('text');
    });

    it('says on the command line what it left out, and refuses what it cannot read', async () => {

        const dir = tempDir('localgate-drift-cli-');
        try {
            const har = Path.join(dir, 'left.har');
            const product = { id: 'p1', name: 'Kettle', price: 12, currency: 'E'.repeat(100), business_id: 'unseen', created_by: 'alice' };
            Fs.writeFileSync(har, JSON.stringify({ log: { entries: [
                { request: { method: 'GET', url: 'https://api.example.com/v1/commerce/products/p1', headers: [] }, response: { status: 200, headers: [{ name: 'content-type', value: 'application/json' }], content: { mimeType: 'application/json', text: JSON.stringify(product) } } }
            ] } }));
            const io = { stdout: [] as string[], stderr: [] as string[] };
            const sink = { out: (line: string) => io.stdout.push(line), err: (line: string) => io.stderr.push(line) };
            expect(await main(['fixture', 'from-har', har, '--out', Path.join(dir, 'f.json')], {}, sink)).to.equal(0);
            expect(io.stderr).to.equal(['left out: commerce.products p1: its business_id unseen is a businesses record the recording never showed']);
            expect(io.stdout).to.equal([`${Path.join(dir, 'f.json')}: no records`]);
            expect(await main(['drift', har, '--markdown', Path.join(dir, 'd.md')], {}, sink)).to.equal(1);
            expect(io.stdout).to.include('left out of the world: commerce.products p1: its business_id unseen is a businesses record the recording never showed');
            expect(Fs.readFileSync(Path.join(dir, 'd.md'), 'utf8')).to.contain('...');

            for (const args of [['fixture', 'to-har', har], ['fixture', 'from-har'], ['drift', har, har], ['drift', har, '--url', 'http://[']]) {
                const errors: string[] = [];
                expect(await main(args, {}, { out: () => undefined, err: (line) => errors.push(line) })).to.equal(2);
            }
        }
        finally {
            Fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});
