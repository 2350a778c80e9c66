import Http from 'node:http';

import Code from '@hapi/code';
import type { Request, ResponseToolkit, Server } from '@hapi/hapi';
import Lab from '@hapi/lab';

import type { ConsoleApiMode } from '../lib/setting-error';
import { consoleApiMounted, eventsPath, isLoopback, tokenPath } from '../lib/console';
import { housekeepingHeader, housekeepingValue, maxBodyChars, maxBufferedBytes, type RequestEvent, type RequestFeed } from '../lib/console/feed';
import { adminBearer, bearer, body, testServer } from './helpers/server';
import { until } from './helpers/until';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


function mintRequest(subject: unknown, headers: Record<string, string> = {}, extra: Record<string, unknown> = {}) {

    return { method: 'POST', url: tokenPath, payload: { subject, ...extra }, headers };
}


function adminRequest(headers: Record<string, string> = {}) {

    return mintRequest('console', headers, { admin: true });
}


function feedOf(server: Server): RequestFeed {

    return server.plugins['localgate-console'].feed;
}


/** A client of the event stream that collects the request events it receives. */
class Listener {

    readonly events: RequestEvent[] = [];
    readonly opened: Promise<void>;
    private text = '';
    private waiters: (() => void)[] = [];
    private req: Http.ClientRequest;
    ended = false;
    headers: Http.IncomingHttpHeaders = {};

    constructor(server: Server) {

        this.req = Http.get(`${server.info.uri}${eventsPath}`, { headers: { 'accept-encoding': 'gzip' } });
        this.opened = new Promise((resolve, reject) => {

            this.req.once('error', reject);
            this.req.once('response', (res) => {

                this.headers = res.headers;
                res.setEncoding('utf8');
                res.on('data', (chunk: string) => {

                    this.text += chunk;
                    if (this.text.includes('retry: ')) {
                        resolve();
                    }

                    this.parse();
                });
                res.once('end', () => {

                    this.ended = true;
                    this.notify();
                });
            });
        });
    }

    /** Resolves with the first event that matches, waiting for it if it has not come yet. */
    async next(predicate: (event: RequestEvent) => boolean): Promise<RequestEvent> {

        for (;;) {
            const found = this.events.find(predicate);
            if (found) {
                return found;
            }

            await new Promise<void>((resolve) => this.waiters.push(resolve));
        }
    }

    async end(): Promise<void> {

        while (!this.ended) {
            await new Promise<void>((resolve) => this.waiters.push(resolve));
        }
    }

    close(): void {

        this.req.destroy();
    }

    private parse(): void {

        const blocks = this.text.split('\n\n');
        this.text = blocks.pop()!;
        for (const block of blocks) {
            const data = block.split('\n').find((line) => line.startsWith('data: '));
            if (block.startsWith('event: request') && data) {
                this.events.push(JSON.parse(data.slice('data: '.length)));
            }
        }

        this.notify();
    }

    private notify(): void {

        const waiters = this.waiters;
        this.waiters = [];
        waiters.forEach((wake) => wake());
    }
}


