import Http from 'node:http';

import Code from '@hapi/code';
import type { Server, ServerInjectOptions } from '@hapi/hapi';
import Lab from '@hapi/lab';

import type { Event } from '../lib/outbox';
import { EventSubscription, maxStreamsPerDataSet, type StreamSettings } from '../lib/events/stream';
import type { Scope } from '../lib/scope';
import type { DataSetDatabases } from '../lib/storage/engine';
import { adminBearer, bearer, body, type List, testServer } from './helpers/server';
import { commerceNamespace } from '../lib/namespaces/commerce';
import { freshDatabase, skipWithoutPostgres } from './helpers/postgres';
import { until } from './helpers/until';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


const bakery = 'd851fadb-03ca-5a24-ba16-c15cce19933b';

// With sequential ids, the event at a position has an id that spells it.
const eventId = (position: number) => `00000000-0000-4000-9000-${position.toString(16).padStart(12, '0')}`;

interface Frame {
    id?: string;
    event?: string;
    data?: Event;
    comment?: string;
    retry?: string;
}


/** One subscriber of an events stream over a real socket: its frames as they come, parsed. */
class Subscriber {

    readonly frames: Frame[] = [];
    readonly opened: Promise<Http.IncomingMessage>;
    text = '';
    private rest = '';
    private waiters: (() => void)[] = [];
    private readonly req: Http.ClientRequest;
    ended = false;

    constructor(server: Server, path: string, headers: Record<string, string> = {}) {

        this.req = Http.get(`${server.info.uri}${path}`, { headers: { ...adminBearer(server), ...headers } });
        this.opened = new Promise((resolve, reject) => {

            this.req.once('error', reject);
            this.req.once('response', (res) => {

                res.setEncoding('utf8');
                res.on('data', (chunk: string) => this.take(chunk));
                res.once('end', () => this.finish());
                res.once('error', () => this.finish());
                resolve(res);
            });
        });
        this.req.once('error', () => this.finish());
    }

    get events(): Frame[] {

        return this.frames.filter((frame) => frame.id !== undefined);
    }

    /** Resolves once the stream holds at least `count` events. */
    async waitForEvents(count: number): Promise<Frame[]> {

        while (this.events.length < count && !this.ended) {
            await this.change();
        }

        return this.events;
    }

    async waitFor(predicate: () => boolean): Promise<void> {

        while (!predicate()) {
            await this.change();
        }
    }

    async end(): Promise<void> {

        await this.waitFor(() => this.ended);
    }

    close(): void {

        this.req.destroy();
    }

    private change(): Promise<void> {

        return new Promise((resolve) => this.waiters.push(resolve));
    }

    private take(chunk: string): void {

        this.text += chunk;
        const blocks = (this.rest + chunk).split('\n\n');
        this.rest = blocks.pop()!;
        for (const block of blocks) {
            const frame: Frame = {};
            for (const line of block.split('\n')) {
                if (line.startsWith(':')) {
                    frame.comment = line.slice(1).trim();
                }
                else {
                    const [field, ...value] = line.split(': ');
                    const text = value.join(': ');
                    if (field === 'data') {
                        frame.data = JSON.parse(text) as Event;
                    }
                    else {
                        (frame as Record<string, string>)[field!] = text;
                    }
                }
            }

            this.frames.push(frame);
        }

        this.notify();
    }

    private finish(): void {

        this.ended = true;
        this.notify();
    }

    private notify(): void {

        for (const waiter of this.waiters.splice(0)) {
            waiter();
        }
    }
}


