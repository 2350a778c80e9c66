import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import type { Server } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { sqliteDatabase } from '../lib/storage/sqlite/engine';
import { queries, SqliteLogisticsStore } from '../lib/namespaces/logistics/sqlite';
import { migrate, namespaceMigrations } from '../lib/storage/sqlite/migrate';
import { openSqliteNamespace } from '../lib/storage/sqlite/namespace';
import { openDatabase } from '../lib/storage/sqlite/open';
import { expectError } from './helpers/errors';
import { bookingLifecycle, frozenContext } from './helpers/lifecycle';
import { bearer, body, testServer } from './helpers/server';
import { insertRows } from './helpers/sqlite';
import { logisticsNamespace } from '../lib/namespaces/logistics';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


// The SQLite engine's own side of logistics: what no route shows (drivers, rows below the API, plans, counters).

const demo = JSON.parse(Fs.readFileSync(Path.join(__dirname, '..', 'data', 'demo', 'logistics.json'), 'utf8')) as Record<string, Record<string, unknown>[]>;


describe('logistics on SQLite', () => {

    it('loads the demo drivers, with the vehicles they drive, on first start', async () => {

        const namespace = openSqliteNamespace(logisticsNamespace, undefined, { storage: 'memory', dataDir: ':memory:', seed: true });
        const drivers = namespace.db.prepare('SELECT id, vehicle_id, is_active FROM drivers ORDER BY created_at, id').all();
        await namespace.close();
        expect(drivers).to.equal(demo.drivers!.map((driver) => ({ id: driver.id, vehicle_id: driver.vehicle_id, is_active: Number(driver.is_active) })));
    });

    it('ignores cancelled bookings when checking for overlap', async () => {

        const server = await testServer();
        const vehicle = demo.vehicles!.find((row) => row.is_available)!;
        const [quay, station] = demo.locations!;
        // The cancelled one comes in a fixture, made by another customer.
        expect(await server.app.localgate.data.loadFixture({ logistics: { bookings: [{
            vehicle_id: vehicle.id, pickup_location_id: quay!.id, dropoff_location_id: quay!.id,
            pickup_at: '2030-01-07T10:00:00.000Z', return_at: '2030-01-07T12:00:00.000Z', customer_id: 'dave', status: 'cancelled'
        }] } }, 'test')).to.equal({ logistics: 1 });

        const res = await server.inject({
            method: 'POST', url: '/v1/logistics/bookings', headers: bearer(server, 'alice'),
            payload: { vehicle_id: vehicle.id, pickup_location_id: quay!.id, dropoff_location_id: station!.id, pickup_at: '2030-01-07T10:00:00Z', return_at: '2030-01-07T12:00:00Z' }
        });
        await server.stop();
        expect(res.statusCode).to.equal(201);
        expect(body(res)).to.include({ status: 'confirmed', customer_id: 'alice' });
    });
});


describe('logistics bookings over time on SQLite', () => {

    const id = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;

    it('reads each booking\'s status at the store\'s clock, and applies due transitions earliest first, each once', async () => {

        const namespace = openSqliteNamespace(logisticsNamespace, undefined, { storage: 'memory', dataDir: ':memory:', seed: true });
        const context = frozenContext('2031-03-01T09:00:00.000Z');
        const store = new SqliteLogisticsStore(namespace.db, context);
        // The timeline reaches the store through the namespace's descriptor.
        expect(logisticsNamespace.timed?.(store)).to.shallow.equal(store);
        const transcript = await bookingLifecycle(store, context.clock);
        const stored = namespace.db.prepare('SELECT id, status FROM bookings ORDER BY id').all();
        await namespace.close();

        const vehicle = demo.vehicles!.find((row) => row.is_available !== false)!.id;
        const location = demo.locations![0]!.id;
        const transition = (n: number, type: string, due: string) => ({ id: id(n), due, type: `logistics.booking.${type}` });
        expect(transcript).to.equal([
            [id(1), id(2), id(3)],
            {
                id: id(3), vehicle_id: vehicle, pickup_location_id: location, dropoff_location_id: location,
                pickup_at: '2031-03-05T10:00:00.000Z', return_at: '2031-03-06T10:00:00.000Z', notes: '', customer_id: 'booker', status: 'cancelled',
                created_at: '2031-03-01T09:00:00.000Z', metadata: {}
            },
            new Date('2031-03-02T10:00:00.000Z'), ['confirmed', 'confirmed', 'cancelled'],
            ['active', 'confirmed', 'cancelled'], 'active',
            ['completed', 'active', 'cancelled'], new Date('2031-03-02T10:00:00.000Z'),
            [transition(1, 'started', '2031-03-02T10:00:00.000Z'), transition(1, 'completed', '2031-03-02T12:00:00.000Z')],
            [transition(2, 'started', '2031-03-02T12:00:00.000Z')],
            [], new Date('2031-03-04T00:00:00.000Z'),
            ['completed', 'active', 'cancelled'],
            [],
            [transition(2, 'completed', '2031-03-04T00:00:00.000Z')], null, ['completed', 'completed', 'cancelled']
        ]);
        expect(stored).to.equal([{ id: id(1), status: 'completed' }, { id: id(2), status: 'completed' }, { id: id(3), status: 'cancelled' }]);
    });
});