/** One request on a connection of its own (no agent, so nothing resends it): its status, or the error that closed it. */
function send(server: Server, method: string, path: string, headers: Record<string, string> = {}, payload?: unknown): Promise<{ status?: number; error?: string }> {

    return new Promise((resolve) => {

        const data = payload === undefined ? undefined : JSON.stringify(payload);
        const req = Http.request(`${server.info.uri}${path}`, { method, agent: false, headers: data ? { ...headers, 'content-type': 'application/json' } : headers }, (res) => {

            res.resume();
            res.once('end', () => resolve({ status: res.statusCode! }));
        });
        req.once('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code! }));
        req.end(data);
    });
}


describe('the console page', () => {

    let server: Server;

    before(async () => {

        server = await testServer();
    });

    after(async () => {

        await server.stop();
    });

    it('is where the root leads', async () => {

        const res = await server.inject('/');
        expect(res.statusCode).to.equal(302);
        expect(res.headers.location).to.equal('/console');
    });

    it('serves the page, its assets and the view library from the package', async () => {

        const page = await server.inject('/console');
        expect(page.statusCode).to.equal(200);
        expect(page.headers['content-type']).to.contain('text/html');
        expect(page.payload).to.contain('<script type="importmap">');

        for (const file of ['app.js', 'clock.js']) {
            const res = await server.inject(`/console/assets/${file}`);
            expect(res.statusCode, file).to.equal(200);
            expect(res.headers['content-type'], file).to.contain('javascript');
        }

        for (const file of ['preact.mjs', 'hooks.mjs', 'htm.mjs']) {
            const res = await server.inject(`/console/vendor/${file}`);
            expect(res.statusCode, file).to.equal(200);
            expect(res.headers['content-type'], file).to.contain('javascript');
        }
    });

    it('serves an icon where browsers ask for one, and beside the page', async () => {

        for (const url of ['/favicon.ico', '/console/assets/favicon.svg']) {
            const res = await server.inject(url);
            expect(res.statusCode, url).to.equal(200);
            expect(res.headers['content-type'], url).to.equal('image/svg+xml');
            expect(res.payload, url).to.startWith('<svg xmlns="http://www.w3.org/2000/svg"');
        }
    });

    it('serves no other file from node_modules or the package', async () => {

        for (const url of ['/console/vendor/package.json', '/console/vendor/__proto__', '/console/vendor/constructor', '/console/assets/../package.json']) {
            const res = await server.inject(url);
            expect(res.statusCode, url).to.equal(404);
        }

        expect((await server.inject('/console/assets/')).statusCode).to.equal(403);
    });
});


describe('the console API', () => {

    it('is mounted on a loopback address by default, and mints a token the API accepts', async () => {

        const server = await testServer({ host: '127.0.0.1' });
        const res = await server.inject(mintRequest('  alice  '));
        expect(res.statusCode).to.equal(200);
        const { subject, token, expires_at: expiresAt } = body<{ subject: string; token: string; expires_at: string }>(res);
        expect(subject).to.equal('alice');
        expect(Date.parse(expiresAt)).to.be.above(Date.now() + 11 * 3600 * 1000);

        const bookings = await server.inject({ url: '/v1/logistics/bookings', headers: { authorization: `Bearer ${token}` } });
        expect(bookings.statusCode).to.equal(200);
        await server.stop();
    });

    it('mints an admin token on request, with which the instance routes answer; a persona\'s token stays a persona\'s', async () => {

        const server = await testServer({ host: '127.0.0.1' });
        const admin = await server.inject(adminRequest());
        expect(admin.statusCode).to.equal(200);
        const minted = body<{ subject: string; token: string; admin: boolean }>(admin);
        expect(minted).to.include({ subject: 'console', admin: true });

        const made = await server.inject({ method: 'POST', url: '/_instances', payload: {}, headers: { authorization: `Bearer ${minted.token}` } });
        expect(made.statusCode).to.equal(201);
        const list = await server.inject({ url: '/_instances', headers: { authorization: `Bearer ${minted.token}` } });
        expect(list.statusCode).to.equal(200);
        expect(body(list).total).to.equal(1);

        const persona = body<{ token: string; admin: boolean }>(await server.inject(mintRequest('alice', {}, { admin: false })));
        expect(persona.admin).to.be.false();
        const refused = await server.inject({ url: '/_instances', headers: { authorization: `Bearer ${persona.token}` } });
        expect(refused.statusCode).to.equal(403);
        expect(body(refused).code).to.equal('admin_required');
        expect(body(await server.inject(mintRequest('bob'))).admin).to.be.false();
        await server.stop();
    });

    it('moves the clock with its admin token as the page\'s buttons do, each move answering what it applied and the records reading their new states', { timeout: 20_000 }, async () => {

        // The default data set frozen far past the demo data's instants: only what this test schedules falls due.
        const server = await testServer({ host: '127.0.0.1', clock: '2040-01-01T00:00:00Z' });
        const admin = { authorization: `Bearer ${body<{ token: string }>(await server.inject(adminRequest())).token}` };
        const alice = { authorization: `Bearer ${body<{ token: string }>(await server.inject(mintRequest('alice'))).token}` };
        expect(body(await server.inject({ url: '/_clock', headers: { ...admin, 'x-localgate-console': 'housekeeping' } }))).to.equal({ now: '2040-01-01T00:00:00.000Z', frozen: '2040-01-01T00:00:00.000Z' });

        // The default data set: a booking confirmed, then "+1 hour" and "+3 days" (PUT /_clock).
        const vehicles = body<{ data: { id: string; is_available: boolean }[] }>(await server.inject('/v1/logistics/vehicles?available=true&limit=1')).data;
        const locations = body<{ data: { id: string }[] }>(await server.inject('/v1/logistics/locations?limit=1')).data;
        const booked = await server.inject({
            method: 'POST', url: '/v1/logistics/bookings', headers: alice,
            payload: { vehicle_id: vehicles[0]!.id, pickup_location_id: locations[0]!.id, dropoff_location_id: locations[0]!.id, pickup_at: '2040-01-01T02:00:00Z', return_at: '2040-01-02T02:00:00Z' }
        });
        expect(booked.statusCode).to.equal(201);
        const booking = body<{ id: string; status: string }>(booked);
        expect(booking.status).to.equal('confirmed');
        const statusOf = async () => body<{ status: string }>(await server.inject({ url: `/v1/logistics/bookings/${booking.id}`, headers: alice })).status;

        const hour = await server.inject({ method: 'PUT', url: '/_clock', headers: admin, payload: { advance: '1h' } });
        expect(hour.statusCode).to.equal(200);
        expect(body(hour)).to.equal({ now: '2040-01-01T01:00:00.000Z', frozen: '2040-01-01T01:00:00.000Z', applied: {}, attempted: 0, remaining: 0 });
        expect(await statusOf()).to.equal('confirmed');
        const days = await server.inject({ method: 'PUT', url: '/_clock', headers: admin, payload: { advance: '3d' } });
        expect(body(days)).to.equal({ now: '2040-01-04T01:00:00.000Z', frozen: '2040-01-04T01:00:00.000Z', applied: { 'logistics.booking.started': 1, 'logistics.booking.completed': 1 }, attempted: 0, remaining: 0 });
        expect(await statusOf()).to.equal('completed');

        // An instance with pay: a bank transfer pending, then "+1 day" twice (PUT /_instances/{id}/clock).
        const made = body<{ id: string }>(await server.inject({ method: 'POST', url: '/_instances', headers: admin, payload: { seed: 'none', pay: true, clock: '2030-01-01T00:00:00Z' } }));
        const wallet = async () => body<{ balances: unknown[] }>(await server.inject({ url: `/i/${made.id}/v1/pay/wallet`, headers: alice })).balances;
        const deposit = await server.inject({
            method: 'POST', url: `/i/${made.id}/v1/pay/gateway/deposit`, headers: { ...alice, 'idempotency-key': 'console-clock-1' },
            payload: { provider_id: 'bank-transfer', asset: 'EUR', amount: 2500 }
        });
        expect(body(deposit)).to.include({ status: 'pending', settles_at: '2030-01-03T00:00:00.000Z', settled_at: null });
        expect(await wallet()).to.equal([{ asset: 'EUR', amount: 0, pending_in: 2500, pending_out: 0 }]);

        const moveInstance = (advance: string) => server.inject({ method: 'PUT', url: `/_instances/${made.id}/clock`, headers: admin, payload: { advance } });
        const first = await moveInstance('1d');
        expect(first.statusCode).to.equal(200);
        expect(body(first)).to.include({ id: made.id, clock: '2030-01-02T00:00:00.000Z', applied: {}, attempted: 0, remaining: 0 });
        expect(body(await moveInstance('1d'))).to.include({ clock: '2030-01-03T00:00:00.000Z', applied: { 'pay.transaction.completed': 1 } });
        expect(await wallet()).to.equal([{ asset: 'EUR', amount: 2500, pending_in: 0, pending_out: 0 }]);

        // A persona's token moves no clock.
        const refused = await server.inject({ method: 'PUT', url: '/_clock', headers: alice, payload: { advance: '1h' } });
        expect(refused.statusCode).to.equal(403);
        expect(body(refused).code).to.equal('admin_required');
        await server.stop();
    });

    it('refuses an admin flag that is not a boolean', async () => {

        const server = await testServer();
        const res = await server.inject(mintRequest('alice', {}, { admin: 'please' }));
        expect(res.statusCode).to.equal(400);
        expect(body<{ details: { field: string }[] }>(res).details[0]!.field).to.equal('admin');
        await server.stop();
    });

    it('refuses a subject that is missing, blank or too long', async () => {

        const server = await testServer();
        for (const subject of [undefined, '   ', 'x'.repeat(101), 42]) {
            const res = await server.inject(mintRequest(subject));
            expect(res.statusCode, String(subject)).to.equal(400);
            expect(body(res).code).to.equal('validation_failed');
        }

        await server.stop();
    });

    it('is absent (404) on a non-loopback address unless CONSOLE_API=on, and absent everywhere with CONSOLE_API=off', async () => {

        const cases: [string, ConsoleApiMode, number][] = [
            ['0.0.0.0', 'auto', 404],
            ['192.168.1.20', 'auto', 404],
            ['0.0.0.0', 'on', 200],
            ['127.0.0.1', 'off', 404],
            ['localhost', 'auto', 200]
        ];

        for (const [host, consoleApi, status] of cases) {
            const server = await testServer({ host, consoleApi });
            const token = await server.inject(mintRequest('alice'));
            expect(token.statusCode, `${host} ${consoleApi}`).to.equal(status);
            const admin = await server.inject(adminRequest());
            expect(admin.statusCode, `${host} ${consoleApi} admin`).to.equal(status);
            if (status === 404) {
                expect(body(token).code).to.equal('not_found');
                expect(body(admin).code).to.equal('not_found');
                const events = await server.inject(eventsPath);
                expect(events.statusCode, `${host} ${consoleApi}`).to.equal(404);
            }

            expect((await server.inject('/console')).statusCode).to.equal(200);
            await server.stop();
        }
    });

    it('answers only requests addressed to a loopback name under auto, so that a rebound name cannot reach it', async () => {

        const auto = await testServer();
        expect((await auto.inject(mintRequest('alice', { host: 'evil.example:3000' }))).statusCode).to.equal(404);
        expect((await auto.inject(adminRequest({ host: 'evil.example:3000' }))).statusCode).to.equal(404);
        expect((await auto.inject({ url: eventsPath, headers: { host: 'evil.example' } })).statusCode).to.equal(404);
        expect((await auto.inject(mintRequest('alice', { host: '[::1]:3000' }))).statusCode).to.equal(200);
        await auto.stop();

        const on = await testServer({ host: '0.0.0.0', consoleApi: 'on' });
        expect((await on.inject(mintRequest('alice', { host: 'laptop.lan:3000' }))).statusCode).to.equal(200);
        expect((await on.inject(adminRequest({ host: 'laptop.lan:3000' }))).statusCode).to.equal(200);
        await on.stop();
    });

    it('is not readable from another origin', async () => {

        const server = await testServer({ corsOrigins: ['*'] });
        const res = await server.inject(mintRequest('alice', { origin: 'https://elsewhere.example' }));
        expect(res.statusCode).to.equal(200);
        expect(res.headers['access-control-allow-origin']).to.not.exist();
        const admin = await server.inject(adminRequest({ origin: 'https://elsewhere.example' }));
        expect(admin.statusCode).to.equal(200);
        expect(admin.headers['access-control-allow-origin']).to.not.exist();

        const api = await server.inject({ url: '/v1/commerce/products?limit=1', headers: { origin: 'https://elsewhere.example' } });
        expect(api.headers['access-control-allow-origin']).to.equal('https://elsewhere.example');
        await server.stop();
    });

    it('tells loopback names and addresses from the others', () => {

        for (const host of ['localhost', 'LOCALHOST', '127.0.0.1', '127.1.2.3', '::1', '[::1]', '::ffff:127.0.0.1']) {
            expect(isLoopback(host), host).to.be.true();
        }

        for (const host of ['0.0.0.0', '::', '192.168.1.2', '10.0.0.1', 'example.com', 'localhost.example.com', '127.0.0.1.nip.io']) {
            expect(isLoopback(host), host).to.be.false();
        }

        expect(consoleApiMounted('auto', '127.0.0.1')).to.be.true();
        expect(consoleApiMounted('auto', '0.0.0.0')).to.be.false();
        expect(consoleApiMounted('on', '0.0.0.0')).to.be.true();
        expect(consoleApiMounted('off', '127.0.0.1')).to.be.false();
    });
});


describe('the live request log', () => {

    let server: Server;

    before(async () => {

        server = await testServer({ port: 0, host: '127.0.0.1' });
        server.route([
            { method: 'GET', path: '/v1/weather/teapot', options: { auth: false, handler: () => 'short and stout' } },
            { method: 'GET', path: '/v1/weather/empty', options: { auth: false, handler: (request, h) => h.response().code(204) } }
        ]);
        await server.start();
    });

    after(async () => {

        await server.stop();
    });

    it('streams every answered request, uncompressed, to every listener, and stops listening when the last leaves', async () => {

        const first = new Listener(server);
        const second = new Listener(server);
        await Promise.all([first.opened, second.opened]);
        expect(first.headers['content-type']).to.equal('text/event-stream; charset=utf-8');
        expect(first.headers['content-encoding']).to.equal('identity');
        expect(feedOf(server).size).to.equal(2);

        // hapi's own record of each answered request: the event's time and duration must be exactly its.
        const answered = new Map<string, Request['info']>();
        const record = (request: Request) => answered.set(request.info.id, request.info);
        server.events.on('response', record);
        const res = await fetch(`${server.info.uri}/v1/commerce/businesses?limit=2`, { headers: bearer(server, 'alice') });
        const requestId = res.headers.get('x-request-id');
        expect(requestId).to.be.a.string();
        const seen = await Promise.all([first, second].map((listener) => listener.next((event) => event.path === '/v1/commerce/businesses')));
        server.events.removeListener('response', record);
        expect(answered.size).to.equal(1);
        for (const event of seen) {
            expect(event).to.include({ method: 'GET', path: '/v1/commerce/businesses', query: '?limit=2', status: 200, caller: 'alice', public: false, truncated: false });
            expect(event.id).to.be.a.string().and.to.not.be.empty();
            expect(event.id).to.equal(requestId!);
            const info = answered.get(event.id)!;
            expect(event.time).to.equal(new Date(info.received).toISOString());
            expect(event.ms).to.equal(info.completed - info.received);
            expect(JSON.parse(event.body!).count).to.equal(2);
        }

        first.close();
        await until('the first subscriber to leave the feed', () => feedOf(server).size === 1, { everyMs: 0 });
        second.close();
        await until('the second subscriber to leave the feed', () => feedOf(server).size === 0, { everyMs: 0 });
        expect(server.events.hasListeners('response')).to.be.true();
    });

    it('shows error bodies, success bodies of commerce, logistics, weather and /health only, and never the console\'s own requests', async () => {

        const listener = new Listener(server);
        await listener.opened;

        for (const path of ['/console', '/favicon.ico', '/v1/pay/status', '/v1/pay/wallet/', '/openapi.json', '/health', '/v1/weather/teapot', '/v1/weather/empty', '/v1/commerce/products?limit=100', '/v1/nowhere']) {
            // Read to the end, so that each request is answered before the next is sent.
            await (await fetch(`${server.info.uri}${path}`)).arrayBuffer();
        }

        const notFound = await listener.next((event) => event.path === '/v1/nowhere');
        expect(notFound).to.include({ status: 404, caller: null, public: true, query: '' });
        expect(JSON.parse(notFound.body!).code).to.equal('not_found');

        const paths = listener.events.map((event) => event.path);
        expect(paths).to.equal(['/v1/pay/status', '/v1/pay/wallet', '/openapi.json', '/health', '/v1/weather/teapot', '/v1/weather/empty', '/v1/commerce/products', '/v1/nowhere']);
        const [status, wallet, document, health, teapot, empty, products] = listener.events;
        expect(status!).to.include({ status: 200, caller: null, public: true });
        expect(status!.body).to.not.exist();
        // The wallet's route takes the server's default authentication: a request without a token is anonymous, not public.
        expect(wallet!).to.include({ status: 501, caller: null, public: false });
        expect(wallet!.status).to.equal(501);
        expect(JSON.parse(wallet!.body!).code).to.equal('pay_not_provisioned');
        expect(document!.body).to.not.exist();
        expect(JSON.parse(health!.body!).status).to.equal('ok');
        expect(teapot!.body).to.not.exist();
        expect(empty!.status).to.equal(204);
        expect(empty!.body).to.not.exist();
        expect(products!.truncated).to.be.true();
        expect(products!.body).to.have.length(maxBodyChars);
        listener.close();
    });

    it('never carries a token, an Authorization header or a secret', async () => {

        const listener = new Listener(server);
        await listener.opened;
        const { authorization } = bearer(server, 'alice');
        const token = authorization.slice('Bearer '.length);
        const secret = server.app.localgate.secret;
        const [business] = body<{ data: { id: string }[] }>(await server.inject('/v1/commerce/businesses?limit=1')).data;

        await fetch(`${server.info.uri}/v1/commerce/products?limit=1&api_key=${token}&access_token=abc&Password=x&session=s1&signature=g1&credential=c1&passwd=p1&note=Bearer%20opaque&plain=yes`);
        await fetch(`${server.info.uri}/v1/commerce/products`, {
            method: 'POST',
            headers: { authorization, 'content-type': 'application/json' },
            body: JSON.stringify({ name: 'Leaky', price: 1, currency: 'USD', business_id: business!.id, description: `pasted ${token} and ${secret}` })
        });
        await fetch(`${server.info.uri}/v1/logistics/bookings`, { headers: { authorization: `Bearer ${token}x` } });

        const refused = await listener.next((event) => event.path === '/v1/logistics/bookings');
        expect(refused).to.include({ status: 401, caller: null });
        const created = await listener.next((event) => event.method === 'POST');
        expect(created).to.include({ status: 201, caller: 'alice' });
        expect(JSON.parse(created.body!).description).to.equal('pasted [hidden] and [hidden]');
        const query = await listener.next((event) => event.method === 'GET' && event.path === '/v1/commerce/products');
        expect(query.query).to.equal('?limit=1&api_key=[hidden]&access_token=[hidden]&Password=[hidden]&session=[hidden]&signature=[hidden]&credential=[hidden]&passwd=[hidden]&note=[hidden]&plain=yes');

        // A webhook secret, wherever it is put.
        const hook = `whsec_${Buffer.alloc(32, 251).toString('base64')}`;
        await fetch(`${server.info.uri}/v1/commerce/products/${hook.replace(/[+/=]/g, 'A')}?q=${encodeURIComponent(hook)}`);
        await fetch(`${server.info.uri}/v1/commerce/products`, {
            method: 'POST',
            headers: { authorization, 'content-type': 'application/json' },
            body: JSON.stringify({ name: 'Hook', price: 1, currency: 'USD', business_id: business!.id, description: `mine is ${hook}` })
        });
        const hooked = await listener.next((event) => event.method === 'GET' && event.path.startsWith('/v1/commerce/products/'));
        expect(hooked).to.include({ path: '/v1/commerce/products/[hidden]', query: '?q=[hidden]' });
        const described = await listener.next((event) => event.method === 'POST' && event.body!.includes('"Hook"'));
        expect(JSON.parse(described.body!).description).to.equal('mine is [hidden]');

        // A secret across the point where a long body is cut: no part of it is left on the near side.
        await fetch(`${server.info.uri}/v1/commerce/products`, {
            method: 'POST',
            headers: { authorization, 'content-type': 'application/json' },
            body: JSON.stringify({ name: 'Long', price: 1, currency: 'USD', business_id: business!.id, description: `${'x'.repeat(3970)}${secret}` })
        });
        const long = await listener.next((event) => event.method === 'POST' && event.body!.includes('"Long"'));
        expect(long.truncated).to.be.true();
        expect(long.body!).to.not.contain(secret.slice(0, 8));

        const everything = JSON.stringify(listener.events);
        expect(everything).to.not.contain(token);
        expect(everything).to.not.contain(secret);
        expect(everything).to.not.contain('eyJ');
        expect(everything.toLowerCase()).to.not.contain('authorization');
        listener.close();
    });

    it('names the instance each request ran in, and shows its path as the client sent it', async () => {

        const listener = new Listener(server);
        await listener.opened;
        const admin = adminBearer(server);
        const made = await fetch(`${server.info.uri}/_instances`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: '{"pay":true}' });
        expect(made.status).to.equal(201);
        const { id, base_path: basePath } = await made.json() as { id: string; base_path: string };

        for (const path of [`${basePath}/v1/commerce/products?limit=1`, `${basePath}/v1/pay/status`, '/v1/commerce/products?limit=2', '/i/no-such-instance/v1/commerce/products', `/_instances/${id}`]) {
            await (await fetch(`${server.info.uri}${path}`, { headers: admin })).arrayBuffer();
        }

        const [create, inside, payStatus, outside, unknown, described] = await Promise.all([
            listener.next((event) => event.method === 'POST' && event.path === '/_instances'),
            listener.next((event) => event.path === `${basePath}/v1/commerce/products`),
            listener.next((event) => event.path === `${basePath}/v1/pay/status`),
            listener.next((event) => event.path === '/v1/commerce/products'),
            listener.next((event) => event.path === '/i/no-such-instance/v1/commerce/products'),
            listener.next((event) => event.path === `/_instances/${id}`)
        ]);

        expect(create).to.include({ status: 201, instance: null, caller: 'admin' });
        expect(create.body).to.not.exist();
        expect(inside).to.include({ status: 200, instance: basePath, query: '?limit=1', caller: 'admin' });
        expect(JSON.parse(inside.body!).count).to.equal(1);
        expect(payStatus).to.include({ status: 200, instance: basePath });
        expect(payStatus.body).to.not.exist();
        expect(outside).to.include({ status: 200, instance: null, query: '?limit=2' });
        expect(unknown).to.include({ status: 404, instance: '/i/no-such-instance', caller: null });
        expect(JSON.parse(unknown.body!).code).to.equal('instance_not_found');
        expect(described).to.include({ status: 200, instance: null });
        expect(described.body).to.not.exist();

        const everything = JSON.stringify(listener.events);
        expect(everything).to.not.contain(admin.authorization.slice('Bearer '.length));
        expect(everything).to.not.contain('eyJ');
        listener.close();
    });

    it('marks a request the console page sends as its own housekeeping, which the journal keeps all the same', async () => {

        const listener = new Listener(server);
        await listener.opened;
        const admin = adminBearer(server);
        const marks = [['housekeeping', '?limit=3&offset=7'], ['HOUSEKEEPING', '?limit=3&offset=8'], ['yes', '?limit=3&offset=9'], [null, '?limit=3&offset=10']] as const;
        for (const [mark, query] of marks) {
            const headers: Record<string, string> = mark === null ? {} : { [housekeepingHeader]: mark };
            await (await fetch(`${server.info.uri}/v1/commerce/products${query}`, { headers })).arrayBuffer();
        }

        await (await fetch(`${server.info.uri}/_faults`, { headers: { ...admin, [housekeepingHeader]: housekeepingValue } })).arrayBuffer();
        const events = await Promise.all([
            ...marks.map(([, query]) => listener.next((event) => event.path === '/v1/commerce/products' && event.query === query)),
            listener.next((event) => event.path === '/_faults')
        ]);
        expect(events.map((event) => event.housekeeping)).to.equal([true, undefined, undefined, undefined, true]);

        // Only the log view reads the mark: the data set's journal has the marked request like any other.
        const counted = await server.inject({ method: 'POST', url: '/_requests/count', headers: admin, payload: { method: 'GET', url: '/v1/commerce/products?limit=3&offset=7' } });
        expect(counted.statusCode).to.equal(200);
        expect(body<{ count: number }>(counted).count).to.equal(1);
        listener.close();
    });

    it('drops events for a listener that stopped reading once a megabyte waits for it', { timeout: 20_000 }, async () => {

        const stalled = feedOf(server).open();
        let count = 0;
        while (stalled.writableLength < maxBufferedBytes) {
            await server.inject('/v1/commerce/products?limit=100');
            count++;
        }

        const held = stalled.writableLength;
        await server.inject('/v1/commerce/products?limit=100');
        expect(stalled.writableLength).to.equal(held);
        expect(count).to.be.above(100);
        stalled.destroy();
        await until('the stalled subscriber to leave the feed', () => feedOf(server).size === 0, { everyMs: 0 });
    });

    it('marks what a fault did: the rule that answered, a reply dropped after a write or before the request ran, and nothing once cleared', async () => {

        const listener = new Listener(server);
        await listener.opened;
        const admin = adminBearer(server);
        const made = await send(server, 'POST', '/_instances', admin, { pay: true });
        expect(made.status).to.equal(201);
        const [instance] = server.app.localgate.instances.list();
        const { id } = instance!.describe(0);
        const base = `/i/${id}`;
        const faults = `/_instances/${id}/faults`;
        const dana = bearer(server, 'dana');
        const setRules = async (rules: object[], seed = 0) => {

            const res = await fetch(`${server.info.uri}${faults}`, { method: 'PUT', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ seed, rules }) });
            expect(res.status).to.equal(200);
            return (await res.json() as { rules: { id: string }[] }).rules.map((rule) => rule.id);
        };

        const money = (operation: string, key: string, amount: number) => send(server, 'POST', `${base}/v1/pay/gateway/${operation}`, { ...dana, 'idempotency-key': key }, { provider_id: 'sandbox', asset: 'USD', amount });
        // The count-th event of a path of the instance, once it has come.
        const next = async (path: string, count: number) => {

            const of = () => listener.events.filter((event) => event.path === `${base}${path}`);
            await listener.next(() => of().length >= count);
            return of()[count - 1]!;
        };

        // The console's "payment gateway down": an injected 503, marked with the rule that answered.
        const [gateway] = await setRules([{ method: 'POST', path: '/v1/pay/gateway/*', status: 503, code: 'gateway_unavailable', message: 'The payment gateway is unavailable: try again later.', retry_after: 30 }]);
        expect(await money('deposit', 'order-1', 500)).to.equal({ status: 503 });
        const down = await next('/v1/pay/gateway/deposit', 1);
        expect(down).to.include({ status: 503, caller: null, fault: gateway, fault_rule: 'POST /v1/pay/gateway/*: 503 gateway_unavailable, Retry-After: 30', fault_hits: 1, dropped: null });
        expect(JSON.parse(down.body!)).to.include({ code: 'gateway_unavailable', message: 'The payment gateway is unavailable: try again later.' });
        expect(['written', 'unsent'].filter((key) => key in down)).to.equal([]);

        // "Reply lost after the write": the deposit is written, its reply dropped; the retry with its key is replayed.
        const [lost] = await setRules([{ method: 'POST', path: '/v1/*', drop: 'after', times: 1 }]);
        expect(await money('deposit', 'order-2', 500)).to.equal({ error: 'ECONNRESET' });
        const dropped = await next('/v1/pay/gateway/deposit', 2);
        expect(dropped).to.include({ status: null, caller: 'dana', fault: lost, fault_rule: 'POST /v1/*: reply dropped after it runs', fault_hits: 1, dropped: 'after', written: true, unsent: { status: 201, code: null } });
        expect(dropped.body).to.not.exist();
        expect(await money('deposit', 'order-2', 500)).to.equal({ status: 201 });
        const retried = await next('/v1/pay/gateway/deposit', 3);
        expect(retried).to.include({ status: 201, caller: 'dana' });
        expect(['fault', 'fault_rule', 'dropped', 'written', 'unsent'].filter((key) => key in retried)).to.equal([]);
        const ledger = async () => (await (await fetch(`${server.info.uri}${base}/v1/pay/wallet/transactions`, { headers: dana })).json() as { total: number }).total;
        expect(await ledger()).to.equal(1);

        // A replay whose reply is lost wrote nothing, though it answers 201 as the write did.
        const [lostReplay] = await setRules([{ method: 'POST', path: '/v1/*', drop: 'after', times: 1 }]);
        expect(await money('deposit', 'order-2', 500)).to.equal({ error: 'ECONNRESET' });
        expect(await next('/v1/pay/gateway/deposit', 4)).to.include({ status: null, fault: lostReplay, dropped: 'after', written: false, unsent: { status: 201, code: null } });
        expect(await ledger()).to.equal(1);

        // A refused write whose reply is lost wrote nothing; nor did a read, nor a request dropped before it ran.
        const [refusedWrite] = await setRules([{ method: 'POST', path: '/v1/*', drop: 'after', times: 1 }]);
        expect(await money('withdraw', 'order-3', 900)).to.equal({ error: 'ECONNRESET' });
        expect(await next('/v1/pay/gateway/withdraw', 1)).to.include({ status: null, fault: refusedWrite, dropped: 'after', written: false, unsent: { status: 409, code: 'insufficient_funds' } });

        const [read, early] = await setRules([{ method: 'get', path: '/v1/commerce/businesses', drop: 'after' }, { path: '/v1/logistics/*', drop: 'before' }]);
        expect(await send(server, 'GET', `${base}/v1/commerce/businesses`)).to.equal({ error: 'ECONNRESET' });
        expect(await send(server, 'GET', `${base}/v1/logistics/vehicles`)).to.equal({ error: 'ECONNRESET' });
        expect(await next('/v1/commerce/businesses', 1)).to.include({ status: null, fault: read, fault_rule: 'GET /v1/commerce/businesses: reply dropped after it runs', dropped: 'after', written: false, unsent: { status: 200, code: null } });
        const closed = await next('/v1/logistics/vehicles', 1);
        expect(closed).to.include({ status: null, fault: early, fault_rule: 'any method /v1/logistics/*: connection closed before it runs', dropped: 'before', written: false, unsent: null });
        expect(closed.body).to.not.exist();

        // Cleared, the data set answers as ever.
        expect((await send(server, 'DELETE', faults, admin)).status).to.equal(204);
        expect(await money('deposit', 'order-4', 500)).to.equal({ status: 201 });
        expect('fault' in await next('/v1/pay/gateway/deposit', 5)).to.be.false();
        expect(listener.events.filter((event) => event.fault).map((event) => event.fault)).to.equal([gateway, lost, lostReplay, refusedWrite, read, early]);
        // Every rule was set with a request that carried the admin token: the log shows those requests, never the token.
        expect(listener.events.filter((event) => event.method === 'PUT' && event.path === faults)).to.have.length(5);
        expect(JSON.stringify(listener.events)).to.not.contain(admin.authorization.slice('Bearer '.length));
        expect((await send(server, 'DELETE', `/_instances/${id}`, admin)).status).to.equal(204);
        listener.close();
    });

    it('says a dropped reply was written from what its request did: a write that failed its response schema, or one whose client gave up', async () => {

        const own = await testServer({ port: 0, host: '127.0.0.1' });
        // A handler's answer that breaks its route's response schema, after the write: the server answers 500.
        own.ext('onPostHandler', (request, h) => {

            const response = request.response as { source?: Record<string, unknown> };
            if (request.headers['x-break-answer'] && response.source) {
                response.source.unexpected = true;
            }

            return h.continue;
        });
        // A client that closes its connection as its request waits to run, or once it has run: the server then answers no one.
        let leaving: { at: 'onRequest' | 'onPostHandler'; client: Http.ClientRequest } | null = null;
        const leave = async (at: 'onRequest' | 'onPostHandler', request: Request, h: ResponseToolkit) => {

            if (leaving?.at === at && request.path.startsWith('/v1/')) {
                const closed = new Promise((resolve) => request.raw.res.once('close', resolve));
                leaving.client.destroy();
                leaving = null;
                await closed;
            }

            return h.continue;
        };

        own.ext('onRequest', (request, h) => leave('onRequest', request, h), { after: ['localgate-faults'] });
        own.ext('onPostHandler', (request, h) => leave('onPostHandler', request, h));
        await own.start();
        const listener = new Listener(own);
        try {
            await listener.opened;
            const admin = adminBearer(own);
            const ann = bearer(own, 'ann');
            const products = async () => body<{ total: number }>(await own.inject('/v1/commerce/products?limit=1')).total;
            const event = async (count: number) => {

                const of = () => listener.events.filter((one) => one.path === '/v1/commerce/products' && one.method === 'POST');
                await listener.next(() => of().length >= count);
                return of()[count - 1]!;
            };

            const business = body<{ data: { id: string }[] }>(await own.inject('/v1/commerce/businesses?limit=1')).data[0]!.id;
            const product = { name: 'Kept', price: 1, currency: 'USD', business_id: business };
            expect((await own.inject({ method: 'PUT', url: '/_faults', headers: admin, payload: { rules: [{ method: 'POST', path: '/v1/commerce/products', drop: 'after' }] } })).statusCode).to.equal(200);
            try {
                const made = await products();
                expect(await send(own, 'POST', '/v1/commerce/products', { ...ann, 'x-break-answer': 'yes' }, product)).to.equal({ error: 'ECONNRESET' });
                expect(await event(1)).to.include({ status: null, dropped: 'after', written: true, unsent: { status: 500, code: 'internal_server_error' } });
                expect(await products()).to.equal(made + 1);

                // The client gives up as the request waits (its rule's latency, say): the request never runs.
                const giveUp = (at: 'onRequest' | 'onPostHandler') => {

                    return new Promise<string>((resolve) => {

                        const client = Http.request(`${own.info.uri}/v1/commerce/products`, { method: 'POST', agent: false, headers: { ...ann, 'content-type': 'application/json' } });
                        leaving = { at, client };
                        client.once('error', (err: NodeJS.ErrnoException) => resolve(err.code!));
                        client.end(JSON.stringify(product));
                    });
                };

                expect(await giveUp('onRequest')).to.equal('ECONNRESET');
                expect(await event(2)).to.include({ status: null, dropped: 'after', written: false, unsent: null });
                expect(await products()).to.equal(made + 1);

                // The client gives up once the request has been carried out: the record is written, and the log says so.
                expect(await giveUp('onPostHandler')).to.equal('ECONNRESET');
                expect(await event(3)).to.include({ status: null, dropped: 'after', written: true, unsent: null });
                expect(await products()).to.equal(made + 2);

                // With no rule left, a client that gives up once its request ran is no fault: the log shows the answer it left behind.
                expect((await own.inject({ method: 'DELETE', url: '/_faults', headers: admin })).statusCode).to.equal(204);
                expect(await giveUp('onPostHandler')).to.equal('ECONNRESET');
                const left = await event(4);
                expect(left).to.include({ status: 201, caller: 'ann', public: false });
                expect(left.dropped).to.not.exist();
                expect(await products()).to.equal(made + 3);
            }
            finally {
                await own.inject({ method: 'DELETE', url: '/_faults', headers: admin });
            }
        }
        finally {
            listener.close();
            await own.stop({ timeout: 60_000 });
        }
    });
});


describe('stopping a server with the live log open', () => {

    it('ends every event stream and stops', async () => {

        const server = await testServer({ port: 0, host: '127.0.0.1' });
        await server.start();
        const listeners = [new Listener(server), new Listener(server)];
        await Promise.all(listeners.map((listener) => listener.opened));

        await server.stop({ timeout: 60_000 });
        await Promise.all(listeners.map((listener) => listener.end()));
        expect(listeners.every((listener) => listener.ended)).to.be.true();
        expect(feedOf(server).size).to.equal(0);
    });
});
