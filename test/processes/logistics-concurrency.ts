import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import type { Server } from '@hapi/hapi';
import Lab from '@hapi/lab';
import Sqlite from 'better-sqlite3';

import { mintToken } from '../../lib';
import { type SpawnedServer, spawnServer, statusCounts } from '../helpers/processes';
import { tempDir, testServer } from '../helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


interface BookingReply {
    id?: string;
    code?: string;
    pickup_at?: string;
    return_at?: string;
}

interface Reply<T = BookingReply> {
    status: number;
    body: T;
    location: string | null;
}

interface ListReply {
    data: { id: string }[];
}

interface Slot {
    vehicle_id: string;
    pickup_location_id: string;
    dropoff_location_id: string;
    pickup_at: string;
    return_at: string;
}


async function send<T = BookingReply>(url: string, secret: string, subject: string, payload?: object): Promise<Reply<T>> {

    const res = await fetch(url, {
        method: payload ? 'POST' : 'GET',
        headers: { authorization: `Bearer ${mintToken(secret, subject)}`, 'content-type': 'application/json' },
        body: payload ? JSON.stringify(payload) : undefined
    });

    return { status: res.status, body: await res.json() as T, location: res.headers.get('location') };
}


/** An available vehicle and two locations of the running server's demo data. */
async function slot(baseUrl: string, secret: string, day: string): Promise<Slot> {

    const vehicles = await send<ListReply>(`${baseUrl}/v1/logistics/vehicles?available=true&limit=1`, secret, 'setup');
    const locations = await send<ListReply>(`${baseUrl}/v1/logistics/locations?limit=2`, secret, 'setup');
    return {
        vehicle_id: vehicles.body.data[0]!.id,
        pickup_location_id: locations.body.data[0]!.id,
        dropoff_location_id: locations.body.data[1]!.id,
        pickup_at: `${day}T10:00:00Z`,
        return_at: `${day}T18:00:00Z`
    };
}


describe('logistics bookings on a listening server', { timeout: 30_000 }, () => {

    let server: Server;
    let secret: string;
    let baseUrl: string;

    before(async () => {

        server = await testServer({ port: 0 });
        await server.start();
        secret = server.app.localgate.secret;
        baseUrl = server.info.uri;
    });

    after(async () => {

        await server.stop();
    });

    it('confirms exactly one of 50 concurrent requests for the same slot and answers 409 to the rest', async () => {

        const payload = await slot(baseUrl, secret, '2031-03-01');
        const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => send(`${baseUrl}/v1/logistics/bookings`, secret, `racer-${i}`, payload)));

        expect(statusCounts(replies)).to.equal({ '201': 1, '409 booking_overlap': 49 });
        const winner = replies.find((reply) => reply.status === 201)!;
        const fetched = await send(`${baseUrl}${winner.location}`, secret, 'ignored');
        expect(fetched.status).to.equal(404);

        // Nothing of a refused request was kept: each racer holds exactly the bookings it was confirmed.
        const held = await Promise.all(replies.map((reply, i) => send<ListReply & { total: number }>(`${baseUrl}/v1/logistics/bookings`, secret, `racer-${i}`)));
        expect(held.map((list) => list.body.total)).to.equal(replies.map((reply) => (reply.status === 201 ? 1 : 0)));
        expect(held.map((list) => list.body.data.map((booking) => booking.id))).to.equal(replies.map((reply) => (reply.status === 201 ? [reply.body.id!] : [])));
    });

    it('never lets concurrent requests for overlapping ranges double-book a vehicle', async () => {

        const base = await slot(baseUrl, secret, '2031-04-01');
        // 40 ranges of 1 to 4 hours starting on the hour within one day: many overlap, some only touch.
        const payloads = Array.from({ length: 40 }, (_, i) => {

            const start = (i * 7) % 20;
            const hours = 1 + (i % 4);
            const hour = (h: number) => `2031-04-01T${String(h).padStart(2, '0')}:00:00Z`;
            return { ...base, pickup_at: hour(start), return_at: hour(start + hours) };
        });

        const replies = await Promise.all(payloads.map((payload, i) => send(`${baseUrl}/v1/logistics/bookings`, secret, `overlapper-${i}`, payload)));
        const confirmed = replies.filter((reply) => reply.status === 201).map((reply) => reply.body as Required<BookingReply>);
        expect(confirmed.length + replies.filter((reply) => reply.body.code === 'booking_overlap').length).to.equal(40);
        expect(confirmed.length).to.be.above(1);

        // Every pair of confirmed bookings is disjoint on [pickup_at, return_at).
        for (const a of confirmed) {
            for (const b of confirmed) {
                if (a.id !== b.id) {
                    expect(a.pickup_at >= b.return_at || b.pickup_at >= a.return_at, `${a.pickup_at}-${a.return_at} and ${b.pickup_at}-${b.return_at}`).to.be.true();
                }
            }
        }

        // Every refused range does overlap a confirmed one: nothing was refused without cause.
        replies.forEach((reply, i) => {

            if (reply.status === 409) {
                const wanted = { pickup_at: new Date(payloads[i]!.pickup_at).toISOString(), return_at: new Date(payloads[i]!.return_at).toISOString() };
                expect(confirmed.some((booking) => booking.pickup_at < wanted.return_at && wanted.pickup_at < booking.return_at)).to.be.true();
            }
        });
    });
});


describe('logistics bookings across processes', { timeout: 30_000 }, () => {

    it('confirms exactly one booking for the same slot when three processes share the database files', { timeout: 90_000 }, async () => {

        const dataDir = tempDir();
        const secret = Crypto.randomBytes(32).toString('hex');
        const env = { DATA_DIR: dataDir, AUTH_JWT_SECRET: secret };
        const servers: SpawnedServer[] = [];
        try {
            // The first start creates, migrates and seeds the files; the others open them as they are.
            servers.push(await spawnServer(env));
            servers.push(...await Promise.all([spawnServer(env), spawnServer(env)]));

            const payload = await slot(servers[0]!.url, secret, '2031-05-01');

            // Hold the write lock while the requests arrive, so that at its release the processes contend for real
            // instead of happening to take turns. A correct store needs none of this; it only sharpens the test.
            const lock = new Sqlite(Path.join(dataDir, 'logistics.db'));
            lock.pragma('busy_timeout = 5000');
            lock.exec('BEGIN IMMEDIATE');
            const pending = Promise.all(Array.from({ length: 30 }, (_, i) => {

                return send(`${servers[i % 3]!.url}/v1/logistics/bookings`, secret, `process-racer-${i}`, payload);
            }));
            await new Promise((resolve) => setTimeout(resolve, 1000));
            lock.exec('COMMIT');
            lock.close();
            const replies = await pending;

            expect(statusCounts(replies)).to.equal({ '201': 1, '409 booking_overlap': 29 });

            // Each process reads the one booking the others see.
            const winner = replies.findIndex((reply) => reply.status === 201);
            for (const spawned of servers) {
                const fetched = await send(`${spawned.url}${replies[winner]!.location}`, secret, `process-racer-${winner}`);
                expect(fetched.status).to.equal(200);
                expect(fetched.body).to.equal(replies[winner]!.body);
            }
        }
        finally {
            await Promise.all(servers.map((spawned) => spawned.stop()));
            Fs.rmSync(dataDir, { recursive: true, force: true });
        }
    });
});
