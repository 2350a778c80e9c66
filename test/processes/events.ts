import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Http from 'node:http';
import type { AddressInfo } from 'node:net';
import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';
import Database from 'better-sqlite3';

import { mintToken } from '../../lib';
import { webhookId } from '../../lib/outbox';
import { measured, send, startAll, stopAll, withDatabase } from '../helpers/pg-processes';
import { skipWithoutPostgres } from '../helpers/postgres';
import { spawnServer, type SpawnedServer } from '../helpers/processes';
import { tempDir } from '../helpers/server';
import { until } from '../helpers/until';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


// Webhooks across processes, through real HTTP: a `localgate start` killed with SIGKILL while its receiver fails
// delivers every event it committed after its restart, with the webhook-id of the attempts before (on SQLite files and
// on PostgreSQL); three processes on one PostgreSQL database send each delivery once; two processes send each attempt
// once to a receiver slower than their leases (on SQLite files and on PostgreSQL). The receivers are node:http
// servers of the test. LOCALGATE_TEST_MEASURE=1 prints what each run saw.

const skip = skipWithoutPostgres('test/processes/events.ts');
// A business of the demo data: any caller may add products to it.
const bakery = 'd851fadb-03ca-5a24-ba16-c15cce19933b';


interface Delivery {
    webhookId: string;
    eventId: string;
    type: string;
    dataId: string;
    body: string;
    // What the receiver answered it, and when it arrived (the wall clock's milliseconds).
    status: number;
    at: number;
}


interface Receiver {
    url: string;
    deliveries: Delivery[];
    status: number;
    // The deliveries it has not answered yet.
    unanswered: number;
    close(): Promise<void>;
}


interface ListedEvent {
    id: string;
    type: string;
    data: { id: string };
}


interface JournalEntry {
    webhook_id: string;
    attempt: number;
    status: number | null;
}


/**
 * A loopback receiver that keeps every delivery as it arrives and answers each with its current status, after
 * `answerAfterMs`.
 */
async function receiver(status: number, answerAfterMs = 0): Promise<Receiver> {

    const made: Receiver = { url: '', deliveries: [], status, unanswered: 0, close: () => Promise.resolve() };
    const answers = new Set<NodeJS.Timeout>();
    const server = Http.createServer((req, res) => {

        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {

            const body = Buffer.concat(chunks).toString();
            const event = JSON.parse(body) as ListedEvent;
            made.deliveries.push({ webhookId: String(req.headers['webhook-id']), eventId: event.id, type: event.type, dataId: event.data.id, body, status: made.status, at: Date.now() });
            made.unanswered += 1;
            const answer = setTimeout(() => {

                answers.delete(answer);
                made.unanswered -= 1;
                res.writeHead(made.status).end();
            }, answerAfterMs);
            answers.add(answer);
        });
    });

    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    made.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    made.close = () => {

        answers.forEach(clearTimeout);
        server.closeAllConnections();
        return new Promise((resolve) => server.close(() => resolve()));
    };

    return made;
}


function admin(secret: string): Record<string, string> {

    return { authorization: `Bearer ${mintToken(secret, 'events-admin', 3600, { admin: true })}`, 'content-type': 'application/json' };
}


/** Sets the default data set's one endpoint (paused, when asked), retrying after a second a few times: answers its id. */
async function setEndpoint(server: SpawnedServer, secret: string, url: string, paused = false): Promise<string> {

    const res = await fetch(`${server.url}/_webhooks`, { method: 'PUT', headers: admin(secret), body: JSON.stringify({ endpoints: [{ url, types: ['commerce.product.created'], retry_schedule: ['1s', '1s', '2s', '5s', '10s', '30s', '1m'], disabled: paused }] }) });
    const text = await res.text();
    expect(res.status, text).to.equal(200);
    return (JSON.parse(text) as { endpoints: { id: string }[] }).endpoints[0]!.id;
}


