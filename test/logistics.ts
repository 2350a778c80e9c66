import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import type { Server } from '@hapi/hapi';
import Jwt from '@hapi/jwt';
import Lab from '@hapi/lab';

import { createServer, mintToken } from '../lib';
import { maxNotesLength } from '../lib/namespaces/logistics/schemas';
import { sqliteDatabase } from '../lib/storage/sqlite/engine';
import { queries } from '../lib/storage/sqlite/logistics';
import { migrate, namespaceMigrations } from '../lib/storage/sqlite/migrate';
import { openDatabase } from '../lib/storage/sqlite/open';
import { expectError } from './helpers/errors';
import { bearer, body, tempDir, testServer } from './helpers/server';
import { insertRows } from './helpers/sqlite';
import { engineServer, engines, insertRecords } from './helpers/postgres';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


interface DemoVehicle {
    id: string;
    is_available: boolean;
    created_at: string;
}

interface DemoData {
    locations: { id: string; city: string; latitude: number; longitude: number; created_at: string }[];
    vehicles: DemoVehicle[];
    drivers: { id: string; vehicle_id: string | null; is_active: boolean }[];
}

interface Envelope<T = Record<string, unknown>> {
    data: T[];
    count: number;
    total: number;
}

type Booking = Record<string, unknown> & { id: string; created_at: string };


const demo = JSON.parse(Fs.readFileSync(Path.join(__dirname, '..', 'data', 'demo', 'logistics.json'), 'utf8')) as DemoData;

const byListOrder = <T extends { id: string; created_at: string }>(a: T, b: T) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id);

const availableVehicles = demo.vehicles.filter((vehicle) => vehicle.is_available).sort(byListOrder);
const unavailableVehicle = demo.vehicles.find((vehicle) => !vehicle.is_available)!;
const [quay, station] = demo.locations;
const unknownId = '00000000-0000-4000-8000-000000000000';