describe('logistics query plans on SQLite', () => {

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
        notes: '', status: 'confirmed', created_at: '2030-01-01T00:00:00.000Z', now: '2030-02-01T00:00:00.000Z', until: '2030-02-01T00:00:00.000Z'
    };

    // The claims take the booking's id alone, as their one positional parameter.
    const positional = new Set(['start', 'complete']);

    const plan = (sql: string, name?: string) => {

        const statement = sqliteDatabase(server.app.localgate.data, 'logistics').prepare(`EXPLAIN QUERY PLAN ${sql}`);
        const rows = (positional.has(name ?? '') ? statement.all('booking-1') : statement.all(params)) as { detail: string }[];
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
        ['bookingAt', /^SEARCH bookings USING INDEX sqlite_autoindex_bookings_1 \(id=\?\)$/],
        ['bookingById', /^SEARCH bookings USING INDEX sqlite_autoindex_bookings_1 \(id=\?\)$/],
        ['storedBooking', /^SEARCH bookings USING INDEX sqlite_autoindex_bookings_1 \(id=\?\)$/],
        ['latestBookingBefore', /^SEARCH bookings USING COVERING INDEX bookings_holding_vehicle \(vehicle_id=\? AND pickup_at<\?\)$/],
        ['cancelBooking', /^SEARCH bookings USING INDEX sqlite_autoindex_bookings_1 \(id=\?\)$/],
        ['start', /^SEARCH bookings USING INDEX sqlite_autoindex_bookings_1 \(id=\?\)$/],
        ['complete', /^SEARCH bookings USING INDEX sqlite_autoindex_bookings_1 \(id=\?\)$/]
    ];

    // The timeline's scans read one row of each partial index; the next transition sorts the two rows found.
    const scans: [keyof typeof queries, string[]][] = [
        ['nextDue', ['SEARCH bookings USING COVERING INDEX bookings_due_to_start', 'SEARCH bookings USING COVERING INDEX bookings_due_to_complete']],
        ['nextTransition', ['SCAN bookings USING COVERING INDEX bookings_due_to_start', 'SCAN bookings USING COVERING INDEX bookings_due_to_complete']]
    ];

    it('has an expectation for every read the store makes', () => {

        const reads = Object.keys(queries).filter((name) => !name.startsWith('insert'));
        expect([...expected, ...scans].map(([name]) => name as string).sort()).to.equal(reads.sort());
    });

    for (const [name, steps] of scans) {
        it(`scans for ${name} one step of each partial index`, () => {

            const details = plan(queries[name]);
            expect(details.filter((detail) => / bookings /.test(detail))).to.equal(steps);
        });
    }

    for (const [name, pattern] of expected) {
        it(`serves ${name} from an index, without a full scan or a temporary b-tree`, () => {

            const details = plan(queries[name], name);
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
        expect(plan(queries.latestBookingBefore)[0]).to.contain('(vehicle_id=? AND pickup_at<?)');
    });
});


describe('logistics booking counts on SQLite', () => {

    it('counts the bookings made before the counter existed, then keeps each customer\'s count through every write', () => {

        const db = openDatabase(':memory:');
        const migrations = namespaceMigrations(logisticsNamespace);
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

    it('keeps every booking and count through the rebuild of 003, which takes the four statuses and refuses others', () => {

        const db = openDatabase(':memory:');
        const migrations = namespaceMigrations(logisticsNamespace);
        migrate(db, migrations.slice(0, 2));
        insertRows(db, 'vehicles', [{ id: 'van', make: 'Make', model: 'Model', year: 2020, seats: 3, daily_rate: 60, currency: 'GBP', is_available: true, created_at: '2025-01-01T00:00:00.000Z' }]);
        insertRows(db, 'locations', [{ id: 'depot', name: 'Depot', address: '1 Road', city: 'Harbourside', latitude: 50, longitude: -3, created_at: '2025-01-01T00:00:00.000Z' }]);
        insertRows(db, 'bookings', ['confirmed', 'cancelled'].map((status, index) => ({
            id: `booking-${index}`, vehicle_id: 'van', pickup_location_id: 'depot', dropoff_location_id: 'depot',
            pickup_at: `2030-01-0${index + 1}T00:00:00.000Z`, return_at: `2030-01-0${index + 1}T12:00:00.000Z`,
            notes: 'kept', customer_id: 'ann', status, created_at: `2025-01-01T00:00:0${index}.000Z`
        })));
        const rows = db.prepare('SELECT * FROM bookings ORDER BY id').all();

        expect(migrate(db, migrations.slice(0, 3))).to.equal([3]);
        expect(db.prepare('SELECT * FROM bookings ORDER BY id').all()).to.equal(rows);
        expect(db.prepare('SELECT bookings FROM customer_booking_counts WHERE customer_id = ?').pluck().get('ann')).to.equal(2);
        expect(db.prepare(`SELECT name FROM sqlite_master WHERE tbl_name = 'bookings' AND type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY name`).pluck().all()).to.equal([
            'bookings_by_customer', 'bookings_counted', 'bookings_due_to_complete', 'bookings_due_to_start', 'bookings_holding_vehicle', 'bookings_moved', 'bookings_uncounted'
        ]);
        expect(db.pragma('foreign_key_check')).to.equal([]);

        // The stored status moves without touching the count; a status the API does not give is refused.
        db.prepare(`UPDATE bookings SET status = 'active' WHERE id = 'booking-0'`).run();
        db.prepare(`UPDATE bookings SET status = 'completed' WHERE id = 'booking-0'`).run();
        expect(db.prepare('SELECT bookings FROM customer_booking_counts WHERE customer_id = ?').pluck().get('ann')).to.equal(2);
        expect(() => db.prepare(`UPDATE bookings SET status = 'pending' WHERE id = 'booking-0'`).run()).to.throw(/CHECK constraint failed/);
        db.prepare('DELETE FROM bookings WHERE id = ?').run('booking-1');
        expect(db.prepare('SELECT bookings FROM customer_booking_counts WHERE customer_id = ?').pluck().get('ann')).to.equal(1);
        db.close();
    });
});