/** Every event the default data set lists, page by page. */
async function listEvents(server: SpawnedServer, secret: string): Promise<ListedEvent[]> {

    const events: ListedEvent[] = [];
    for (;;) {
        const after = events.length ? `&after=${events[events.length - 1]!.id}` : '';
        const res = await fetch(`${server.url}/_events?limit=1000${after}`, { headers: admin(secret) });
        const text = await res.text();
        expect(res.status, text).to.equal(200);
        const page = JSON.parse(text) as { data: ListedEvent[] };
        events.push(...page.data);
        if (page.data.length < 1000) {
            return events;
        }
    }
}


/** Every attempt a process's delivery journal holds, page by page (100 at most a page). */
async function journal(server: SpawnedServer, secret: string): Promise<JournalEntry[]> {

    const entries: JournalEntry[] = [];
    for (;;) {
        const res = await fetch(`${server.url}/_webhooks/deliveries?limit=100&offset=${entries.length}`, { headers: admin(secret) });
        const text = await res.text();
        expect(res.status, text).to.equal(200);
        const page = JSON.parse(text) as { data: JournalEntry[] };
        entries.push(...page.data);
        if (page.data.length < 100) {
            return entries;
        }
    }
}


/** Product writes, answered 201 each: the ids of the products. */
async function writeProducts(servers: SpawnedServer[], secret: string, count: number, label: string): Promise<string[]> {

    const replies = await Promise.all(Array.from({ length: count }, (_, i) => send(`${servers[i % servers.length]!.url}/v1/commerce/products`, secret, `writer-${i % 10}`, { name: `${label} ${i}`, price: 2.5, currency: 'USD', business_id: bakery })));
    for (const reply of replies) {
        expect(reply.status, reply.text).to.equal(201);
    }

    return replies.map((reply) => String(reply.body.id));
}


/**
 * A server whose receiver answers 500 is killed with SIGKILL after 40 committed writes (their first attempts failed)
 * and in the middle of 40 more; started again on the same data with the receiver answering 204, it delivers every event
 * it lists, each with the one webhook-id its event and endpoint give, the same as the attempts before the kill.
 */
async function deliversAfterKill(start: () => Promise<SpawnedServer>, secret: string, leases?: () => Map<string, number>): Promise<void> {

    const hooks = await receiver(500);
    try {
        const first = await start();
        let endpointId: string;
        let committed: string[];
        try {
            endpointId = await setEndpoint(first, secret, hooks.url);
            committed = await writeProducts([first], secret, 40, 'Before');
            // Every committed write has had a first attempt, answered 500, before the kill.
            await until('a first attempt of every committed write', () => new Set(hooks.deliveries.map((delivery) => delivery.eventId)).size >= committed.length, { timeoutMs: 30_000, everyMs: 100 });
            // 40 more in flight as the process dies: each committed or not, as the kill finds it.
            const inFlight = writeProducts([first], secret, 40, 'In flight').catch(() => null);
            await new Promise((resolve) => setTimeout(resolve, 20));
            await first.stop('SIGKILL');
            await inFlight;
        }
        finally {
            await first.stop('SIGKILL');
        }

        // The attempts the killed process held leased, by event id, until the wall-clock instant of each lease.
        const leased = leases?.() ?? new Map<string, number>();
        const beforeKill = hooks.deliveries.splice(0);
        expect(beforeKill.every((delivery) => delivery.status === 500)).to.be.true();
        hooks.status = 204;

        const again = await start();
        try {
            const events = await listEvents(again, secret);
            const products = events.filter((event) => event.type === 'commerce.product.created');
            expect(products.length).to.be.within(committed.length, committed.length + 40);
            // Every write answered 201 before the kill has its event.
            expect(products.map((event) => event.data.id)).to.include(committed);

            const delivered = () => new Set(hooks.deliveries.filter((delivery) => delivery.status === 204).map((delivery) => delivery.eventId));
            // An attempt in flight at the kill stays leased for WEBHOOK_TIMEOUT_MS and WEBHOOK_LEASE_MARGIN_MS more (set
            // low here; 70 s by default, so that a lease outlasts the longest attempt a fault can stretch), then is taken
            // again: after its lease, never before.
            const waited = await until('every product\'s event delivered after the restart', () => products.every((event) => delivered().has(event.id)), { timeoutMs: 60_000, everyMs: 100 });
            for (const delivery of hooks.deliveries) {
                expect(delivery.at).to.be.at.least(leased.get(delivery.eventId) ?? 0);
            }

            // One webhook-id per event, before the kill and after it alike.
            for (const delivery of [...beforeKill, ...hooks.deliveries]) {
                expect(delivery.webhookId).to.equal(webhookId(delivery.eventId, endpointId, delivery.body));
            }

            const before = new Map(beforeKill.map((delivery) => [delivery.eventId, delivery.webhookId]));
            for (const delivery of hooks.deliveries) {
                expect(before.get(delivery.eventId) ?? delivery.webhookId).to.equal(delivery.webhookId);
            }

            // Nothing delivered that the data set does not hold.
            const listed = new Set(products.map((event) => event.id));
            expect(hooks.deliveries.filter((delivery) => !listed.has(delivery.eventId))).to.equal([]);
            measured('deliveries after a SIGKILL', { committed: committed.length, listed: products.length, attemptsBeforeKill: beforeKill.length, attemptsAfter: hooks.deliveries.length, deliveredWithinMs: waited });
        }
        finally {
            expect(await again.stop()).to.equal(0);
        }
    }
    finally {
        await hooks.close();
    }
}


