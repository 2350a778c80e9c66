import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import Jwt from '@hapi/jwt';
import Lab from '@hapi/lab';

import { createServer, mintToken } from '../lib';
import { maxNotesLength } from '../lib/namespaces/logistics/schemas';
import { expectError } from './helpers/errors';
import { engineServer, engines } from './helpers/postgres';
import { bearer, body, tempDir } from './helpers/server';
import { engineWorlds, serverWorlds, useWorld } from './helpers/worlds';


export const lab = Lab.script();
const { describe, it, before, beforeEach } = lab;
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


/** An instant on a day of January 2030: day 1 (the default) is 2 January, the day a new booking takes. */
function at(time: string, day = 1): string {

    return `${new Date(Date.UTC(2030, 0, 1 + day)).toISOString().slice(0, 10)}T${time}Z`;
}


/** A valid booking body: the first available vehicle, from 10:00 to 12:00 on 2 January 2030. */
function newBooking(overrides: Record<string, unknown> = {}): Record<string, unknown> {

    return {
        vehicle_id: availableVehicles[0]!.id,
        pickup_location_id: quay!.id,
        dropoff_location_id: station!.id,
        pickup_at: at('10:00:00'),
        return_at: at('12:00:00'),
        ...overrides
    };
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

        const world = useWorld(lab, serverWorlds(engine), { shared: true });
        const get = (url: string, subject?: string) => world().inject({ url, headers: subject ? bearer(world().server, subject) : {} });

        it('lists every vehicle oldest first in the list envelope with X-Total-Count', async () => {

            const res = await get('/v1/logistics/vehicles');
            expect(res.statusCode).to.equal(200);
            expect(res.headers['x-total-count']).to.equal(String(demo.vehicles.length));
            const list = body<Envelope<DemoVehicle>>(res);
            expect(list.count).to.equal(demo.vehicles.length);
            expect(list.total).to.equal(demo.vehicles.length);
            expect(list.data.map((vehicle) => vehicle.id)).to.equal([...demo.vehicles].sort(byListOrder).map((vehicle) => vehicle.id));
        });

        it('filters on availability with available=true and available=false', async () => {

            const available = await get('/v1/logistics/vehicles?available=true');
            expect(available.statusCode).to.equal(200);
            const availableList = body<Envelope<DemoVehicle>>(available);
            expect(availableList.data.map((vehicle) => vehicle.id)).to.equal(availableVehicles.map((vehicle) => vehicle.id));
            expect(availableList.total).to.equal(availableVehicles.length);
            expect(available.headers['x-total-count']).to.equal(String(availableVehicles.length));

            const unavailable = await get('/v1/logistics/vehicles?available=false');
            const unavailableList = body<Envelope<DemoVehicle>>(unavailable);
            expect(unavailableList.total).to.equal(demo.vehicles.length - availableVehicles.length);
            expect(unavailableList.data.map((vehicle) => vehicle.id)).to.equal(demo.vehicles.filter((vehicle) => !vehicle.is_available).sort(byListOrder).map((vehicle) => vehicle.id));
            expect(unavailableList.data.every((vehicle) => vehicle.is_available === false)).to.be.true();
        });

        it('pages with limit and offset without repeating or skipping a vehicle', async () => {

            const seen: string[] = [];
            for (let i = 0; i < demo.vehicles.length; i += 5) {
                const res = await get(`/v1/logistics/vehicles?limit=5&offset=${i}`);
                const page = body<Envelope<DemoVehicle>>(res);
                expect(page.total).to.equal(demo.vehicles.length);
                expect(page.count).to.equal(Math.min(5, demo.vehicles.length - i));
                seen.push(...page.data.map((vehicle) => vehicle.id));
            }

            expect(seen).to.equal([...demo.vehicles].sort(byListOrder).map((vehicle) => vehicle.id));

            const past = await get('/v1/logistics/vehicles?offset=1000&available=true');
            expect(body(past)).to.equal({ data: [], count: 0, total: availableVehicles.length });
        });

        it('answers the same with a token as without one', async () => {

            const anonymous = await get('/v1/logistics/vehicles?available=false');
            const authenticated = await get('/v1/logistics/vehicles?available=false', 'alice');
            expect(authenticated.statusCode).to.equal(200);
            expect(authenticated.payload).to.equal(anonymous.payload);
        });

        it('returns one vehicle with every field and a boolean is_available', async () => {

            const vehicle = demo.vehicles[3]!;
            const res = await get(`/v1/logistics/vehicles/${vehicle.id}`);
            expect(res.statusCode).to.equal(200);
            expect(body<DemoVehicle>(res)).to.equal(vehicle);

            const withToken = await get(`/v1/logistics/vehicles/${vehicle.id}`, 'alice');
            expect(body<DemoVehicle>(withToken)).to.equal(vehicle);
        });

        it('answers 404 for a vehicle that does not exist', async () => {

            const res = await get(`/v1/logistics/vehicles/${unknownId}`);
            expectError(res, 404, 'vehicle_not_found');
            expect(body(res).message).to.equal('There is no vehicle with this id');
        });
    });
}


