import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import type { Server } from '@hapi/hapi';
import Lab from '@hapi/lab';
import Sqlite from 'better-sqlite3';

import { resolveSettings, type Options } from '../lib/config';
import { builtInNamespaces } from '../lib/namespaces';
import { writesEventsToFiles } from '../lib/storage/default';
import { counterFileName, openSqlitePositions, turnFileName } from '../lib/storage/sqlite/positions';
import { adminBearer, bearer, body, damagePages, tempDir, testServer } from './helpers/server';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


// Event positions of a data set whose SQLite files two servers share (each with an id source of its own, as two
// processes have), and the turn and counter files they draw them from. test/processes/events.ts runs two processes.

// A business of the demo data: any caller may add products to it.
const bakery = 'd851fadb-03ca-5a24-ba16-c15cce19933b';


interface Listed {
    id: string;
    type: string;
}


/** The positions and ids of the events each namespace's file holds, read as another process would. */
function storedEvents(dataDir: string): { position: number; id: string }[] {

    return ['commerce', 'logistics'].flatMap((namespace) => {

        const db = new Sqlite(Path.join(dataDir, `${namespace}.db`), { readonly: true });
        try {
            return db.prepare<[], { position: number; id: string }>('SELECT position, id FROM events').all();
        }
        finally {
            db.close();
        }
    });
}


/** Every event the server lists, `limit` a page, each page after the last event of the one before. */
async function pagedEvents(server: Server, limit: number): Promise<Listed[]> {

    const events: Listed[] = [];
    for (;;) {
        const after = events.length ? `&after=${events[events.length - 1]!.id}` : '';
        const res = await server.inject({ url: `/_events?limit=${limit}${after}`, headers: adminBearer(server) });
        expect(res.statusCode, res.payload).to.equal(200);
        const page = body<{ data: Listed[] }>(res).data;
        events.push(...page);
        if (page.length < limit) {
            return events;
        }
    }
}


async function stopAll(servers: Server[], dataDir: string): Promise<void> {

    await Promise.all(servers.map((server) => server.stop()));
    Fs.rmSync(dataDir, { recursive: true, force: true });
}


describe('event positions on shared SQLite files', () => {

    it('never repeats a position when two servers write different namespaces of the same files in turns', async () => {

        const dataDir = tempDir();
        const products = await testServer({ dataDir });
        const bookings = await testServer({ dataDir });
        try {
            const vehicle = body<{ data: { id: string }[] }>(await bookings.inject({ url: '/v1/logistics/vehicles?available=true&limit=1', headers: bearer(bookings, 'setup') })).data[0]!.id;
            const locations = body<{ data: { id: string }[] }>(await bookings.inject({ url: '/v1/logistics/locations?limit=2', headers: bearer(bookings, 'setup') })).data.map(({ id }) => id);
            for (let i = 0; i < 5; ++i) {
                const product = await products.inject({ method: 'POST', url: '/v1/commerce/products', headers: bearer(products, 'writer'), payload: { name: `Loaf ${i}`, price: 2.5, currency: 'USD', business_id: bakery } });
                expect(product.statusCode, product.payload).to.equal(201);
                const day = `2031-05-${String(i + 1).padStart(2, '0')}`;
                const booking = await bookings.inject({ method: 'POST', url: '/v1/logistics/bookings', headers: bearer(bookings, 'driver'), payload: { vehicle_id: vehicle, pickup_location_id: locations[0], dropoff_location_id: locations[1], pickup_at: `${day}T10:00:00Z`, return_at: `${day}T18:00:00Z` } });
                expect(booking.statusCode, booking.payload).to.equal(201);
            }

            const stored = storedEvents(dataDir);
            expect(stored.map(({ position }) => position).sort((a, b) => a - b)).to.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);

            // Either server lists them all in the order they were written, each once, paged two at a time.
            for (const server of [products, bookings]) {
                const listed = await pagedEvents(server, 2);
                expect(listed.map(({ type }) => type)).to.equal(Array.from({ length: 5 }, () => ['commerce.product.created', 'logistics.booking.created']).flat());
                expect(listed.map(({ id }) => id)).to.equal(stored.sort((a, b) => a.position - b.position).map(({ id }) => id));
            }
        }
        finally {
            await stopAll([products, bookings], dataDir);
        }
    });

    it('keeps the counter past the positions of the data set a server starts over, written before it drew from files', async () => {

        const dataDir = tempDir();
        const first = await testServer({ dataDir });
        try {
            const product = await first.inject({ method: 'POST', url: '/v1/commerce/products', headers: bearer(first, 'writer'), payload: { name: 'Loaf', price: 2.5, currency: 'USD', business_id: bakery } });
            expect(product.statusCode, product.payload).to.equal(201);
        }
        finally {
            await first.stop();
        }

        // A data directory from before the counter: its events stay, the counter file starts empty.
        Fs.rmSync(Path.join(dataDir, counterFileName));
        const second = await testServer({ dataDir });
        try {
            const product = await second.inject({ method: 'POST', url: '/v1/commerce/products', headers: bearer(second, 'writer'), payload: { name: 'Rye', price: 3, currency: 'USD', business_id: bakery } });
            expect(product.statusCode, product.payload).to.equal(201);
            expect(storedEvents(dataDir).map(({ position }) => position).sort((a, b) => a - b)).to.equal([1, 2]);
        }
        finally {
            await stopAll([second], dataDir);
        }
    });
});