describe('webhooks of a server killed with SIGKILL (slow)', { timeout: 180_000 }, () => {

    // No fault stretches these attempts: a lease of 2 s and 1 s more outlasts each, and the restarted server takes
    // the attempts in flight at the kill again after seconds rather than after the default margin's 70 s.

    it('delivers every event committed before the kill after a restart on the same SQLite files, with the same webhook-id', async () => {

        const dataDir = tempDir();
        const secret = Crypto.randomBytes(32).toString('hex');
        try {
            const leases = () => {

                const db = new Database(Path.join(dataDir, 'commerce.db'), { readonly: true });
                try {
                    const rows = db.prepare(`SELECT v.id, d.leased_until FROM webhook_deliveries d JOIN events v ON v.position = d.event_position
                        WHERE d.state = 'pending' AND d.leased_until IS NOT NULL`).all() as { id: string; leased_until: string }[];
                    return new Map(rows.map((row) => [row.id, Date.parse(row.leased_until)]));
                }
                finally {
                    db.close();
                }
            };

            await deliversAfterKill(() => spawnServer({ DATA_DIR: dataDir, AUTH_JWT_SECRET: secret, WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_LEASE_MARGIN_MS: '3000' }), secret, leases);
        }
        finally {
            Fs.rmSync(dataDir, { recursive: true, force: true });
        }
    });

    it('delivers every event committed before the kill after a restart on the same PostgreSQL database, with the same webhook-id', { skip }, async () => {

        await withDatabase(async (database, env, secret) => {

            await deliversAfterKill(() => spawnServer({ ...env, WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_LEASE_MARGIN_MS: '3000' }), secret);
        });
    });
});


describe('webhooks of three processes on one PostgreSQL database (slow)', { skip, timeout: 120_000 }, () => {

    it('sends each delivery once, whichever process made the write, when the endpoint is set through one of them', async () => {

        await withDatabase(async (database, env, secret) => {

            const hooks = await receiver(204);
            const servers = await startAll(env, 3);
            try {
                const endpointId = await setEndpoint(servers[0]!, secret, hooks.url);
                const written = await writeProducts(servers, secret, 150, 'Spread');

                const events = (await listEvents(servers[1]!, secret)).filter((event) => event.type === 'commerce.product.created');
                expect(events.map((event) => event.data.id).sort()).to.equal([...written].sort());
                const waited = await until('every event delivered', () => new Set(hooks.deliveries.map((delivery) => delivery.eventId)).size >= events.length, { timeoutMs: 60_000, everyMs: 100 });
                // Time for a second sending of any of them to arrive.
                await new Promise((resolve) => setTimeout(resolve, 2000));

                const received = new Map<string, number>();
                const bodies = new Map<string, string>();
                for (const delivery of hooks.deliveries) {
                    received.set(delivery.webhookId, (received.get(delivery.webhookId) ?? 0) + 1);
                    bodies.set(delivery.eventId, delivery.body);
                }

                expect(received.size).to.equal(150);
                expect([...received.values()].filter((count) => count !== 1)).to.equal([]);
                expect(new Set(received.keys())).to.equal(new Set(events.map((event) => webhookId(event.id, endpointId, bodies.get(event.id)!))));

                // Each attempt was made by one process: the three journals together hold each (webhook-id, attempt) once.
                const attempts = new Map<string, number>();
                const byProcess: number[] = [];
                for (const server of servers) {
                    const entries = await journal(server, secret);
                    byProcess.push(entries.length);
                    for (const entry of entries) {
                        expect(entry.status).to.equal(204);
                        const key = `${entry.webhook_id}.${entry.attempt}`;
                        attempts.set(key, (attempts.get(key) ?? 0) + 1);
                    }
                }

                expect(attempts.size).to.equal(150);
                expect([...attempts.values()].filter((count) => count !== 1)).to.equal([]);
                measured('150 writes over three processes', { deliveredWithinMs: waited, attemptsByProcess: byProcess });
            }
            finally {
                await stopAll(servers);
                await hooks.close();
            }
        });
    });
});


