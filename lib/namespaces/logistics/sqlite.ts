import type { Transaction } from 'better-sqlite3';

import type { RecordContext } from '../../record-context';
import { claimEach, type AppliedTransition } from '../../transitions';
import type { ListResult, Page } from '../../lists';
import { bookingCancelledEvent, bookingCreatedEvent, bookingDue, bookingMovedEvent, type BookingTransitionType } from './events';
import { bookingRecord, bookingStatusAt, checkBooking, checkCancellable, type BookingRow } from './rules';
import type { Booking, BookingStatus, Location, LogisticsStore, NewBooking, Vehicle, VehicleFilter } from './store';
import { readMetadata, storedMetadata } from '../../metadata';
import { createdAt, found, referenced } from '../../records';
import { bookingStatusColumn, nextBookingDue, nextBookingTransition } from '../../storage/lifecycle-sql';
import { eventWriter } from '../../storage/sqlite/events';
import type { Database } from '../../storage/sqlite/open';
import { lazyStatements, settled, sql, type Statements } from '../../storage/sqlite/statements';


type VehicleRow = Omit<Vehicle, 'is_available'> & { is_available: number };

// The rows of a page as arrays in the order of their columns (vehicleColumns, bookingAtNow): better-sqlite3 builds
// arrays faster than objects (a page of 20 bookings read in half the time), and a page holds up to 100 rows that are
// made into records anyway.
type VehicleTuple = [id: string, make: string, model: string, year: number, seats: number, dailyRate: number, currency: string, isAvailable: number, createdAt: string];
type BookingTuple = [id: string, vehicleId: string, pickupLocationId: string, dropoffLocationId: string, pickupAt: string, returnAt: string, notes: string, customerId: string, status: BookingStatus, createdAt: string, metadata: string];

type ById = [{ id: string }];

type OfCustomer = [{ customer_id: string }];

type AtNow = { now: string };

type Total = { total: number };

type BookingKey = { id: string; customer_id: string };

type PageOf<Filter = object> = [Page & Filter];


const vehicleColumns = 'id, make, model, year, seats, daily_rate, currency, is_available, created_at';
const locationColumns = 'id, name, address, city, latitude, longitude, created_at';
const bookingColumns = 'id, vehicle_id, pickup_location_id, dropoff_location_id, pickup_at, return_at, notes, customer_id, status, created_at, metadata';
// A booking as it reads at @now: its status is the one the clock implies (lifecycle-sql.ts).
const bookingAtNow = `id, vehicle_id, pickup_location_id, dropoff_location_id, pickup_at, return_at, notes, customer_id, ${bookingStatusColumn('@now')}, created_at, metadata`;