/** A valid booking body; every test books its own day so that tests sharing a server never collide. */
function newBooking(day: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {

    const date = new Date(Date.UTC(2030, 0, 1 + day)).toISOString().slice(0, 10);
    return {
        vehicle_id: availableVehicles[0]!.id,
        pickup_location_id: quay!.id,
        dropoff_location_id: station!.id,
        pickup_at: `${date}T10:00:00Z`,
        return_at: `${date}T12:00:00Z`,
        ...overrides
    };
}


function at(day: number, time: string): string {

    return `${new Date(Date.UTC(2030, 0, 1 + day)).toISOString().slice(0, 10)}T${time}Z`;
}


// A JWT signed with nothing at all, built here rather than hard-coded.
function unsignedToken(subject: string): string {

    const encode = (part: object) => Buffer.from(JSON.stringify(part)).toString('base64url');
    return `${encode({ alg: 'none', typ: 'JWT' })}.${encode({ sub: subject, exp: Math.floor(Date.now() / 1000) + 3600 })}.`;
}


function badTokens(secret: string): [string, string][] {

    return [
        ['signed with another secret', mintToken(Crypto.randomBytes(32).toString('hex'), 'alice')],
        ['expired', mintToken(secret, 'alice', -3600)],
        ['unsigned (alg none)', unsignedToken('alice')],
        ['signed with HS512', Jwt.token.generate({ sub: 'alice' }, { key: secret, algorithm: 'HS512' }, { ttlSec: 3600 })],
        ['without exp', Jwt.token.generate({ sub: 'alice' }, { key: secret, algorithm: 'HS256' })],
        ['not a JWT', 'not-a-token']
    ];
}


for (const engine of engines) {
    describe(`logistics vehicles (${engine})`, () => {

        let server: Server;

        before(async () => {

            server = await engineServer(engine);
        });

        after(async () => {

            await server.stop();
        });

        it('lists every vehicle oldest first in the list envelope with X-Total-Count', async () => {

            const res = await server.inject('/v1/logistics/vehicles');
            expect(res.statusCode).to.equal(200);
            expect(res.headers['x-total-count']).to.equal(String(demo.vehicles.length));
            const list = body<Envelope<DemoVehicle>>(res);
            expect(list.count).to.equal(demo.vehicles.length);
            expect(list.total).to.equal(demo.vehicles.length);
            expect(list.data.map((vehicle) => vehicle.id)).to.equal([...demo.vehicles].sort(byListOrder).map((vehicle) => vehicle.id));
        });

        it('filters on availability with available=true and available=false', async () => {

            const available = await server.inject('/v1/logistics/vehicles?available=true');
            expect(available.statusCode).to.equal(200);
            const availableList = body<Envelope<DemoVehicle>>(available);
            expect(availableList.data.map((vehicle) => vehicle.id)).to.equal(availableVehicles.map((vehicle) => vehicle.id));
            expect(availableList.total).to.equal(availableVehicles.length);
            expect(available.headers['x-total-count']).to.equal(String(availableVehicles.length));

            const unavailable = await server.inject('/v1/logistics/vehicles?available=false');
            const unavailableList = body<Envelope<DemoVehicle>>(unavailable);
            expect(unavailableList.total).to.equal(demo.vehicles.length - availableVehicles.length);
            expect(unavailableList.total).to.be.above(0);
            expect(unavailableList.data.every((vehicle) => vehicle.is_available === false)).to.be.true();
        });

        it('pages with limit and offset without repeating or skipping a vehicle', async () => {

            const seen: string[] = [];
            for (let i = 0; i < demo.vehicles.length; i += 5) {
                const res = await server.inject(`/v1/logistics/vehicles?limit=5&offset=${i}`);
                const page = body<Envelope<DemoVehicle>>(res);
                expect(page.total).to.equal(demo.vehicles.length);
                expect(page.count).to.equal(Math.min(5, demo.vehicles.length - i));
                seen.push(...page.data.map((vehicle) => vehicle.id));
            }

            expect(seen).to.equal([...demo.vehicles].sort(byListOrder).map((vehicle) => vehicle.id));

            const past = await server.inject('/v1/logistics/vehicles?offset=1000&available=true');
            expect(body(past)).to.equal({ data: [], count: 0, total: availableVehicles.length });
        });

        it('answers the same with a token as without one', async () => {

            const anonymous = await server.inject('/v1/logistics/vehicles?available=false');
            const authenticated = await server.inject({ url: '/v1/logistics/vehicles?available=false', headers: bearer(server, 'alice') });
            expect(authenticated.statusCode).to.equal(200);
            expect(authenticated.payload).to.equal(anonymous.payload);
        });

        it('returns one vehicle with every field and a boolean is_available', async () => {

            const vehicle = demo.vehicles[3]!;
            const res = await server.inject(`/v1/logistics/vehicles/${vehicle.id}`);
            expect(res.statusCode).to.equal(200);
            expect(body<DemoVehicle>(res)).to.equal(vehicle);

            const withToken = await server.inject({ url: `/v1/logistics/vehicles/${vehicle.id}`, headers: bearer(server, 'alice') });
            expect(body<DemoVehicle>(withToken)).to.equal(vehicle);
        });

        it('answers 404 for a vehicle that does not exist', async () => {

            const res = await server.inject(`/v1/logistics/vehicles/${unknownId}`);
            expectError(res, 404, 'vehicle_not_found');
            expect(body(res).message).to.equal('There is no vehicle with this id');
        });
    });
}


for (const engine of engines) {
    describe(`logistics locations (${engine})`, () => {

        let server: Server;

        before(async () => {

            server = await engineServer(engine);
        });

        after(async () => {

            await server.stop();
        });

        it('lists the pickup and drop-off locations of Harbourside with coordinates, oldest first', async () => {

            const res = await server.inject({ url: '/v1/logistics/locations', headers: bearer(server, 'alice') });
            expect(res.statusCode).to.equal(200);
            expect(res.headers['x-total-count']).to.equal(String(demo.locations.length));
            expect(body(res)).to.equal({ data: [...demo.locations].sort(byListOrder), count: demo.locations.length, total: demo.locations.length });
        });

        it('pages with limit and offset', async () => {

            const res = await server.inject('/v1/logistics/locations?limit=2&offset=4');
            expect(res.statusCode).to.equal(200);
            expect(body(res)).to.equal({ data: [...demo.locations].sort(byListOrder).slice(4, 6), count: 2, total: demo.locations.length });
        });
    });
}


for (const engine of engines) {
    describe(`logistics bookings (${engine})`, () => {

        let server: Server;
        const alice = () => bearer(server, 'alice');
        const book = (payload: Record<string, unknown>, subject = 'alice') => server.inject({ method: 'POST', url: '/v1/logistics/bookings', headers: bearer(server, subject), payload });

        before(async () => {

            server = await engineServer(engine);
        });

        after(async () => {

            await server.stop();
        });

        it('creates a confirmed booking owned by the caller, with Location and normalized timestamps', async () => {

            const payload = newBooking(1, { pickup_at: at(1, '10:00:00'), return_at: at(1, '12:30:00.5') });
            const res = await book(payload);
            expect(res.statusCode).to.equal(201);
            const booking = body<Booking>(res);
            expect(res.headers.location).to.equal(`/v1/logistics/bookings/${booking.id}`);
            expect(booking.id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
            expect(booking).to.equal({
                id: booking.id,
                vehicle_id: payload.vehicle_id,
                pickup_location_id: quay!.id,
                dropoff_location_id: station!.id,
                pickup_at: at(1, '10:00:00.000'),
                return_at: at(1, '12:30:00.500'),
                notes: '',
                customer_id: 'alice',
                status: 'confirmed',
                created_at: booking.created_at
            });
            expect(new Date(booking.created_at).toISOString()).to.equal(booking.created_at);
            expect(Math.abs(Date.parse(booking.created_at) - Date.now())).to.be.below(60_000);

            const fetched = await server.inject({ url: res.headers.location as string, headers: alice() });
            expect(fetched.statusCode).to.equal(200);
            expect(body(fetched)).to.equal(booking);
        });

        it('stores notes exactly as sent', async () => {

            const notes = `  Child seat, "please" <b>thanks</b> '); DROP TABLE bookings; -- 🚐\n`;
            const res = await book(newBooking(2, { notes }));
            expect(res.statusCode).to.equal(201);
            expect(body(res).notes).to.equal(notes);
            expect(body(await server.inject({ url: res.headers.location as string, headers: alice() }))).to.equal(body(res));

            const long = await book(newBooking(3, { notes: 'n'.repeat(maxNotesLength) }));
            expect(long.statusCode).to.equal(201);
        });

        it('lets a booking pick up at the instant the previous one returns', async () => {

            const first = await book(newBooking(4, { pickup_at: at(4, '08:00:00'), return_at: at(4, '10:00:00') }));
            const second = await book(newBooking(4, { pickup_at: at(4, '10:00:00'), return_at: at(4, '12:00:00') }), 'bob');
            const before10 = await book(newBooking(4, { pickup_at: at(4, '06:00:00'), return_at: at(4, '08:00:00.000') }), 'carol');
            expect([first.statusCode, second.statusCode, before10.statusCode]).to.equal([201, 201, 201]);
        });

        it('answers 409 booking_overlap for every way a range can overlap a confirmed booking of the vehicle', async () => {

            const existing = await book(newBooking(5, { pickup_at: at(5, '10:00:00'), return_at: at(5, '14:00:00') }));
            expect(existing.statusCode).to.equal(201);

            const overlaps: [string, string][] = [
                ['10:00:00', '14:00:00'],
                ['09:00:00', '10:00:00.001'],
                ['13:59:59.999', '15:00:00'],
                ['11:00:00', '12:00:00'],
                ['09:00:00', '15:00:00']
            ];
            for (const [pickup, dropoff] of overlaps) {
                const res = await book(newBooking(5, { pickup_at: at(5, pickup), return_at: at(5, dropoff) }), 'bob');
                expectError(res, 409, 'booking_overlap');
                expect(body(res).message).to.contain('already booked');
            }

            const otherVehicle = await book(newBooking(5, { vehicle_id: availableVehicles[1]!.id }), 'bob');
            expect(otherVehicle.statusCode).to.equal(201);
        });

        it('ignores cancelled bookings when checking for overlap', async () => {

            await insertRecords(server, 'logistics', 'bookings', [{
                id: Crypto.randomUUID(), vehicle_id: availableVehicles[0]!.id, pickup_location_id: quay!.id, dropoff_location_id: quay!.id,
                pickup_at: at(6, '10:00:00.000'), return_at: at(6, '12:00:00.000'), notes: '', customer_id: 'dave', status: 'cancelled', created_at: new Date().toISOString()
            }]);

            const res = await book(newBooking(6));
            expect(res.statusCode).to.equal(201);
        });

        it('reports each timestamp problem once, naming the field that has it', async () => {

            const offset = await book(newBooking(9, { pickup_at: '2030-01-10T10:00:00+02:00', return_at: '2030-01-10T07:00:00Z' }));
            expect(body(offset).details).to.equal([{ field: 'pickup_at', message: 'pickup_at must be an ISO 8601 UTC timestamp ending in Z, such as 2030-06-01T10:00:00Z' }]);

            const unreal = await book(newBooking(9, { return_at: '2030-01-10T25:00:00.000Z' }));
            expect(body(unreal).details).to.equal([{ field: 'return_at', message: 'return_at is not a real calendar date and time' }]);

            const early = await book(newBooking(9, { return_at: '2030-01-10T09:00:00Z' }));
            expect(body(early)).to.include({ message: 'Invalid payload: return_at must be after pickup_at', details: [{ field: 'return_at', message: 'return_at must be after pickup_at' }] });
        });

        it('refuses notes that could not be stored as sent, naming the field', async () => {

            for (const notes of ['seat\u0000', 'seat \ud83d', '\udc00 seat']) {
                const res = await book(newBooking(10, { notes }));
                expectError(res, 400, 'validation_failed', 'notes');
                expect(body(res).details).to.equal([{ field: 'notes', message: 'notes must not contain NUL characters or unpaired surrogates' }]);
            }

            const blank = await book(newBooking(10, { notes: ' \t\n' }));
            expect(blank.statusCode).to.equal(201);
            expect(body(blank).notes).to.equal(' \t\n');
        });

        it('answers 400 for a body that is not a JSON object', async () => {

            for (const payload of ['[]', '"booking"', '42', 'null', '']) {
                const res = await server.inject({ method: 'POST', url: '/v1/logistics/bookings', headers: { ...alice(), 'content-type': 'application/json' }, payload });
                expectError(res, 400, 'validation_failed');
                expect(body(res).message, payload).to.contain('The request body must be a JSON object');
            }
        });

        it('answers 409 vehicle_unavailable for a vehicle that cannot be booked', async () => {

            const res = await book(newBooking(7, { vehicle_id: unavailableVehicle.id }));
            expectError(res, 409, 'vehicle_unavailable', 'vehicle_id');
        });

        it('answers 422 naming the field for an unknown vehicle or location', async () => {

            const references: [string, string][] = [
                ['vehicle_id', 'vehicle_not_found'],
                ['pickup_location_id', 'location_not_found'],
                ['dropoff_location_id', 'location_not_found']
            ];

            for (const [field, code] of references) {
                const res = await book(newBooking(8, { [field]: unknownId }));
                expectError(res, 422, code, field);
            }
        });

        it('lists only the caller\'s bookings, oldest first, with paging', async () => {

            const made: Booking[] = [];
            for (let i = 20; i < 25; ++i) {
                const res = await book(newBooking(i, { vehicle_id: availableVehicles[2]!.id }), 'erin');
                made.push(body<Booking>(res));
            }

            await book(newBooking(25, { vehicle_id: availableVehicles[2]!.id }), 'frank');

            const all = await server.inject({ url: '/v1/logistics/bookings', headers: bearer(server, 'erin') });
            expect(all.statusCode).to.equal(200);
            expect(all.headers['x-total-count']).to.equal('5');
            expect(body(all)).to.equal({ data: made, count: 5, total: 5 });

            const page = await server.inject({ url: '/v1/logistics/bookings?limit=2&offset=3', headers: bearer(server, 'erin') });
            expect(body(page)).to.equal({ data: made.slice(3), count: 2, total: 5 });

            const nobody = await server.inject({ url: '/v1/logistics/bookings', headers: bearer(server, 'nobody') });
            expect(body(nobody)).to.equal({ data: [], count: 0, total: 0 });
        });

        it('gives each of a caller\'s bookings a later created_at than the one before, even within one millisecond', async () => {

            const responses = await Promise.all(Array.from({ length: 20 }, (_, index) => {

                return book(newBooking(40 + index, { vehicle_id: availableVehicles[3]!.id }), 'grace');
            }));
            expect(responses.map((res) => res.statusCode)).to.equal(Array(20).fill(201));

            const list = body<Envelope<Booking>>(await server.inject({ url: '/v1/logistics/bookings?limit=100', headers: bearer(server, 'grace') }));
            const createdAt = list.data.map((booking) => booking.created_at);
            expect(createdAt).to.equal([...new Set(createdAt)].sort());
            expect(list.data.map((booking) => booking.id).sort()).to.equal(responses.map((res) => body<Booking>(res).id).sort());
        });
    });
}


for (const engine of engines) {
    describe(`logistics booking ownership (${engine})`, () => {

        let server: Server;
        let owned: Booking;

        before(async () => {

            server = await engineServer(engine);
            const res = await server.inject({ method: 'POST', url: '/v1/logistics/bookings', headers: bearer(server, 'alice'), payload: newBooking(1) });
            owned = body<Booking>(res);
        });

        after(async () => {

            await server.stop();
        });

        it('lets the owner create, list and read a booking', async () => {

            const created = await server.inject({ method: 'POST', url: '/v1/logistics/bookings', headers: bearer(server, 'alice'), payload: newBooking(2) });
            expect(created.statusCode).to.equal(201);
            expect(body(created).customer_id).to.equal('alice');

            const list = await server.inject({ url: '/v1/logistics/bookings', headers: bearer(server, 'alice') });
            expect(body<Envelope<Booking>>(list).data.map((booking) => booking.id)).to.equal([owned.id, body<Booking>(created).id]);

            const one = await server.inject({ url: `/v1/logistics/bookings/${owned.id}`, headers: bearer(server, 'alice') });
            expect(one.statusCode).to.equal(200);
            expect(body(one)).to.equal(owned);
        });

        it('keeps another caller to their own bookings on every bookings route', async () => {

            const created = await server.inject({ method: 'POST', url: '/v1/logistics/bookings', headers: bearer(server, 'mallory'), payload: newBooking(3) });
            expect(created.statusCode).to.equal(201);
            expect(body(created).customer_id).to.equal('mallory');

            const impersonating = await server.inject({ method: 'POST', url: '/v1/logistics/bookings', headers: bearer(server, 'mallory'), payload: newBooking(4, { customer_id: 'alice' }) });
            expectError(impersonating, 400, 'validation_failed', 'customer_id');

            const list = await server.inject({ url: '/v1/logistics/bookings', headers: bearer(server, 'mallory') });
            expect(body<Envelope<Booking>>(list).data.map((booking) => booking.id)).to.equal([body<Booking>(created).id]);

            const theirs = await server.inject({ url: `/v1/logistics/bookings/${owned.id}`, headers: bearer(server, 'mallory') });
            const missing = await server.inject({ url: `/v1/logistics/bookings/${unknownId}`, headers: bearer(server, 'mallory') });
            expectError(theirs, 404, 'booking_not_found');
            expect(theirs.payload).to.equal(missing.payload);
            expect(theirs.headers['content-type']).to.equal(missing.headers['content-type']);
            expect(theirs.headers['content-length']).to.equal(missing.headers['content-length']);
        });

        const routes: [string, 'GET' | 'POST', () => string, (() => Record<string, unknown>) | undefined][] = [
            ['POST /bookings', 'POST', () => '/v1/logistics/bookings', () => newBooking(9)],
            ['GET /bookings', 'GET', () => '/v1/logistics/bookings', undefined],
            ['GET /bookings/{booking_id}', 'GET', () => `/v1/logistics/bookings/${owned.id}`, undefined]
        ];

        routes.forEach(([title, method, url, payload]) => {

            it(`answers 401 with WWW-Authenticate on ${title} without a token`, async () => {

                const res = await server.inject({ method, url: url(), payload: payload?.() });
                expectError(res, 401, 'unauthorized');
                expect(res.headers['www-authenticate']).to.contain('Bearer');
            });

            it(`answers 401 on ${title} for every kind of bad token`, async () => {

                for (const [kind, token] of badTokens(server.app.localgate.secret)) {
                    const res = await server.inject({ method, url: url(), payload: payload?.(), headers: { authorization: `Bearer ${token}` } });
                    expect(res.statusCode, `${kind}: ${res.payload}`).to.equal(401);
                    expect(body(res).code).to.equal('unauthorized');
                }
            });
        });

        it('answers 401 on the optional vehicle and location routes for a bad token, never a silent downgrade', async () => {

            for (const url of ['/v1/logistics/vehicles', `/v1/logistics/vehicles/${demo.vehicles[0]!.id}`, '/v1/logistics/locations']) {
                for (const [kind, token] of badTokens(server.app.localgate.secret)) {
                    const res = await server.inject({ url, headers: { authorization: `Bearer ${token}` } });
                    expect(res.statusCode, `${url} ${kind}`).to.equal(401);
                }
            }
        });
    });
}


for (const engine of engines) {
    describe(`logistics error matrix (${engine})`, () => {

        let server: Server;
        let bobsBooking: string;

        before(async () => {

            server = await engineServer(engine);
            const taken = await server.inject({ method: 'POST', url: '/v1/logistics/bookings', headers: bearer(server, 'bob'), payload: newBooking(0) });
            bobsBooking = body<Booking>(taken).id;
        });

        after(async () => {

            await server.stop();
        });

        interface Case {
            title: string;
            method?: 'GET' | 'POST';
            url: () => string;
            auth?: 'alice' | 'none' | 'expired';
            payload?: unknown;
            contentType?: string;
            status: number;
            code: string;
            field?: string;
        }

        const post = (title: string, payload: unknown, status: number, code: string, field?: string): Case => {

            return { title, method: 'POST', url: () => '/v1/logistics/bookings', payload, status, code, field };
        };

        const without = (field: string) => Object.fromEntries(Object.entries(newBooking(1)).filter(([key]) => key !== field));

        const cases: Case[] = [
            { title: 'available=maybe', url: () => '/v1/logistics/vehicles?available=maybe', status: 400, code: 'validation_failed', field: 'available' },
            { title: 'limit=0 on vehicles', url: () => '/v1/logistics/vehicles?limit=0', status: 400, code: 'validation_failed', field: 'limit' },
            { title: 'limit=101 on vehicles', url: () => '/v1/logistics/vehicles?limit=101', status: 400, code: 'validation_failed', field: 'limit' },
            { title: 'limit=ten on vehicles', url: () => '/v1/logistics/vehicles?limit=ten', status: 400, code: 'validation_failed', field: 'limit' },
            { title: 'offset=-1 on vehicles', url: () => '/v1/logistics/vehicles?offset=-1', status: 400, code: 'validation_failed', field: 'offset' },
            { title: 'an unknown query parameter on vehicles', url: () => '/v1/logistics/vehicles?colour=red', status: 400, code: 'validation_failed', field: 'colour' },
            { title: 'limit=101 on locations', url: () => '/v1/logistics/locations?limit=101', status: 400, code: 'validation_failed', field: 'limit' },
            { title: 'offset=1.5 on locations', url: () => '/v1/logistics/locations?offset=1.5', status: 400, code: 'validation_failed', field: 'offset' },
            { title: 'limit=0 on bookings', url: () => '/v1/logistics/bookings?limit=0', auth: 'alice', status: 400, code: 'validation_failed', field: 'limit' },
            { title: 'offset=-5 on bookings', url: () => '/v1/logistics/bookings?offset=-5', auth: 'alice', status: 400, code: 'validation_failed', field: 'offset' },
            { title: 'a vehicle id over 100 characters', url: () => `/v1/logistics/vehicles/${'v'.repeat(101)}`, status: 400, code: 'validation_failed', field: 'vehicle_id' },
            { title: 'a booking id over 100 characters', url: () => `/v1/logistics/bookings/${'b'.repeat(101)}`, auth: 'alice', status: 400, code: 'validation_failed', field: 'booking_id' },
            post('a body carrying customer_id', newBooking(1, { customer_id: 'alice' }), 400, 'validation_failed', 'customer_id'),
            post('a body carrying id', newBooking(1, { id: unknownId }), 400, 'validation_failed', 'id'),
            post('a body carrying status', newBooking(1, { status: 'confirmed' }), 400, 'validation_failed', 'status'),
            post('a body carrying created_at', newBooking(1, { created_at: '2030-01-01T00:00:00.000Z' }), 400, 'validation_failed', 'created_at'),
            post('an unknown body field', newBooking(1, { driver_id: 'x' }), 400, 'validation_failed', 'driver_id'),
            post('a missing vehicle_id', without('vehicle_id'), 400, 'validation_failed', 'vehicle_id'),
            post('a missing pickup_at', without('pickup_at'), 400, 'validation_failed', 'pickup_at'),
            post('a numeric vehicle_id', newBooking(1, { vehicle_id: 12 }), 400, 'validation_failed', 'vehicle_id'),
            post('an empty vehicle_id', newBooking(1, { vehicle_id: '' }), 400, 'validation_failed', 'vehicle_id'),
            post('a vehicle_id over 100 characters', newBooking(1, { vehicle_id: 'v'.repeat(101) }), 400, 'validation_failed', 'vehicle_id'),
            post('pickup_at with an offset instead of Z', newBooking(1, { pickup_at: '2030-01-02T10:00:00+02:00' }), 400, 'validation_failed', 'pickup_at'),
            post('pickup_at without a time', newBooking(1, { pickup_at: '2030-01-02' }), 400, 'validation_failed', 'pickup_at'),
            post('pickup_at as epoch milliseconds', newBooking(1, { pickup_at: 1893578400000 }), 400, 'validation_failed', 'pickup_at'),
            post('pickup_at with microseconds', newBooking(1, { pickup_at: '2030-01-02T10:00:00.000001Z' }), 400, 'validation_failed', 'pickup_at'),
            post('pickup_at on 30 February', newBooking(1, { pickup_at: '2030-02-30T10:00:00Z', return_at: '2030-03-05T10:00:00Z' }), 400, 'validation_failed', 'pickup_at'),
            post('pickup_at in month 13', newBooking(1, { pickup_at: '2030-13-01T10:00:00Z' }), 400, 'validation_failed', 'pickup_at'),
            post('pickup_at at 24:00', newBooking(1, { pickup_at: '2030-01-01T24:00:00Z', return_at: '2030-01-03T10:00:00Z' }), 400, 'validation_failed', 'pickup_at'),
            post('return_at equal to pickup_at', newBooking(1, { return_at: '2030-01-02T10:00:00.000Z' }), 400, 'validation_failed', 'return_at'),
            post('return_at before pickup_at', newBooking(1, { return_at: '2030-01-02T09:59:59Z' }), 400, 'validation_failed', 'return_at'),
            post('notes that are not a string', newBooking(1, { notes: 42 }), 400, 'validation_failed', 'notes'),
            post('notes over the maximum length', newBooking(1, { notes: 'n'.repeat(maxNotesLength + 1) }), 400, 'validation_failed', 'notes'),
            post('notes with a NUL character', newBooking(1, { notes: 'Child seat\u0000' }), 400, 'validation_failed', 'notes'),
            post('notes with an unpaired surrogate', newBooking(1, { notes: 'Child seat \ud83d' }), 400, 'validation_failed', 'notes'),
            post('a JSON array body', [newBooking(1)], 400, 'validation_failed'),
            { title: 'an empty body', method: 'POST', url: () => '/v1/logistics/bookings', status: 400, code: 'validation_failed' },
            { title: 'malformed JSON', method: 'POST', url: () => '/v1/logistics/bookings', payload: '{"vehicle_id": ', contentType: 'application/json', status: 400, code: 'bad_request' },
            { title: 'POST /bookings without a token', method: 'POST', url: () => '/v1/logistics/bookings', auth: 'none', payload: newBooking(1), status: 401, code: 'unauthorized' },
            { title: 'GET /bookings without a token', url: () => '/v1/logistics/bookings', auth: 'none', status: 401, code: 'unauthorized' },
            { title: 'GET /bookings/{id} with an expired token', url: () => `/v1/logistics/bookings/${bobsBooking}`, auth: 'expired', status: 401, code: 'unauthorized' },
            { title: 'GET /vehicles with an expired token', url: () => '/v1/logistics/vehicles', auth: 'expired', status: 401, code: 'unauthorized' },
            { title: 'an unknown vehicle', url: () => `/v1/logistics/vehicles/${unknownId}`, status: 404, code: 'vehicle_not_found' },
            { title: 'an unknown booking', url: () => `/v1/logistics/bookings/${unknownId}`, auth: 'alice', status: 404, code: 'booking_not_found' },
            { title: 'another caller\'s booking', url: () => `/v1/logistics/bookings/${bobsBooking}`, auth: 'alice', status: 404, code: 'booking_not_found' },
            { title: 'an unknown logistics path', url: () => '/v1/logistics/drivers', status: 404, code: 'not_found' },
            post('an unavailable vehicle', newBooking(1, { vehicle_id: unavailableVehicle.id }), 409, 'vehicle_unavailable', 'vehicle_id'),
            post('a slot overlapping a confirmed booking', newBooking(0, { pickup_at: at(0, '11:00:00'), return_at: at(0, '13:00:00') }), 409, 'booking_overlap'),
            post('a body over 64 KiB', newBooking(1, { notes: 'n'.repeat(70_000) }), 413, 'payload_too_large'),
            { title: 'a body that is not JSON', method: 'POST', url: () => '/v1/logistics/bookings', payload: 'vehicle_id=1', contentType: 'application/x-www-form-urlencoded', status: 415, code: 'unsupported_media_type' },
            { title: 'a text/plain body', method: 'POST', url: () => '/v1/logistics/bookings', payload: JSON.stringify(newBooking(1)), contentType: 'text/plain', status: 415, code: 'unsupported_media_type' },
            post('an unknown vehicle_id', newBooking(1, { vehicle_id: unknownId }), 422, 'vehicle_not_found', 'vehicle_id'),
            post('an unknown pickup_location_id', newBooking(1, { pickup_location_id: unknownId }), 422, 'location_not_found', 'pickup_location_id'),
            post('an unknown dropoff_location_id', newBooking(1, { dropoff_location_id: unknownId }), 422, 'location_not_found', 'dropoff_location_id')
        ];

        cases.forEach((entry) => {

            it(`answers ${entry.status} ${entry.code} for ${entry.title}`, async () => {

                const auth = entry.auth ?? (entry.method === 'POST' ? 'alice' : 'none');
                const headers: Record<string, string> = {
                    ...(auth === 'alice' ? bearer(server, 'alice') : {}),
                    ...(auth === 'expired' ? bearer(server, 'alice', -3600) : {}),
                    ...(entry.contentType ? { 'content-type': entry.contentType } : {})
                };
                const res = await server.inject({ method: entry.method ?? 'GET', url: entry.url(), headers, payload: entry.payload as object });
                expectError(res, entry.status, entry.code, entry.field);
            });
        });
    });
}


describe('logistics demo data', () => {

    it('ships a believable data set of the town of Harbourside', () => {

        expect(demo.vehicles.length).to.equal(12);
        expect(demo.vehicles.filter((vehicle) => !vehicle.is_available).length).to.equal(3);
        expect(demo.locations.length).to.equal(6);
        expect(demo.locations.every((location) => location.city === 'Harbourside' && Math.abs(location.latitude) <= 90 && Math.abs(location.longitude) <= 180)).to.be.true();
        expect(demo.drivers.length).to.equal(5);
        expect(demo.drivers.filter((driver) => driver.vehicle_id !== null).length).to.equal(3);
    });

    it('loads vehicles, locations and drivers on first start', async () => {

        const server = await testServer();
        const drivers = sqliteDatabase(server.app.localgate.data, 'logistics').prepare('SELECT id, vehicle_id, is_active FROM drivers ORDER BY created_at, id').all();
        const vehicles = await server.inject('/v1/logistics/vehicles');
        const locations = await server.inject('/v1/logistics/locations');
        await server.stop();

        expect(drivers).to.equal(demo.drivers.map((driver) => ({ id: driver.id, vehicle_id: driver.vehicle_id, is_active: Number(driver.is_active) })));
        expect(body(vehicles).total).to.equal(demo.vehicles.length);
        expect(body(locations).total).to.equal(demo.locations.length);
    });

    it('starts empty with seed: false', async () => {

        const server = await testServer({ seed: false });
        const vehicles = await server.inject('/v1/logistics/vehicles');
        const locations = await server.inject('/v1/logistics/locations');
        const booking = await server.inject({ method: 'POST', url: '/v1/logistics/bookings', headers: bearer(server, 'alice'), payload: newBooking(1) });
        await server.stop();

        expect(body(vehicles)).to.equal({ data: [], count: 0, total: 0 });
        expect(vehicles.headers['x-total-count']).to.equal('0');
        expect(body(locations)).to.equal({ data: [], count: 0, total: 0 });
        expectError(booking, 422, 'vehicle_not_found', 'vehicle_id');
    });

    it('keeps bookings and loads the demo data only once across restarts on disk', async () => {

        const dataDir = tempDir();
        const options = { dataDir, logLevel: 'silent' as const, jwtSecret: Crypto.randomBytes(32).toString('hex') };
        try {
            const first = await createServer(options);
            const created = await first.inject({ method: 'POST', url: '/v1/logistics/bookings', headers: bearer(first, 'alice'), payload: newBooking(1) });
            expect(created.statusCode).to.equal(201);
            await first.stop();

            const second = await createServer(options);
            const vehicles = await second.inject('/v1/logistics/vehicles');
            const fetched = await second.inject({ url: created.headers.location as string, headers: bearer(second, 'alice') });
            await second.stop();

            expect(body(vehicles).total).to.equal(demo.vehicles.length);
            expect(body(fetched)).to.equal(body(created));
        }
        finally {
            Fs.rmSync(dataDir, { recursive: true, force: true });
        }
    });
});


describe('logistics indexes', () => {

    let server: Server;

    before(async () => {

        server = await testServer({ seed: false });
        const db = sqliteDatabase(server.app.localgate.data, 'logistics');

        // Enough rows that a full scan would be a real choice for the planner, and statistics that describe them.
        const vehicles = Array.from({ length: 200 }, (_, index) => ({
            id: `vehicle-${index}`, make: 'Make', model: 'Model', year: 2020, seats: 5, daily_rate: 40, currency: 'GBP',
            is_available: index % 3 !== 0, created_at: new Date(Date.UTC(2025, 0, 1, 0, index)).toISOString()
        }));
        const locations = [{ id: 'here', name: 'Here', address: '1 Road', city: 'Harbourside', latitude: 50, longitude: -3, created_at: '2025-01-01T00:00:00.000Z' }];
        const bookings = Array.from({ length: 2000 }, (_, index) => ({
            id: `booking-${index}`, vehicle_id: `vehicle-${index % 200}`, pickup_location_id: 'here', dropoff_location_id: 'here',
            pickup_at: new Date(Date.UTC(2030, 0, 1 + index)).toISOString(), return_at: new Date(Date.UTC(2030, 0, 2 + index)).toISOString(),
            notes: '', customer_id: `customer-${index % 50}`, status: 'confirmed', created_at: new Date(Date.UTC(2025, 1, 1, 0, 0, index)).toISOString()
        }));
        insertRows(db, 'vehicles', vehicles);
        insertRows(db, 'locations', locations);
        insertRows(db, 'bookings', bookings);
        db.exec('ANALYZE');
    });

    after(async () => {

        await server.stop();
    });

    const params = {
        limit: 20, offset: 0, available: 1, id: 'vehicle-1', customer_id: 'customer-1', vehicle_id: 'vehicle-1',
        pickup_at: '2030-03-01T00:00:00.000Z', return_at: '2030-03-02T00:00:00.000Z', pickup_location_id: 'here', dropoff_location_id: 'here',
        notes: '', status: 'confirmed', created_at: '2030-01-01T00:00:00.000Z'
    };

    const plan = (sql: string) => {

        const rows = sqliteDatabase(server.app.localgate.data, 'logistics').prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[];
        return rows.map((row) => row.detail);
    };

    const expected: [keyof typeof queries, RegExp][] = [
        ['listVehicles', /^SCAN vehicles USING (COVERING )?INDEX vehicles_by_created$/],
        ['countVehicles', /USING COVERING INDEX/],
        ['listVehiclesByAvailability', /^SEARCH vehicles USING INDEX vehicles_by_availability \(is_available=\?\)$/],
        ['countVehiclesByAvailability', /^SEARCH vehicles USING COVERING INDEX vehicles_by_availability \(is_available=\?\)$/],
        ['vehicleById', /^SEARCH vehicles USING INDEX sqlite_autoindex_vehicles_1 \(id=\?\)$/],
        ['listLocations', /^SCAN locations USING (COVERING )?INDEX locations_by_created$/],
        ['countLocations', /USING COVERING INDEX/],
        ['locationExists', /^SEARCH locations USING COVERING INDEX sqlite_autoindex_locations_1 \(id=\?\)$/],
        ['listBookings', /^SEARCH bookings USING INDEX bookings_by_customer \(customer_id=\?\)$/],
        ['countBookings', /^SEARCH customer_booking_counts USING PRIMARY KEY \(customer_id=\?\)$/],
        ['latestBookingOfCustomer', /^SEARCH bookings USING COVERING INDEX bookings_by_customer \(customer_id=\?\)$/],
        ['bookingById', /^SEARCH bookings USING INDEX sqlite_autoindex_bookings_1 \(id=\?\)$/],
        ['latestBookingBefore', /^SEARCH bookings USING COVERING INDEX bookings_by_vehicle_schedule \(vehicle_id=\? AND status=\? AND pickup_at<\?\)$/]
    ];

    it('has an expectation for every read the store makes', () => {

        const reads = Object.keys(queries).filter((name) => !name.startsWith('insert'));
        expect(expected.map(([name]) => name as string).sort()).to.equal(reads.sort());
    });

    for (const [name, pattern] of expected) {
        it(`serves ${name} from an index, without a full scan or a temporary b-tree`, () => {

            const details = plan(queries[name]);
            expect(details, details.join('; ')).to.have.length(1);
            expect(details[0]).to.match(pattern);
            expect(details.join('; ')).to.not.contain('TEMP B-TREE');
            expect(details.join('; ')).to.not.match(/SCAN (vehicles|locations|bookings)(?! USING)/);
        });
    }

    it('checks overlap against the bookings of one vehicle only', async () => {

        const res = await server.inject({
            method: 'POST', url: '/v1/logistics/bookings', headers: bearer(server, 'alice'),
            payload: { vehicle_id: 'vehicle-7', pickup_location_id: 'here', dropoff_location_id: 'here', pickup_at: '2030-01-08T12:00:00Z', return_at: '2030-01-08T13:00:00Z' }
        });
        expectError(res, 409, 'booking_overlap');

        // The search key starts with the vehicle and the index is read backwards from the return: one row is visited.
        expect(plan(queries.latestBookingBefore)[0]).to.contain('(vehicle_id=? AND status=? AND pickup_at<?)');
    });
});


describe('logistics booking counts', () => {

    it('counts the bookings made before the counter existed, then keeps each customer\'s count through every write', () => {

        const db = openDatabase(':memory:');
        const migrations = namespaceMigrations('logistics');
        migrate(db, migrations.slice(0, 1));
        insertRows(db, 'vehicles', [{ id: 'van', make: 'Make', model: 'Model', year: 2020, seats: 3, daily_rate: 60, currency: 'GBP', is_available: true, created_at: '2025-01-01T00:00:00.000Z' }]);
        insertRows(db, 'locations', [{ id: 'depot', name: 'Depot', address: '1 Road', city: 'Harbourside', latitude: 50, longitude: -3, created_at: '2025-01-01T00:00:00.000Z' }]);
        insertRows(db, 'bookings', ['ann', 'ann', 'bob'].map((customer, index) => ({
            id: `booking-${index}`, vehicle_id: 'van', pickup_location_id: 'depot', dropoff_location_id: 'depot',
            pickup_at: `2030-01-0${index + 1}T00:00:00.000Z`, return_at: `2030-01-0${index + 1}T12:00:00.000Z`,
            notes: '', customer_id: customer, status: 'confirmed', created_at: `2025-01-01T00:00:0${index}.000Z`
        })));
        migrate(db, migrations);

        const counts = () => Object.fromEntries((db.prepare('SELECT customer_id, bookings FROM customer_booking_counts ORDER BY customer_id').raw().all() as [string, number][]));
        expect(counts()).to.equal({ ann: 2, bob: 1 });

        db.prepare('UPDATE bookings SET customer_id = ? WHERE id = ?').run('cat', 'booking-0');
        expect(counts()).to.equal({ ann: 1, bob: 1, cat: 1 });

        db.prepare('DELETE FROM bookings WHERE id = ?').run('booking-2');
        expect(counts()).to.equal({ ann: 1, bob: 0, cat: 1 });
        db.close();
    });
});