describe('event positions of two processes on the same SQLite files', { timeout: 60_000 }, () => {

    it('gives every event its own position and a reader following its cursor each event once, while both write at once', async () => {

        const dataDir = tempDir();
        const secret = Crypto.randomBytes(32).toString('hex');
        const env = { DATA_DIR: dataDir, AUTH_JWT_SECRET: secret };
        const servers: SpawnedServer[] = [];
        try {
            // The first start creates, migrates and seeds the files; the second opens them as they are.
            servers.push(await spawnServer(env));
            servers.push(await spawnServer(env));
            const [products, bookings] = servers as [SpawnedServer, SpawnedServer];
            const listed = async (path: string) => ((await send(`${bookings.url}${path}`, secret, 'setup')).body as { data: { id: string }[] }).data.map(({ id }) => id);
            const [vehicle] = await listed('/v1/logistics/vehicles?available=true&limit=1');
            const locations = await listed('/v1/logistics/locations?limit=2');

            // A reader on the first process follows its cursor, a small page at a time, while the writes go on.
            let writing = true;
            const seen: ListedEvent[] = [];
            const reading = (async () => {

                for (;;) {
                    const done = !writing;
                    const after = seen.length ? `&after=${seen[seen.length - 1]!.id}` : '';
                    const res = await fetch(`${products.url}/_events?limit=5${after}`, { headers: admin(secret) });
                    const page = JSON.parse(await res.text()) as { data: ListedEvent[] };
                    seen.push(...page.data);
                    if (done && page.data.length < 5) {
                        return;
                    }
                }
            })();

            const count = 30;
            const replies = await Promise.all([
                ...Array.from({ length: count }, (_, i) => send(`${products.url}/v1/commerce/products`, secret, `writer-${i % 5}`, { name: `Loaf ${i}`, price: 2.5, currency: 'USD', business_id: bakery })),
                ...Array.from({ length: count }, (_, i) => {

                    const day = new Date(Date.UTC(2031, 4, 1 + i)).toISOString().slice(0, 10);
                    return send(`${bookings.url}/v1/logistics/bookings`, secret, `driver-${i % 5}`, { vehicle_id: vehicle, pickup_location_id: locations[0], dropoff_location_id: locations[1], pickup_at: `${day}T10:00:00Z`, return_at: `${day}T18:00:00Z` });
                })
            ]);
            writing = false;
            await reading;
            expect(replies.filter(({ status }) => status !== 201).map(({ text }) => text)).to.equal([]);

            // What the files hold, as a third reader sees it: 60 events, no position twice.
            const stored = ['commerce', 'logistics'].flatMap((namespace) => {

                const db = new Database(Path.join(dataDir, `${namespace}.db`), { readonly: true });
                try {
                    return db.prepare<[], { position: number; id: string }>('SELECT position, id FROM events').all();
                }
                finally {
                    db.close();
                }
            }).sort((a, b) => a.position - b.position);
            expect(stored.length).to.equal(2 * count);
            expect(new Set(stored.map(({ position }) => position)).size).to.equal(2 * count);

            // The reader saw every event once, in position order, and so does a list from the start on the other process.
            expect(seen.map(({ id }) => id)).to.equal(stored.map(({ id }) => id));
            expect((await listEvents(bookings, secret)).map(({ id }) => id)).to.equal(stored.map(({ id }) => id));
        }
        finally {
            await Promise.all(servers.map((server) => server.stop()));
            Fs.rmSync(dataDir, { recursive: true, force: true });
        }
    });
});