describe('events', () => {

    let server: Server;
    const logged: object[] = [];

    const admin = (method: string, url: string, payload?: object, headers: Record<string, string> = {}) => server.inject({ method, url, headers: { ...adminBearer(server), ...headers }, payload } as ServerInjectOptions);
    const create = async (options: object = {}) => body<{ id: string; base_path: string }>(await admin('POST', '/_instances', { ids: 'sequential', ...options }));
    const addProduct = async (base: string, name: string) => {

        const res = await server.inject({ method: 'POST', url: `${base}/v1/commerce/products`, headers: bearer(server, 'ann'), payload: { name, price: 2.5, currency: 'USD', business_id: bakery } });
        expect(res.statusCode, res.payload).to.equal(201);
        return body<Record<string, unknown> & { id: string; created_at: string }>(res);
    };

    const list = async (url: string) => {

        const res = await admin('GET', url);
        expect(res.statusCode, res.payload).to.equal(200);
        return body<List<Event>>(res);
    };

    before(async () => {

        server = await testServer({ eventHeartbeatMs: 50 });
        server.events.on('log', (event) => logged.push(event));
        await server.start();
    });

    after(async () => {

        await server.stop();
    });

    describe('GET …/events', () => {

        it('lists the events of an instance in their order, each with the record as its owner reads it', async () => {

            const { id, base_path: base } = await create();
            const first = await addProduct(base, 'Loaf');
            const second = await addProduct(base, 'Roll');
            const page = await list(`/_instances/${id}/events`);
            expect(page.count).to.equal(2);
            expect(page.total).to.equal(2);
            expect(page.data).to.equal([
                { id: eventId(1), type: 'commerce.product.created', created_at: first.created_at, data: first },
                { id: eventId(2), type: 'commerce.product.created', created_at: second.created_at, data: second }
            ]);
        });

        it('lists the events after one, at most limit, with the total that follows it', async () => {

            const { id, base_path: base } = await create();
            for (const name of ['a', 'b', 'c', 'd']) {
                await addProduct(base, name);
            }

            const page = await list(`/_instances/${id}/events?after=${eventId(1)}&limit=2`);
            expect(page.data.map((event) => event.id)).to.equal([eventId(2), eventId(3)]);
            expect(page.count).to.equal(2);
            expect(page.total).to.equal(3);
            const last = await list(`/_instances/${id}/events?after=${eventId(4)}`);
            expect(last).to.equal({ data: [], count: 0, total: 0 });
        });

        it('lists only the events of a type, or of the types a prefix matches', async () => {

            const { id, base_path: base } = await create();
            const product = await addProduct(base, 'Loaf');
            const inquiry = await server.inject({ method: 'POST', url: `${base}/v1/commerce/inquiries`, headers: bearer(server, 'bob'), payload: { product_id: product.id, message: 'Fresh?' } });
            expect(inquiry.statusCode, inquiry.payload).to.equal(201);

            const types = async (type: string) => (await list(`/_instances/${id}/events?type=${encodeURIComponent(type)}`)).data.map((event) => event.type);
            expect(await types('commerce.inquiry.created')).to.equal(['commerce.inquiry.created']);
            expect(await types('commerce.*')).to.equal(['commerce.product.created', 'commerce.inquiry.created']);
            expect(await types('*')).to.equal(['commerce.product.created', 'commerce.inquiry.created']);
            expect(await types('logistics.*')).to.equal([]);
            const page = await list(`/_instances/${id}/events?type=commerce.product.created&after=${eventId(1)}`);
            expect(page).to.equal({ data: [], count: 0, total: 0 });
        });

        it('lists the default data set\'s events at /_events', async () => {

            const earlier = (await list('/_events')).total;
            const product = await addProduct('', 'Default loaf');
            const page = await list('/_events?type=commerce.product.created');
            expect(page.total).to.equal(earlier + 1);
            expect(page.data.at(-1)!.data).to.equal(product);
        });

        it('keeps each instance\'s events to itself', async () => {

            const one = await create();
            const other = await create();
            await addProduct(one.base_path, 'Mine');
            expect((await list(`/_instances/${one.id}/events`)).total).to.equal(1);
            expect(await list(`/_instances/${other.id}/events`)).to.equal({ data: [], count: 0, total: 0 });
            const res = await admin('GET', `/_instances/${other.id}/events?after=${eventId(1)}`);
            expect(res.statusCode).to.equal(422);
        });

        it('refuses an after the data set does not hold with a 422 naming it', async () => {

            const { id } = await create();
            const res = await admin('GET', `/_instances/${id}/events?after=${eventId(9)}`);
            expect(res.statusCode).to.equal(422);
            expect(body(res)).to.include({ code: 'event_not_found', details: [{ field: 'after', message: body<{ message: string }>(res).message }] });
        });

        const refusals: [string, string][] = [
            ['type=commerce.product.made', 'type'],
            ['type=nothing.*', 'type'],
            [`type=${'a'.repeat(5000)}`, 'type'],
            [`after=${'a'.repeat(5000)}`, 'after'],
            ['limit=0', 'limit'],
            ['limit=1001', 'limit'],
            ['order=desc', 'order']
        ];
        for (const [query, field] of refusals) {
            it(`refuses ${query.slice(0, 40)} with a 400 naming ${field}`, async () => {

                const { id } = await create();
                for (const url of [`/_instances/${id}/events?${query}`, `/_events?${query}`, `/_instances/${id}/events/stream?${query}`]) {
                    const res = await admin('GET', url);
                    expect(res.statusCode, url).to.equal(400);
                    expect(body<{ details: { field: string }[] }>(res).details.map((detail) => detail.field)).to.equal([field]);
                }
            });
        }

        it('answers admins only', async () => {

            const { id } = await create();
            for (const url of [`/_instances/${id}/events`, '/_events', `/_instances/${id}/events/stream`, '/_events/stream']) {
                const user = await server.inject({ method: 'GET', url, headers: bearer(server, 'ann') });
                expect(user.statusCode, url).to.equal(403);
                expect(body(user).code).to.equal('admin_required');
                const nobody = await server.inject({ method: 'GET', url });
                expect(nobody.statusCode, url).to.equal(401);
            }
        });

        it('answers 404 for an instance that is gone', async () => {

            const { id } = await create();
            await admin('DELETE', `/_instances/${id}`);
            for (const url of [`/_instances/${id}/events`, `/_instances/${id}/events/stream`]) {
                const res = await admin('GET', url);
                expect(res.statusCode, url).to.equal(404);
                expect(body(res).code).to.equal('instance_not_found');
            }
        });
    });

    describe('GET …/events/stream', () => {

        it('streams each event written from now on as id, event and data lines, uncompressed', async () => {

            const { id, base_path: base } = await create();
            await addProduct(base, 'Before');
            const subscriber = new Subscriber(server, `/_instances/${id}/events/stream`, { 'accept-encoding': 'gzip' });
            const res = await subscriber.opened;
            expect(res.statusCode).to.equal(200);
            expect(res.headers['content-type']).to.equal('text/event-stream; charset=utf-8');
            expect(res.headers['content-encoding']).to.equal('identity');
            expect(res.headers['cache-control']).to.equal('no-store');
            await subscriber.waitFor(() => subscriber.frames.length > 0);

            const product = await addProduct(base, 'After');
            const [frame] = await subscriber.waitForEvents(1);
            const event: Event = { id: eventId(2), type: 'commerce.product.created', created_at: product.created_at, data: product };
            expect(frame).to.equal({ id: eventId(2), event: 'commerce.product.created', data: event });
            expect(subscriber.text).to.startWith('retry: 2000\n\n');
            expect(subscriber.text).to.contain(`id: ${eventId(2)}\nevent: commerce.product.created\ndata: ${JSON.stringify(event)}\n\n`);
            subscriber.close();
        });

        it('gives a subscriber that resumes (Last-Event-ID, or after) exactly what a live one read, in order, past a read\'s size', { timeout: 60_000 }, async () => {

            const { id, base_path: base } = await create();
            await addProduct(base, 'First');
            const live = new Subscriber(server, `/_instances/${id}/events/stream`);
            await live.opened;
            const count = 1100;
            await Promise.all(Array.from({ length: count }, (_, index) => addProduct(base, `p${index}`)));
            const seen = await live.waitForEvents(count);
            expect(seen.map((frame) => frame.id)).to.equal(Array.from({ length: count }, (_, index) => eventId(index + 2)));

            // Last-Event-ID wins over after.
            const resumes: [string, Record<string, string>][] = [[`?after=${eventId(1)}`, {}], [`?after=${eventId(600)}`, { 'last-event-id': eventId(1) }]];
            for (const [query, headers] of resumes) {
                const late = new Subscriber(server, `/_instances/${id}/events/stream${query}`, headers);
                expect(await late.waitForEvents(count)).to.equal(seen);
                late.close();
            }

            live.close();
        });

        it('streams what a move of the clock applies, once the move has committed, at the instant it fell due', async () => {

            const { id, base_path: base } = await create({ pay: true, clock: '2040-01-01T00:00:00Z' });
            const subscriber = new Subscriber(server, `/_instances/${id}/events/stream?type=pay.*`);
            await subscriber.opened;
            await subscriber.waitFor(() => subscriber.frames.length > 0);
            const deposit = await server.inject({
                method: 'POST', url: `${base}/v1/pay/gateway/deposit`, headers: { ...bearer(server, 'ada'), 'idempotency-key': 'k-1' },
                payload: { provider_id: 'bank-transfer', asset: 'EUR', amount: 2500 }
            });
            expect(deposit.statusCode, deposit.payload).to.equal(201);
            const pending = body<{ id: string; settles_at: string }>(deposit);
            await subscriber.waitForEvents(1);
            const moved = await admin('PUT', `/_instances/${id}/clock`, { advance: '3d' });
            expect(moved.statusCode, moved.payload).to.equal(200);
            const [created, completed] = await subscriber.waitForEvents(2);
            expect(created!.event).to.equal('pay.transaction.created');
            expect(created!.data!.data).to.equal(body(deposit));
            expect(completed!.event).to.equal('pay.transaction.completed');
            expect(completed!.data!.created_at).to.equal(pending.settles_at);
            expect(completed!.data!.data).to.include({ id: pending.id, status: 'completed', settled_at: pending.settles_at });
            subscriber.close();
        });

        it('streams only the types asked for', async () => {

            const { id, base_path: base } = await create();
            const subscriber = new Subscriber(server, `/_instances/${id}/events/stream?type=commerce.inquiry.*`);
            await subscriber.opened;
            await subscriber.waitFor(() => subscriber.frames.length > 0);
            const product = await addProduct(base, 'Loaf');
            await server.inject({ method: 'POST', url: `${base}/v1/commerce/inquiries`, headers: bearer(server, 'bob'), payload: { product_id: product.id, message: 'Fresh?' } });
            const [frame] = await subscriber.waitForEvents(1);
            expect(frame!.event).to.equal('commerce.inquiry.created');
            expect(frame!.id).to.equal(eventId(2));
            subscriber.close();
        });

        it('never shows one instance\'s events to another\'s subscribers', async () => {

            const one = await create();
            const other = await create();
            const mine = new Subscriber(server, `/_instances/${one.id}/events/stream`);
            const theirs = new Subscriber(server, `/_instances/${other.id}/events/stream`);
            await Promise.all([mine.opened, theirs.opened]);
            await addProduct(one.base_path, 'Mine');
            await addProduct(other.base_path, 'Theirs');
            const [own] = await mine.waitForEvents(1);
            const [their] = await theirs.waitForEvents(1);
            expect(own!.data!.data.name).to.equal('Mine');
            expect(their!.data!.data.name).to.equal('Theirs');
            await addProduct(other.base_path, 'Theirs again');
            await theirs.waitForEvents(2);
            expect(mine.events).to.have.length(1);
            mine.close();
            theirs.close();
        });

        it('streams the default data set\'s events at /_events/stream', async () => {

            const subscriber = new Subscriber(server, '/_events/stream');
            await subscriber.opened;
            await subscriber.waitFor(() => subscriber.frames.length > 0);
            const product = await addProduct('', 'Streamed loaf');
            const [frame] = await subscriber.waitForEvents(1);
            expect(frame!.data!.data).to.equal(product);
            subscriber.close();
        });

        it('sends a heartbeat comment between events', async () => {

            const { id } = await create();
            const subscriber = new Subscriber(server, `/_instances/${id}/events/stream`);
            await subscriber.waitFor(() => subscriber.frames.some((frame) => frame.comment === 'heartbeat'));
            expect(subscriber.text).to.contain('\n\n: heartbeat\n\n');
            subscriber.close();
        });

        it('ends the streams of an instance as it is deleted', async () => {

            const { id } = await create();
            const subscriber = new Subscriber(server, `/_instances/${id}/events/stream`);
            await subscriber.opened;
            await subscriber.waitFor(() => subscriber.frames.length > 0);
            const res = await admin('DELETE', `/_instances/${id}`);
            expect(res.statusCode).to.equal(204);
            await subscriber.end();
            expect(subscriber.ended).to.be.true();
        });

        it('refuses a stream past the most one data set serves at once with a 429, counting no other data set\'s', async () => {

            const { id } = await create();
            const path = `/_instances/${id}/events/stream`;
            const open = Array.from({ length: maxStreamsPerDataSet }, () => new Subscriber(server, path));
            await Promise.all(open.map((subscriber) => subscriber.waitFor(() => subscriber.frames.length > 0)));
            const refused = await admin('GET', path);
            expect(refused.statusCode).to.equal(429);
            expect(body<{ code: string }>(refused).code).to.equal('too_many_streams');
            const other = await create();
            const elsewhere = new Subscriber(server, `/_instances/${other.id}/events/stream`);
            await elsewhere.waitFor(() => elsewhere.frames.length > 0);
            for (const subscriber of [...open, elsewhere]) {
                subscriber.close();
            }
        });

        it('refuses a Last-Event-ID the data set does not hold with a 422 naming it, and a hostile one with a 400', async () => {

            const { id } = await create();
            const missing = await admin('GET', `/_instances/${id}/events/stream`, undefined, { 'last-event-id': eventId(3) });
            expect(missing.statusCode).to.equal(422);
            expect(body<{ details: { field: string }[] }>(missing).details[0]!.field).to.equal('Last-Event-ID');
            const hostile = await admin('GET', `/_instances/${id}/events/stream`, undefined, { 'last-event-id': 'x'.repeat(5000) });
            expect(hostile.statusCode).to.equal(400);
            expect(body<{ details: { field: string }[] }>(hostile).details[0]!.field).to.equal('last-event-id');
        });
    });

    it('ends every stream as the server stops', async () => {

        const other = await testServer();
        await other.start();
        const subscriber = new Subscriber(other, '/_events/stream');
        await subscriber.opened;
        await subscriber.waitFor(() => subscriber.frames.length > 0);
        await other.stop();
        await subscriber.end();
        expect(subscriber.ended).to.be.true();
    });

    it('streams to a subscriber of the default data set on PostgreSQL what another process wrote, by its poll', { skip: skipWithoutPostgres('events on PostgreSQL'), timeout: 60_000 }, async () => {

        const database = await freshDatabase();
        // Two servers on one database: what the second writes, no request of the first tells it of.
        const shared = { databaseUrl: database.url, database: { poolMax: 4 }, jwtSecret: server.app.localgate.secret };
        const first = await testServer(shared);
        const second = await testServer(shared);
        try {
            await first.start();
            const subscriber = new Subscriber(first, '/_events/stream?type=commerce.*');
            await subscriber.opened;
            await subscriber.waitFor(() => subscriber.frames.length > 0);
            const made = await second.inject({ method: 'POST', url: '/v1/commerce/products', headers: bearer(second, 'ann'), payload: { name: 'Elsewhere', price: 2.5, currency: 'USD', business_id: bakery } });
            expect(made.statusCode, made.payload).to.equal(201);
            const [frame] = await subscriber.waitForEvents(1);
            expect(frame!.data!.data).to.equal(body(made));
            const listed = body<List<Event>>(await first.inject({ url: `/_events?after=${frame!.id!}`, headers: adminBearer(first) }));
            expect(listed).to.equal({ data: [], count: 0, total: 0 });
            subscriber.close();
        }
        finally {
            await first.stop();
            await second.stop();
            await database.drop();
        }
    });

    describe('a subscription', () => {

        const settings = (extra: Partial<StreamSettings> = {}): StreamSettings => ({ heartbeatMs: 60_000, pollMs: 0, maxBufferedBytes: 1024 * 1024, log: (tags, data) => logged.push({ tags, data }), ...extra });
        const instanceOf = (id: string) => server.app.localgate.instances.find(id)!;
        const closed = (subscription: EventSubscription) => new Promise((resolve) => subscription.stream.once('close', resolve));

        it('drops a reader that leaves more than the bound unread', async () => {

            const { id, base_path: base } = await create();
            const subscription = new EventSubscription(instanceOf(id), { position: 0, rank: 0 }, null, settings({ maxBufferedBytes: 1000 }));
            const ended = closed(subscription);
            // Nobody reads the stream: what passes the stream's own buffer stays unread.
            for (let i = 0; i < 80; ++i) {
                await addProduct(base, `p${i}`);
            }

            await ended;
            expect(subscription.stream.destroyed).to.be.true();
        });

        it('reads events other processes wrote, which no request here noticed, by its poll', async () => {

            const { id } = await create();
            const instance = instanceOf(id);
            const subscription = new EventSubscription(instance, { position: 0, rank: 1 }, null, settings({ pollMs: 10 }));
            const text: string[] = [];
            subscription.stream.on('data', (chunk: Buffer) => text.push(chunk.toString()));
            await instance.data.store(commerceNamespace).createProduct({ name: 'Elsewhere', description: '', price: 1, currency: 'USD', business_id: bakery }, 'ann');
            await until('the stream to carry the product', () => text.join('').includes('Elsewhere'));

            subscription.close();
            subscription.close();
            expect(text.join('')).to.contain(`id: ${eventId(1)}\n`);
        });

        it('reads once more when told of events while it reads', async () => {

            const { id, base_path: base } = await create();
            const instance = instanceOf(id);
            await addProduct(base, 'One');
            const subscription = new EventSubscription(instance, { position: 0, rank: 1 }, null, settings());
            const text: string[] = [];
            subscription.stream.on('data', (chunk: Buffer) => text.push(chunk.toString()));
            // The first read is under way: a notice now comes while it reads.
            instance.services.committed({ events: 1, deliveries: false, due: null });
            await until('the stream to carry the first event', () => text.join('').includes(eventId(1)));

            subscription.close();
            expect(text.join('').match(/^id: /gm)).to.have.length(1);
        });

        // A scope whose reads answer late: the subscription is closed meanwhile, as an instance deleted mid-read is.
        const lateScope = (id: string, answer: (data: DataSetDatabases) => Promise<unknown>): Scope => {

            const instance = instanceOf(id);
            const late: DataSetDatabases = Object.create(instance.data, { eventLogs: { value: () => new Promise((resolve) => setTimeout(resolve, 20)).then(() => answer(instance.data)) } });
            return { basePath: instance.basePath, services: instance.services, data: late };
        };

        it('writes nothing a read brings once it is closed', async () => {

            const { id, base_path: base } = await create();
            await addProduct(base, 'Late');
            const subscription = new EventSubscription(lateScope(id, (data) => data.eventLogs()), { position: 0, rank: 0 }, null, settings());
            const text: string[] = [];
            subscription.stream.on('data', (chunk: Buffer) => text.push(chunk.toString()));
            subscription.close();
            await new Promise((resolve) => setTimeout(resolve, 50));
            expect(text.join('')).to.equal('retry: 2000\n\n');
        });

        it('reads no further once it is closed, though told of events while it read', async () => {

            const { id, base_path: base } = await create();
            await addProduct(base, 'Late');
            let reads = 0;
            const scope = lateScope(id, (data) => {

                reads += 1;
                return data.eventLogs();
            });
            const subscription = new EventSubscription(scope, { position: 0, rank: 0 }, null, settings());
            // Told while its first read waits: it would read once more when done.
            scope.services.committed({ events: 1, deliveries: false, due: null });
            subscription.close();
            await new Promise((resolve) => setTimeout(resolve, 80));
            expect(reads).to.equal(1);
        });

        it('logs no failure of a read that fails once it is closed', async () => {

            const { id } = await create();
            const earlier = logged.length;
            const subscription = new EventSubscription(lateScope(id, () => Promise.reject(new Error('gone'))), { position: 0, rank: 0 }, null, settings());
            subscription.stream.resume();
            subscription.close();
            await new Promise((resolve) => setTimeout(resolve, 50));
            expect(logged.length).to.equal(earlier);
        });

        it('ends its stream and logs the failure when a read fails', async () => {

            const { id } = await create();
            const instance = instanceOf(id);
            const failing: DataSetDatabases = Object.create(instance.data, { eventLogs: { value: () => Promise.reject(new Error('down')) } });
            const scope: Scope = { basePath: instance.basePath, services: instance.services, data: failing };
            const subscription = new EventSubscription(scope, { position: 0, rank: 0 }, null, settings());
            subscription.stream.resume();
            await closed(subscription);
            expect(logged.at(-1)).to.equal({ tags: ['error', 'listener'], data: { task: 'event stream', type: 'Error', at: (logged.at(-1) as { data: { at: string[] } }).data.at } });
        });
    });
});