for (const engine of engines) {
    describe(`logistics locations (${engine})`, () => {

        const world = useWorld(lab, serverWorlds(engine), { shared: true });

        it('lists the pickup and drop-off locations of Harbourside with coordinates, oldest first', async () => {

            const res = await world().inject({ url: '/v1/logistics/locations', headers: bearer(world().server, 'alice') });
            expect(res.statusCode).to.equal(200);
            expect(res.headers['x-total-count']).to.equal(String(demo.locations.length));
            expect(body(res)).to.equal({ data: [...demo.locations].sort(byListOrder), count: demo.locations.length, total: demo.locations.length });
        });

        it('pages with limit and offset', async () => {

            const res = await world().inject('/v1/logistics/locations?limit=2&offset=4');
            expect(res.statusCode).to.equal(200);
            expect(body(res)).to.equal({ data: [...demo.locations].sort(byListOrder).slice(4, 6), count: 2, total: demo.locations.length });
        });
    });
}


for (const engine of engines) {
    describe(`logistics bookings (${engine})`, () => {

        const world = useWorld(lab, engineWorlds(engine), { closeWorlds: true });
        const auth = (subject: string) => bearer(world().server, subject);
        const book = (payload: Record<string, unknown>, subject = 'alice') => world().inject({ method: 'POST', url: '/v1/logistics/bookings', headers: auth(subject), payload });
        const list = (subject: string, query = '') => world().inject({ url: `/v1/logistics/bookings${query}`, headers: auth(subject) });
        // A Location header already carries the world's base path.
        const follow = (location: unknown, subject = 'alice') => world().server.inject({ url: location as string, headers: auth(subject) });

        it('creates a confirmed booking owned by the caller, with Location and normalized timestamps', async () => {

            const payload = newBooking({ pickup_at: at('10:00:00'), return_at: at('12:30:00.5') });
            const res = await book(payload);
            expect(res.statusCode).to.equal(201);
            const booking = body<Booking>(res);
            expect(res.headers.location).to.equal(`${world().basePath}/v1/logistics/bookings/${booking.id}`);
            expect(booking.id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
            expect(booking).to.equal({
                id: booking.id,
                vehicle_id: payload.vehicle_id,
                pickup_location_id: quay!.id,
                dropoff_location_id: station!.id,
                pickup_at: at('10:00:00.000'),
                return_at: at('12:30:00.500'),
                notes: '',
                customer_id: 'alice',
                status: 'confirmed',
                created_at: booking.created_at,
                metadata: {}
            });
            expect(new Date(booking.created_at).toISOString()).to.equal(booking.created_at);
            expect(Math.abs(Date.parse(booking.created_at) - Date.now())).to.be.below(60_000);

            const fetched = await follow(res.headers.location);
            expect(fetched.statusCode).to.equal(200);
            expect(body(fetched)).to.equal(booking);
            expect(body(await list('alice'))).to.equal({ data: [booking], count: 1, total: 1 });
        });

        it('stores notes exactly as sent', async () => {

            const notes = `  Child seat, "please" <b>thanks</b> '); DROP TABLE bookings; -- 🚐\n`;
            const res = await book(newBooking({ notes }));
            expect(res.statusCode).to.equal(201);
            expect(body(res).notes).to.equal(notes);
            expect(body(await follow(res.headers.location))).to.equal(body(res));

            const long = await book(newBooking({ pickup_at: at('10:00:00', 2), return_at: at('12:00:00', 2), notes: 'n'.repeat(maxNotesLength) }));
            expect(long.statusCode).to.equal(201);
            expect(body(long).notes).to.equal('n'.repeat(maxNotesLength));
        });

        it('lets a booking pick up at the instant the previous one returns', async () => {

            const first = await book(newBooking({ pickup_at: at('08:00:00'), return_at: at('10:00:00') }));
            const second = await book(newBooking({ pickup_at: at('10:00:00'), return_at: at('12:00:00') }), 'bob');
            const before10 = await book(newBooking({ pickup_at: at('06:00:00'), return_at: at('08:00:00.000') }), 'carol');
            expect([first.statusCode, second.statusCode, before10.statusCode]).to.equal([201, 201, 201]);
        });

        it('answers 409 booking_overlap for every way a range can overlap a confirmed booking of the vehicle', async () => {

            const existing = await book(newBooking({ pickup_at: at('10:00:00'), return_at: at('14:00:00') }));
            expect(existing.statusCode).to.equal(201);

            const overlaps: [string, string][] = [
                ['10:00:00', '14:00:00'],
                ['09:00:00', '10:00:00.001'],
                ['13:59:59.999', '15:00:00'],
                ['11:00:00', '12:00:00'],
                ['09:00:00', '15:00:00']
            ];
            for (const [pickup, dropoff] of overlaps) {
                const res = await book(newBooking({ pickup_at: at(pickup), return_at: at(dropoff) }), 'bob');
                expectError(res, 409, 'booking_overlap');
                expect(body(res).message).to.contain('already booked');
            }

            // Nothing of a refused booking was kept.
            expect(body(await list('bob'))).to.equal({ data: [], count: 0, total: 0 });

            const otherVehicle = await book(newBooking({ vehicle_id: availableVehicles[1]!.id }), 'bob');
            expect(otherVehicle.statusCode).to.equal(201);
        });

        it('reports each timestamp problem once, naming the field that has it', async () => {

            const offset = await book(newBooking({ pickup_at: '2030-01-10T10:00:00+02:00', return_at: '2030-01-10T07:00:00Z' }));
            expect(body(offset).details).to.equal([{ field: 'pickup_at', message: 'pickup_at must be an ISO 8601 UTC timestamp ending in Z, such as 2030-06-01T10:00:00Z' }]);

            const unreal = await book(newBooking({ pickup_at: '2030-01-10T10:00:00Z', return_at: '2030-01-10T25:00:00.000Z' }));
            expect(body(unreal).details).to.equal([{ field: 'return_at', message: 'return_at is not a real calendar date and time' }]);

            const early = await book(newBooking({ pickup_at: '2030-01-10T10:00:00Z', return_at: '2030-01-10T09:00:00Z' }));
            expect(body(early)).to.include({ message: 'Invalid payload: return_at must be after pickup_at', details: [{ field: 'return_at', message: 'return_at must be after pickup_at' }] });
        });

        it('refuses notes that could not be stored as sent, naming the field', async () => {

            for (const notes of ['seat\u0000', 'seat \ud83d', '\udc00 seat']) {
                const res = await book(newBooking({ notes }));
                expectError(res, 400, 'validation_failed', 'notes');
                expect(body(res).details).to.equal([{ field: 'notes', message: 'notes must not contain NUL characters or unpaired surrogates' }]);
            }

            const blank = await book(newBooking({ notes: ' \t\n' }));
            expect(blank.statusCode).to.equal(201);
            expect(body(blank).notes).to.equal(' \t\n');
            expect(body(await list('alice')).total).to.equal(1);
        });

        it('answers 400 for a body that is not a JSON object', async () => {

            for (const payload of ['[]', '"booking"', '42', 'null', '']) {
                const res = await world().inject({ method: 'POST', url: '/v1/logistics/bookings', headers: { ...auth('alice'), 'content-type': 'application/json' }, payload });
                expectError(res, 400, 'validation_failed');
                expect(body(res).message, payload).to.contain('The request body must be a JSON object');
            }
        });

        it('answers 409 vehicle_unavailable for a vehicle that cannot be booked', async () => {

            const res = await book(newBooking({ vehicle_id: unavailableVehicle.id }));
            expectError(res, 409, 'vehicle_unavailable', 'vehicle_id');
            expect(body(await list('alice'))).to.equal({ data: [], count: 0, total: 0 });
        });

        it('answers 422 naming the field for an unknown vehicle or location', async () => {

            const references: [string, string][] = [
                ['vehicle_id', 'vehicle_not_found'],
                ['pickup_location_id', 'location_not_found'],
                ['dropoff_location_id', 'location_not_found']
            ];

            for (const [field, code] of references) {
                const res = await book(newBooking({ [field]: unknownId }));
                expectError(res, 422, code, field);
            }

            expect(body(await list('alice'))).to.equal({ data: [], count: 0, total: 0 });
        });

        it('lists only the caller\'s bookings, oldest first, with paging', async () => {

            const made: Booking[] = [];
            for (let i = 1; i <= 5; ++i) {
                const res = await book(newBooking({ pickup_at: at('10:00:00', i), return_at: at('12:00:00', i) }), 'erin');
                made.push(body<Booking>(res));
            }

            const franks = await book(newBooking({ pickup_at: at('10:00:00', 6), return_at: at('12:00:00', 6) }), 'frank');

            const all = await list('erin');
            expect(all.statusCode).to.equal(200);
            expect(all.headers['x-total-count']).to.equal('5');
            expect(body(all)).to.equal({ data: made, count: 5, total: 5 });

            const page = await list('erin', '?limit=2&offset=3');
            expect(body(page)).to.equal({ data: made.slice(3), count: 2, total: 5 });

            expect(body(await list('frank'))).to.equal({ data: [body(franks)], count: 1, total: 1 });

            const nobody = await list('nobody');
            expect(body(nobody)).to.equal({ data: [], count: 0, total: 0 });
        });

        it('gives each of a caller\'s bookings a later created_at than the one before, even within one millisecond', async () => {

            const responses = await Promise.all(Array.from({ length: 20 }, (_, index) => {

                return book(newBooking({ pickup_at: at('10:00:00', index), return_at: at('12:00:00', index) }), 'grace');
            }));
            expect(responses.map((res) => res.statusCode)).to.equal(Array(20).fill(201));

            const listed = body<Envelope<Booking>>(await list('grace', '?limit=100'));
            expect(listed.total).to.equal(20);
            const createdAt = listed.data.map((booking) => booking.created_at);
            expect(createdAt).to.equal([...new Set(createdAt)].sort());
            expect(listed.data.map((booking) => booking.id).sort()).to.equal(responses.map((res) => body<Booking>(res).id).sort());
        });
    });
}


for (const engine of engines) {
    describe(`logistics booking lifecycle (${engine})`, () => {

        const world = useWorld(lab, engineWorlds(engine), { closeWorlds: true });
        const auth = (subject: string) => bearer(world().server, subject);
        const book = (payload: Record<string, unknown>, subject = 'alice') => world().inject({ method: 'POST', url: '/v1/logistics/bookings', headers: auth(subject), payload });
        const read = (id: string, subject = 'alice') => world().inject({ url: `/v1/logistics/bookings/${id}`, headers: auth(subject) });
        const cancel = (id: string, subject = 'alice') => world().inject({ method: 'POST', url: `/v1/logistics/bookings/${id}/cancel`, headers: auth(subject) });

        // A range around the wall clock's now, in hours from it, in the form records keep.
        const hours = (from: number, to: number) => {

            const now = Date.now();
            return { pickup_at: new Date(now + from * 3_600_000).toISOString(), return_at: new Date(now + to * 3_600_000).toISOString() };
        };

        it('stores a booking whose pickup_at has passed as active, and one whose return_at has passed too as completed', async () => {

            const range = hours(-2, 2);
            const active = await book(newBooking(range));
            expect(active.statusCode).to.equal(201);
            const activeBooking = body<Booking>(active);
            expect(activeBooking).to.equal({
                id: activeBooking.id,
                vehicle_id: availableVehicles[0]!.id,
                pickup_location_id: quay!.id,
                dropoff_location_id: station!.id,
                ...range,
                notes: '',
                customer_id: 'alice',
                status: 'active',
                created_at: activeBooking.created_at,
                metadata: {}
            });
            expect(body(await read(activeBooking.id))).to.equal(activeBooking);

            const completed = await book(newBooking({ pickup_at: '2020-03-01T10:00:00Z', return_at: '2020-03-02T10:00:00Z' }));
            expect(completed.statusCode).to.equal(201);
            expect(body<Booking>(completed).status).to.equal('completed');
            expect(body<Envelope<Booking>>(await world().inject({ url: '/v1/logistics/bookings', headers: auth('alice') })).data.map((booking) => booking.status)).to.equal(['active', 'completed']);
        });

        it('keeps a vehicle held by its active and completed bookings: overlapping either is a 409', async () => {

            expect((await book(newBooking(hours(-2, 2)))).statusCode).to.equal(201);
            expect((await book(newBooking({ pickup_at: '2020-03-01T10:00:00Z', return_at: '2020-03-02T10:00:00Z' }))).statusCode).to.equal(201);

            expectError(await book(newBooking(hours(1, 3)), 'bob'), 409, 'booking_overlap');
            expectError(await book(newBooking({ pickup_at: '2020-03-01T12:00:00Z', return_at: '2020-03-01T13:00:00Z' }), 'bob'), 409, 'booking_overlap');
        });

        it('cancels a booking that has not started, freeing its vehicle, and answers a cancelled one as it is', async () => {

            const booking = body<Booking>(await book(newBooking()));
            const res = await cancel(booking.id);
            expect(res.statusCode).to.equal(200);
            expect(body(res)).to.equal({ ...booking, status: 'cancelled' });
            expect(body(await read(booking.id))).to.equal({ ...booking, status: 'cancelled' });

            const again = await cancel(booking.id);
            expect(again.statusCode).to.equal(200);
            expect(body(again)).to.equal({ ...booking, status: 'cancelled' });

            const rebooked = await book(newBooking(), 'bob');
            expect(rebooked.statusCode).to.equal(201);
            expect(body<Booking>(rebooked).status).to.equal('confirmed');
        });

        it('answers 409 booking_started for an active booking and 409 booking_completed for a completed one, and keeps each', async () => {

            const active = body<Booking>(await book(newBooking(hours(-2, 2))));
            const started = expectError(await cancel(active.id), 409, 'booking_started');
            expect(started.message).to.equal(`Booking ${active.id} started at its pickup_at (${active.pickup_at}) and holds its vehicle until ${active.return_at}: only a booking that has not started can be cancelled`);
            expect(body(await read(active.id))).to.equal(active);

            const done = body<Booking>(await book(newBooking({ pickup_at: '2020-03-01T10:00:00Z', return_at: '2020-03-02T10:00:00Z' })));
            const completed = expectError(await cancel(done.id), 409, 'booking_completed');
            expect(completed.message).to.equal(`Booking ${done.id} ended at its return_at (2020-03-02T10:00:00.000Z): a completed booking cannot be cancelled`);
            expect(body(await read(done.id))).to.equal(done);
        });

        it('answers 400 naming booking_id for a malformed id on cancel', async () => {

            expectError(await cancel('x'.repeat(101)), 400, 'validation_failed', 'booking_id');
        });
    });


    describe(`logistics booking ownership (${engine})`, () => {

        const world = useWorld(lab, engineWorlds(engine), { closeWorlds: true });
        const auth = (subject: string) => bearer(world().server, subject);
        const book = (payload: Record<string, unknown>, subject: string) => world().inject({ method: 'POST', url: '/v1/logistics/bookings', headers: auth(subject), payload });
        let owned: Booking;

        beforeEach(async () => {

            owned = body<Booking>(await book(newBooking(), 'alice'));
        });

        it('lets the owner create, list and read a booking', async () => {

            const created = await book(newBooking({ pickup_at: at('10:00:00', 2), return_at: at('12:00:00', 2) }), 'alice');
            expect(created.statusCode).to.equal(201);
            expect(body(created).customer_id).to.equal('alice');

            const list = await world().inject({ url: '/v1/logistics/bookings', headers: auth('alice') });
            expect(body<Envelope<Booking>>(list).data.map((booking) => booking.id)).to.equal([owned.id, body<Booking>(created).id]);

            const one = await world().inject({ url: `/v1/logistics/bookings/${owned.id}`, headers: auth('alice') });
            expect(one.statusCode).to.equal(200);
            expect(body(one)).to.equal(owned);
        });

        it('keeps another caller to their own bookings on every bookings route', async () => {

            const created = await book(newBooking({ pickup_at: at('10:00:00', 3), return_at: at('12:00:00', 3) }), 'mallory');
            expect(created.statusCode).to.equal(201);
            expect(body(created).customer_id).to.equal('mallory');

            const impersonating = await book(newBooking({ pickup_at: at('10:00:00', 4), return_at: at('12:00:00', 4), customer_id: 'alice' }), 'mallory');
            expectError(impersonating, 400, 'validation_failed', 'customer_id');

            const list = await world().inject({ url: '/v1/logistics/bookings', headers: auth('mallory') });
            expect(body<Envelope<Booking>>(list).data.map((booking) => booking.id)).to.equal([body<Booking>(created).id]);

            const theirs = await world().inject({ url: `/v1/logistics/bookings/${owned.id}`, headers: auth('mallory') });
            const missing = await world().inject({ url: `/v1/logistics/bookings/${unknownId}`, headers: auth('mallory') });
            expectError(theirs, 404, 'booking_not_found');
            expect(theirs.payload).to.equal(missing.payload);
            expect(theirs.headers['content-type']).to.equal(missing.headers['content-type']);
            expect(theirs.headers['content-length']).to.equal(missing.headers['content-length']);

            const cancelTheirs = await world().inject({ method: 'POST', url: `/v1/logistics/bookings/${owned.id}/cancel`, headers: auth('mallory') });
            const cancelMissing = await world().inject({ method: 'POST', url: `/v1/logistics/bookings/${unknownId}/cancel`, headers: auth('mallory') });
            expectError(cancelTheirs, 404, 'booking_not_found');
            expect(cancelTheirs.payload).to.equal(cancelMissing.payload);

            const alices = await world().inject({ url: '/v1/logistics/bookings', headers: auth('alice') });
            expect(body(alices)).to.equal({ data: [owned], count: 1, total: 1 });
        });

        const routes: [string, 'GET' | 'POST', () => string, (() => Record<string, unknown>) | undefined][] = [
            ['POST /bookings', 'POST', () => '/v1/logistics/bookings', () => newBooking({ pickup_at: at('10:00:00', 9), return_at: at('12:00:00', 9) })],
            ['GET /bookings', 'GET', () => '/v1/logistics/bookings', undefined],
            ['GET /bookings/{booking_id}', 'GET', () => `/v1/logistics/bookings/${owned.id}`, undefined],
            ['POST /bookings/{booking_id}/cancel', 'POST', () => `/v1/logistics/bookings/${owned.id}/cancel`, undefined]
        ];

        routes.forEach(([title, method, url, payload]) => {

            it(`answers 401 with WWW-Authenticate on ${title} without a token`, async () => {

                const res = await world().inject({ method, url: url(), payload: payload?.() });
                expectError(res, 401, 'unauthorized');
                expect(res.headers['www-authenticate']).to.contain('Bearer');
            });

            it(`answers 401 on ${title} for every kind of bad token`, async () => {

                for (const [kind, token] of badTokens(world().server.app.localgate.secret)) {
                    const res = await world().inject({ method, url: url(), payload: payload?.(), headers: { authorization: `Bearer ${token}` } });
                    expect(res.statusCode, `${kind}: ${res.payload}`).to.equal(401);
                    expect(body(res).code).to.equal('unauthorized');
                }
            });
        });

        it('answers 401 on the optional vehicle and location routes for a bad token, never a silent downgrade', async () => {

            for (const url of ['/v1/logistics/vehicles', `/v1/logistics/vehicles/${demo.vehicles[0]!.id}`, '/v1/logistics/locations']) {
                for (const [kind, token] of badTokens(world().server.app.localgate.secret)) {
                    const res = await world().inject({ url, headers: { authorization: `Bearer ${token}` } });
                    expect(res.statusCode, `${url} ${kind}`).to.equal(401);
                }
            }
        });
    });
}


for (const engine of engines) {
    describe(`logistics error matrix (${engine})`, () => {

        // Every case is refused, so the cases share one world: in it, bob holds 10:00 to 12:00 on 1 January.
        const world = useWorld(lab, serverWorlds(engine), { shared: true });
        let bobsBooking: Booking;

        before(async () => {

            const taken = await world().inject({ method: 'POST', url: '/v1/logistics/bookings', headers: bearer(world().server, 'bob'), payload: newBooking({ pickup_at: at('10:00:00', 0), return_at: at('12:00:00', 0) }) });
            expect(taken.statusCode).to.equal(201);
            bobsBooking = body<Booking>(taken);
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

        const without = (field: string) => Object.fromEntries(Object.entries(newBooking()).filter(([key]) => key !== field));

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
            post('a body carrying customer_id', newBooking({ customer_id: 'alice' }), 400, 'validation_failed', 'customer_id'),
            post('a body carrying id', newBooking({ id: unknownId }), 400, 'validation_failed', 'id'),
            post('a body carrying status', newBooking({ status: 'confirmed' }), 400, 'validation_failed', 'status'),
            post('a body carrying created_at', newBooking({ created_at: '2030-01-01T00:00:00.000Z' }), 400, 'validation_failed', 'created_at'),
            post('an unknown body field', newBooking({ driver_id: 'x' }), 400, 'validation_failed', 'driver_id'),
            post('a missing vehicle_id', without('vehicle_id'), 400, 'validation_failed', 'vehicle_id'),
            post('a missing pickup_at', without('pickup_at'), 400, 'validation_failed', 'pickup_at'),
            post('a numeric vehicle_id', newBooking({ vehicle_id: 12 }), 400, 'validation_failed', 'vehicle_id'),
            post('an empty vehicle_id', newBooking({ vehicle_id: '' }), 400, 'validation_failed', 'vehicle_id'),
            post('a vehicle_id over 100 characters', newBooking({ vehicle_id: 'v'.repeat(101) }), 400, 'validation_failed', 'vehicle_id'),
            post('pickup_at with an offset instead of Z', newBooking({ pickup_at: '2030-01-02T10:00:00+02:00' }), 400, 'validation_failed', 'pickup_at'),
            post('pickup_at without a time', newBooking({ pickup_at: '2030-01-02' }), 400, 'validation_failed', 'pickup_at'),
            post('pickup_at as epoch milliseconds', newBooking({ pickup_at: 1893578400000 }), 400, 'validation_failed', 'pickup_at'),
            post('pickup_at with microseconds', newBooking({ pickup_at: '2030-01-02T10:00:00.000001Z' }), 400, 'validation_failed', 'pickup_at'),
            post('pickup_at on 30 February', newBooking({ pickup_at: '2030-02-30T10:00:00Z', return_at: '2030-03-05T10:00:00Z' }), 400, 'validation_failed', 'pickup_at'),
            post('pickup_at in month 13', newBooking({ pickup_at: '2030-13-01T10:00:00Z' }), 400, 'validation_failed', 'pickup_at'),
            post('pickup_at at 24:00', newBooking({ pickup_at: '2030-01-01T24:00:00Z', return_at: '2030-01-03T10:00:00Z' }), 400, 'validation_failed', 'pickup_at'),
            post('return_at equal to pickup_at', newBooking({ return_at: '2030-01-02T10:00:00.000Z' }), 400, 'validation_failed', 'return_at'),
            post('return_at before pickup_at', newBooking({ return_at: '2030-01-02T09:59:59Z' }), 400, 'validation_failed', 'return_at'),
            post('notes that are not a string', newBooking({ notes: 42 }), 400, 'validation_failed', 'notes'),
            post('notes over the maximum length', newBooking({ notes: 'n'.repeat(maxNotesLength + 1) }), 400, 'validation_failed', 'notes'),
            post('notes with a NUL character', newBooking({ notes: 'Child seat\u0000' }), 400, 'validation_failed', 'notes'),
            post('notes with an unpaired surrogate', newBooking({ notes: 'Child seat \ud83d' }), 400, 'validation_failed', 'notes'),
            post('a JSON array body', [newBooking()], 400, 'validation_failed'),
            { title: 'an empty body', method: 'POST', url: () => '/v1/logistics/bookings', status: 400, code: 'validation_failed' },
            { title: 'malformed JSON', method: 'POST', url: () => '/v1/logistics/bookings', payload: '{"vehicle_id": ', contentType: 'application/json', status: 400, code: 'bad_request' },
            { title: 'POST /bookings without a token', method: 'POST', url: () => '/v1/logistics/bookings', auth: 'none', payload: newBooking(), status: 401, code: 'unauthorized' },
            { title: 'GET /bookings without a token', url: () => '/v1/logistics/bookings', auth: 'none', status: 401, code: 'unauthorized' },
            { title: 'GET /bookings/{id} with an expired token', url: () => `/v1/logistics/bookings/${bobsBooking.id}`, auth: 'expired', status: 401, code: 'unauthorized' },
            { title: 'GET /vehicles with an expired token', url: () => '/v1/logistics/vehicles', auth: 'expired', status: 401, code: 'unauthorized' },
            { title: 'an unknown vehicle', url: () => `/v1/logistics/vehicles/${unknownId}`, status: 404, code: 'vehicle_not_found' },
            { title: 'an unknown booking', url: () => `/v1/logistics/bookings/${unknownId}`, auth: 'alice', status: 404, code: 'booking_not_found' },
            { title: 'another caller\'s booking', url: () => `/v1/logistics/bookings/${bobsBooking.id}`, auth: 'alice', status: 404, code: 'booking_not_found' },
            { title: 'an unknown logistics path', url: () => '/v1/logistics/drivers', status: 404, code: 'not_found' },
            post('an unavailable vehicle', newBooking({ vehicle_id: unavailableVehicle.id }), 409, 'vehicle_unavailable', 'vehicle_id'),
            post('a slot overlapping a confirmed booking', newBooking({ pickup_at: at('11:00:00', 0), return_at: at('13:00:00', 0) }), 409, 'booking_overlap'),
            post('a body over 64 KiB', newBooking({ notes: 'n'.repeat(70_000) }), 413, 'payload_too_large'),
            { title: 'a body that is not JSON', method: 'POST', url: () => '/v1/logistics/bookings', payload: 'vehicle_id=1', contentType: 'application/x-www-form-urlencoded', status: 415, code: 'unsupported_media_type' },
            { title: 'a text/plain body', method: 'POST', url: () => '/v1/logistics/bookings', payload: JSON.stringify(newBooking()), contentType: 'text/plain', status: 415, code: 'unsupported_media_type' },
            post('an unknown vehicle_id', newBooking({ vehicle_id: unknownId }), 422, 'vehicle_not_found', 'vehicle_id'),
            post('an unknown pickup_location_id', newBooking({ pickup_location_id: unknownId }), 422, 'location_not_found', 'pickup_location_id'),
            post('an unknown dropoff_location_id', newBooking({ dropoff_location_id: unknownId }), 422, 'location_not_found', 'dropoff_location_id')
        ];

        cases.forEach((entry) => {

            it(`answers ${entry.status} ${entry.code} for ${entry.title}`, async () => {

                const auth = entry.auth ?? (entry.method === 'POST' ? 'alice' : 'none');
                const headers: Record<string, string> = {
                    ...(auth === 'alice' ? bearer(world().server, 'alice') : {}),
                    ...(auth === 'expired' ? bearer(world().server, 'alice', -3600) : {}),
                    ...(entry.contentType ? { 'content-type': entry.contentType } : {})
                };
                const res = await world().inject({ method: entry.method ?? 'GET', url: entry.url(), headers, payload: entry.payload as object });
                expectError(res, entry.status, entry.code, entry.field);
            });
        });

        it('keeps nothing of a refused request', async () => {

            const mine = (subject: string) => world().inject({ url: '/v1/logistics/bookings', headers: bearer(world().server, subject) });
            expect(body(await mine('alice'))).to.equal({ data: [], count: 0, total: 0 });
            expect(body(await mine('bob'))).to.equal({ data: [bobsBooking], count: 1, total: 1 });
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

    it('keeps bookings and loads the demo data only once across restarts on disk', async () => {

        const dataDir = tempDir();
        const options = { dataDir, logLevel: 'silent' as const, jwtSecret: Crypto.randomBytes(32).toString('hex') };
        try {
            const first = await createServer(options);
            const created = await first.inject({ method: 'POST', url: '/v1/logistics/bookings', headers: bearer(first, 'alice'), payload: newBooking() });
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


// The drivers, which no route serves, are checked by each engine's own tests.
for (const engine of engines) {
    describe(`logistics demo data (${engine})`, () => {

        it('loads vehicles and locations on first start', async () => {

            const server = await engineServer(engine);
            const vehicles = await server.inject('/v1/logistics/vehicles?limit=100');
            const locations = await server.inject('/v1/logistics/locations?limit=100');
            await server.stop();

            expect(body(vehicles)).to.equal({ data: [...demo.vehicles].sort(byListOrder), count: demo.vehicles.length, total: demo.vehicles.length });
            expect(body(locations)).to.equal({ data: [...demo.locations].sort(byListOrder), count: demo.locations.length, total: demo.locations.length });
        });

        it('starts empty with seed: false', async () => {

            const server = await engineServer(engine, { seed: false });
            const vehicles = await server.inject('/v1/logistics/vehicles');
            const locations = await server.inject('/v1/logistics/locations');
            const booking = await server.inject({ method: 'POST', url: '/v1/logistics/bookings', headers: bearer(server, 'alice'), payload: newBooking() });
            await server.stop();

            expect(body(vehicles)).to.equal({ data: [], count: 0, total: 0 });
            expect(vehicles.headers['x-total-count']).to.equal('0');
            expect(body(locations)).to.equal({ data: [], count: 0, total: 0 });
            expectError(booking, 422, 'vehicle_not_found', 'vehicle_id');
        });
    });
}