describe('the turn and counter files of a data set', () => {

    it('are kept where a database that writes events is an SQLite file, and only there', () => {

        const pg = 'postgres://localgate@db.internal:5432/localgate';
        const cases: { options: Options; kept: boolean }[] = [
            { options: {}, kept: true },
            { options: { storage: 'memory' }, kept: false },
            { options: { databaseUrl: pg }, kept: false },
            { options: { databaseUrl: pg, namespaceUrls: { logistics: 'file:logistics.db' } }, kept: true },
            { options: { databaseUrl: pg, namespaceUrls: { weather: 'file:weather.db' } }, kept: false },
            { options: { databaseUrl: pg, pay: { url: 'file:pay.db' } }, kept: true },
            { options: { databaseUrl: pg, pay: { url: pg } }, kept: false }
        ];

        for (const { options, kept } of cases) {
            expect(writesEventsToFiles(resolveSettings(builtInNamespaces, { jwtSecret: 'x'.repeat(32), ...options })), JSON.stringify(options)).to.equal(kept);
        }
    });

    it('are not made when a namespace does not open, nor for a data set in memory', async () => {

        const dataDir = tempDir();
        damagePages(Path.join(dataDir, 'logistics.db'));
        try {
            await expect(testServer({ dataDir })).to.reject(/logistics\.db: .*malformed/);
            // No write took the turn, so no file of it was made.
            expect(Fs.readdirSync(dataDir).filter((file) => file.startsWith('event-positions'))).to.equal([]);

            await expect(testServer({ dataDir: ':memory:', namespaceUrls: { commerce: Path.join(dataDir, 'missing', 'commerce.db') } })).to.reject(/commerce\.db/);
            expect(Fs.existsSync(Path.join(dataDir, 'missing'))).to.be.false();
        }
        finally {
            Fs.rmSync(dataDir, { recursive: true, force: true });
        }
    });

    it('holds the turn from before a write until it returns, through a write nested in it, and then lets another take it', () => {

        const dataDir = tempDir();
        const positions = openSqlitePositions(dataDir);
        // Another process's connection, that does not wait.
        const other = new Sqlite(Path.join(dataDir, turnFileName), { timeout: 0 });
        const takesTurn = () => {

            other.exec('BEGIN IMMEDIATE');
            other.exec('COMMIT');
        };

        try {
            const drawn = positions.holding(() => {

                expect(takesTurn).to.throw(/database is locked/);
                const inner = positions.holding(() => positions.draw(0));
                expect(takesTurn).to.throw(/database is locked/);
                return [inner, positions.draw(0)];
            });

            expect(drawn).to.equal([1, 2]);
            expect(takesTurn).to.not.throw();
        }
        finally {
            other.close();
            positions.close();
            Fs.rmSync(dataDir, { recursive: true, force: true });
        }
    });

    it('draws past every position another process drew, one whose write rolled back too, and past the one asked', () => {

        const dataDir = tempDir();
        const one = openSqlitePositions(dataDir);
        const two = openSqlitePositions(dataDir);
        try {
            const failing = () => {

                one.draw(4);
                throw new Error('the write failed');
            };

            expect(() => one.holding(failing)).to.throw('the write failed');

            // A process killed before its write committed leaves a gap: 5 is never drawn again.
            expect(two.holding(() => two.draw(0))).to.equal(6);
            expect(one.holding(() => one.draw(10))).to.equal(11);
            expect(() => one.draw(0)).to.throw('An event position is drawn outside the turn of its write');
        }
        finally {
            one.close();
            two.close();
            Fs.rmSync(dataDir, { recursive: true, force: true });
        }
    });

    it('opens its files at the first write, and closes what it opened when the counter file does not open', () => {

        const dataDir = tempDir();
        Fs.mkdirSync(Path.join(dataDir, counterFileName));
        const positions = openSqlitePositions(dataDir);
        try {
            expect(Fs.existsSync(Path.join(dataDir, turnFileName))).to.be.false();
            positions.close();
            expect(() => positions.holding(() => positions.draw(0))).to.throw(new RegExp(counterFileName));
            // The turn's connection was closed: its write-ahead log was checkpointed away.
            expect(Fs.existsSync(Path.join(dataDir, `${turnFileName}-wal`))).to.be.false();
        }
        finally {
            Fs.rmSync(dataDir, { recursive: true, force: true });
        }
    });
});