// Every statement the store runs; exported so that a test can check their query plans.
// LIMIT and OFFSET take their parameters behind a unary plus: SQLite plans a bare LIMIT parameter with its bound value,
// and so prepares the statement again each time a new value is bound, that is on every call.
export const queries = {
    listVehicles: sql<PageOf, VehicleTuple>(`SELECT ${vehicleColumns} FROM vehicles ORDER BY created_at, id LIMIT +@limit OFFSET +@offset`),
    countVehicles: sql<[], Total>('SELECT count(*) AS total FROM vehicles'),
    listVehiclesByAvailability: sql<PageOf<{ available: number }>, VehicleTuple>(`SELECT ${vehicleColumns} FROM vehicles WHERE is_available = @available ORDER BY created_at, id LIMIT +@limit OFFSET +@offset`),
    countVehiclesByAvailability: sql<[{ available: number }], Total>('SELECT count(*) AS total FROM vehicles WHERE is_available = @available'),
    vehicleById: sql<ById, VehicleRow>(`SELECT ${vehicleColumns} FROM vehicles WHERE id = @id`),
    listLocations: sql<PageOf, Location>(`SELECT ${locationColumns} FROM locations ORDER BY created_at, id LIMIT +@limit OFFSET +@offset`),
    countLocations: sql<[], Total>('SELECT count(*) AS total FROM locations'),
    locationExists: sql<ById, 1>('SELECT 1 FROM locations WHERE id = @id'),
    listBookings: sql<PageOf<{ customer_id: string } & AtNow>, BookingTuple>(`SELECT ${bookingAtNow} FROM bookings WHERE customer_id = @customer_id ORDER BY created_at, id LIMIT +@limit OFFSET +@offset`),
    // Kept by triggers (migrations/logistics/002): no row until the customer's first booking.
    countBookings: sql<OfCustomer, number>('SELECT bookings FROM customer_booking_counts WHERE customer_id = @customer_id'),
    latestBookingOfCustomer: sql<OfCustomer, string>('SELECT created_at FROM bookings WHERE customer_id = @customer_id ORDER BY created_at DESC, id DESC LIMIT 1'),
    bookingById: sql<[BookingKey & AtNow], BookingRow>(`SELECT ${bookingAtNow} FROM bookings WHERE id = @id AND customer_id = @customer_id`),
    // A booking as it reads at an instant, whoever's it is: the one a transition moved, at its due instant.
    bookingAt: sql<[{ id: string } & AtNow], BookingRow>(`SELECT ${bookingAtNow} FROM bookings WHERE id = @id`),
    storedBooking: sql<[BookingKey], BookingRow>(`SELECT ${bookingColumns} FROM bookings WHERE id = @id AND customer_id = @customer_id`),
    // The one booking the overlap rule (checkBooking) needs, found in one step of the index.
    latestBookingBefore: sql<[NewBooking], string>(`SELECT return_at FROM bookings
        WHERE vehicle_id = @vehicle_id AND status <> 'cancelled' AND pickup_at < @return_at
        ORDER BY pickup_at DESC LIMIT 1`),
    cancelBooking: sql<[{ id: string }]>(`UPDATE bookings SET status = 'cancelled' WHERE id = @id`),

    // The timeline's scans, each one step of a partial index (migrations/sqlite/logistics/003).
    nextDue: sql<[], string | null>(nextBookingDue),
    nextTransition: sql<[{ until: string }], AppliedTransition & { type: BookingTransitionType }>(nextBookingTransition('@until')),
    // Each transition is claimed by a conditional update: the row moves only from the status the transition leaves.
    start: sql<[string]>(`UPDATE bookings SET status = 'active' WHERE id = ? AND status = 'confirmed'`),
    complete: sql<[string]>(`UPDATE bookings SET status = 'completed' WHERE id = ? AND status = 'active'`),
    insertBooking: sql<[BookingRow]>(`INSERT INTO bookings (${bookingColumns})
        VALUES (@id, @vehicle_id, @pickup_location_id, @dropoff_location_id, @pickup_at, @return_at, @notes, @customer_id, @status, @created_at, @metadata)`)
};


/** The logistics database: vehicles, locations and drivers from seed data, bookings made by callers. */
export class SqliteLogisticsStore implements LogisticsStore {

    private readonly statements: Statements<typeof queries>;
    private readonly readVehicles: Transaction<(filter: VehicleFilter) => ListResult<Vehicle>>;
    private readonly readLocations: Transaction<(page: Page) => ListResult<Location>>;
    private readonly readBookings: Transaction<(customerId: string, page: Page) => ListResult<Booking>>;
    private readonly book: (customerId: string, booking: NewBooking) => Booking;
    private readonly cancel: (customerId: string, id: string) => Booking;
    private readonly claimNext: (until: string) => AppliedTransition | null;