/**
 * Two processes on one data set, and a receiver that answers each delivery after 3 s: three deliveries wait for a
 * paused endpoint, the first process enables it and claims them at once (a claim leased for WEBHOOK_TIMEOUT_MS 5 s and
 * a margin of 0.5 s, less than the 9 s its three attempts take one after another), and a write through the second
 * process has that one look for due attempts every second. Each attempt reaches the receiver once: the process that
 * claimed them keeps the lease of those it has not sent yet, and the other never takes one over.
 */
async function sendsOnceToSlowReceiver(servers: SpawnedServer[], secret: string, hooks: Receiver): Promise<void> {

    const [first, second] = servers as [SpawnedServer, SpawnedServer];
    const endpointId = await setEndpoint(first, secret, hooks.url, true);
    const waiting = await writeProducts([first], secret, 3, 'Waiting');
    const res = await fetch(`${first.url}/_webhooks/${endpointId}`, { method: 'PATCH', headers: admin(secret), body: JSON.stringify({ disabled: false }) });
    expect(res.status, await res.text()).to.equal(200);
    const written = [...waiting, ...await writeProducts([second], secret, 1, 'Later')];

    const arrived = () => new Set(hooks.deliveries.map((delivery) => delivery.dataId));
    const waited = await until('every delivery answered', () => written.every((id) => arrived().has(id)) && hooks.unanswered === 0, { timeoutMs: 60_000, everyMs: 100 });
    // Time for another process to take an attempt over after its lease, and for that attempt to arrive.
    await new Promise((resolve) => setTimeout(resolve, 2000));

    const received = new Map<string, number>();
    for (const delivery of hooks.deliveries) {
        expect(delivery.webhookId).to.equal(webhookId(delivery.eventId, endpointId, delivery.body));
        received.set(delivery.dataId, (received.get(delivery.dataId) ?? 0) + 1);
    }

    expect([...received.keys()].sort()).to.equal([...written].sort());
    expect([...received.entries()].filter(([, count]) => count !== 1)).to.equal([]);

    // Each attempt is in one process's journal, answered 204.
    const entries = [...await journal(first, secret), ...await journal(second, secret)];
    expect(entries.map((entry) => entry.status)).to.equal([204, 204, 204, 204]);
    expect(new Set(entries.map((entry) => entry.webhook_id)).size).to.equal(4);
    measured('four deliveries to a receiver answering after 3 s, over two processes', { answeredWithinMs: waited });
}


describe('webhooks of two processes and a slow receiver (slow)', { timeout: 90_000 }, () => {

    const settings = { WEBHOOK_TIMEOUT_MS: '5000', WEBHOOK_LEASE_MARGIN_MS: '500' };

    it('sends each attempt once when a claim outlasts its lease, two processes on one set of SQLite files', async () => {

        const dataDir = tempDir();
        const secret = Crypto.randomBytes(32).toString('hex');
        const env = { DATA_DIR: dataDir, AUTH_JWT_SECRET: secret, ...settings };
        const hooks = await receiver(204, 3000);
        const servers: SpawnedServer[] = [];
        try {
            // The first start creates, migrates and seeds the files; the second opens them as they are.
            servers.push(await spawnServer(env));
            servers.push(await spawnServer(env));
            await sendsOnceToSlowReceiver(servers, secret, hooks);
        }
        finally {
            await stopAll(servers);
            await hooks.close();
            Fs.rmSync(dataDir, { recursive: true, force: true });
        }
    });

    it('sends each attempt once when a claim outlasts its lease, two processes on one PostgreSQL database', { skip }, async () => {

        await withDatabase(async (database, env, secret) => {

            const hooks = await receiver(204, 3000);
            const servers = await startAll({ ...env, ...settings }, 2);
            try {
                await sendsOnceToSlowReceiver(servers, secret, hooks);
            }
            finally {
                await stopAll(servers);
                await hooks.close();
            }
        });
    });
});