    constructor(db: Database, private readonly context: RecordContext) {

        const statements = lazyStatements(db, queries);
        this.statements = statements;
        const events = eventWriter(db);

        // Each page and its total come from one read transaction, so they agree.
        this.readVehicles = db.transaction((filter: VehicleFilter) => {

            if (filter.available === undefined) {
                return { data: statements.listVehicles.raw().all(page(filter)).map(vehicleOfTuple), total: found(statements.countVehicles.get(), 'vehicle').total };
            }

            const available = filter.available ? 1 : 0;
            return {
                data: statements.listVehiclesByAvailability.raw().all({ ...page(filter), available }).map(vehicleOfTuple),
                total: found(statements.countVehiclesByAvailability.get({ available }), 'vehicle').total
            };
        });

        this.readLocations = db.transaction((paging: Page) => ({
            data: statements.listLocations.all(page(paging)),
            total: found(statements.countLocations.get(), 'location').total
        }));

        this.readBookings = db.transaction((customerId: string, paging: Page) => ({
            data: statements.listBookings.raw().all({ ...page(paging), customer_id: customerId, now: context.clock.now().toISOString() }).map(bookingOfTuple),
            total: statements.countBookings.pluck().get({ customer_id: customerId }) ?? 0
        }));

        this.book = events.writing(context, (customerId: string, booking: NewBooking) => {

            const vehicle = referenced(statements.vehicleById.get({ id: booking.vehicle_id }), 'vehicle', 'vehicle_id');
            for (const field of ['pickup_location_id', 'dropoff_location_id'] as const) {
                referenced(statements.locationExists.get({ id: booking[field] }), 'location', field);
            }

            checkBooking(vehicleRecord(vehicle), booking, statements.latestBookingBefore.pluck().get(booking));
            const id = context.ids.next();
            statements.insertBooking.run({
                id,
                ...booking,
                customer_id: customerId,
                status: bookingStatusAt(booking, context.clock.now().toISOString()),
                created_at: createdAt(context.clock, statements.latestBookingOfCustomer.pluck().get({ customer_id: customerId })),
                metadata: storedMetadata(booking.metadata)
            });

            const made = bookingRecord(found(statements.storedBooking.get({ id, customer_id: customerId }), 'booking'));
            events.write(context, bookingCreatedEvent(made));
            events.due(bookingDue(made));
            return made;
        });

        this.cancel = events.writing(context, (customerId: string, id: string) => {

            const key = { id, customer_id: customerId };
            const booking = bookingRecord(found(statements.bookingById.get({ ...key, now: context.clock.now().toISOString() }), 'booking'));
            checkCancellable(booking, booking.status);
            statements.cancelBooking.run({ id });
            const cancelled: Booking = { ...booking, status: 'cancelled' };
            events.write(context, bookingCancelledEvent(cancelled, context.clock.now().toISOString()));
            return cancelled;
        });

        // Found and claimed under the write lock, so that no other process claims it in between.
        this.claimNext = events.writing(context, (until: string) => {

            const next = statements.nextTransition.get({ until });
            if (next) {
                (next.type === 'logistics.booking.started' ? statements.start : statements.complete).run(next.id);
                events.write(context, bookingMovedEvent(next, bookingRecord(found(statements.bookingAt.get({ id: next.id, now: next.due }), 'booking'))));
            }

            return next ?? null;
        });
    }

    listVehicles(filter: VehicleFilter): Promise<ListResult<Vehicle>> {

        return settled(() => this.readVehicles.deferred(filter));
    }

    getVehicle(id: string): Promise<Vehicle> {

        return settled(() => {

            return vehicleRecord(found(this.statements.vehicleById.get({ id }), 'vehicle'));
        });
    }

    listLocations(paging: Page): Promise<ListResult<Location>> {

        return settled(() => this.readLocations.deferred(paging));
    }

    listBookings(customerId: string, paging: Page): Promise<ListResult<Booking>> {

        return settled(() => this.readBookings.deferred(customerId, paging));
    }

    getBooking(customerId: string, id: string): Promise<Booking> {

        return settled(() => {

            return bookingRecord(found(this.statements.bookingById.get({ id, customer_id: customerId, now: this.context.clock.now().toISOString() }), 'booking'));
        });
    }

    createBooking(customerId: string, booking: NewBooking): Promise<Booking> {

        return settled(() => this.book(customerId, booking));
    }

    cancelBooking(customerId: string, id: string): Promise<Booking> {

        return settled(() => this.cancel(customerId, id));
    }

    nextDue(): Promise<Date | null> {

        return settled(() => {

            const due = this.statements.nextDue.pluck().get();
            return due ? new Date(due) : null;
        });
    }

    applyDue(until: Date, limit: number): Promise<AppliedTransition[]> {

        // One at a time, earliest first: a booking started here may fall due to complete before the next one starts.
        const at = until.toISOString();
        return claimEach(limit, () => settled(() => this.claimNext(at)));
    }
}


function page(paging: Page): Page {

    return { limit: paging.limit, offset: paging.offset };
}


function vehicleRecord(row: VehicleRow): Vehicle {

    return { ...row, is_available: row.is_available === 1 };
}


// The record of a page's row, its fields in the order of the columns, as vehicleRecord makes it of an object row.
function vehicleOfTuple([id, make, model, year, seats, dailyRate, currency, isAvailable, created]: VehicleTuple): Vehicle {

    return { id, make, model, year, seats, daily_rate: dailyRate, currency, is_available: isAvailable === 1, created_at: created };
}


// The record of a page's row, its fields in the order of the columns, as bookingRecord makes it of an object row.
function bookingOfTuple([id, vehicleId, pickupLocationId, dropoffLocationId, pickupAt, returnAt, notes, customerId, status, created, metadata]: BookingTuple): Booking {

    return {
        id,
        vehicle_id: vehicleId,
        pickup_location_id: pickupLocationId,
        dropoff_location_id: dropoffLocationId,
        pickup_at: pickupAt,
        return_at: returnAt,
        notes,
        customer_id: customerId,
        status,
        created_at: created,
        metadata: readMetadata(metadata)
    };
}
