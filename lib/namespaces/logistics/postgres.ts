import type { RecordContext } from '../../record-context';
import { claimEach, type AppliedTransition } from '../../transitions';
import type { ListResult, Page } from '../../lists';
import { bookingCancelledEvent, bookingCreatedEvent, bookingDue, bookingMovedEvent, type BookingTransitionType } from './events';
import { bookingRecord, bookingStatusAt, checkBooking, checkCancellable, overlapRefusal, type BookingRow } from './rules';
import type { Booking, Location, LogisticsStore, NewBooking, Vehicle, VehicleFilter } from './store';
import { storedMetadata } from '../../metadata';
import { createdAt, found, referenced } from '../../records';
import { bookingStatusColumn, nextBookingDue, nextBookingTransition } from '../../storage/lifecycle-sql';
import { insertRow, sql, type PgDatabase } from '../../storage/postgres/database';
import { eventWriter, type PgEventWriter } from '../../storage/postgres/events';
import { sqlState } from '../../storage/postgres/errors';
import { pageOf, paged, serverNow, type PageParams, type Paged } from '../../storage/postgres/pages';


type BookingTransition = AppliedTransition & { type: BookingTransitionType };

// What a booking needs decided once its vehicle is locked: whether its locations exist, the return of the latest
// booking that holds the vehicle that starts before the requested return, the customer's newest booking, and now.
interface BookingFacts {
    pickup: boolean;
    dropoff: boolean;
    latest_return: string | null;
    latest_created: string | null;
    now: string;
}


const vehicleColumns = 'id, make, model, year, seats, daily_rate, currency, is_available, created_at';
const locationColumns = 'id, name, address, city, latitude, longitude, created_at';
const bookingColumns = 'id, vehicle_id, pickup_location_id, dropoff_location_id, pickup_at, return_at, notes, customer_id, status, created_at, metadata';

// A booking as it reads at now (the parameter named): its status is the one the clock implies (lifecycle-sql.ts).
function bookingAt(now: string): string {

    return `id, vehicle_id, pickup_location_id, dropoff_location_id, pickup_at, return_at, notes, customer_id, ${bookingStatusColumn(now)}, created_at, metadata`;
}


// Every statement the store runs, prepared once per connection under its name.
export const queries = {
    listVehicles: sql<PageParams, Paged<Vehicle>>('logistics.listVehicles', paged(vehicleColumns, 'vehicles', 'SELECT count(*) FROM vehicles')),
    listVehiclesByAvailability: sql<[...PageParams, boolean], Paged<Vehicle>>('logistics.listVehiclesByAvailability',
        paged(vehicleColumns, 'vehicles WHERE is_available = $3', 'SELECT count(*) FROM vehicles WHERE is_available = $3')),
    vehicleById: sql<[string], Vehicle>('logistics.vehicleById', `SELECT ${vehicleColumns} FROM vehicles WHERE id = $1`),
    listLocations: sql<PageParams, Paged<Location>>('logistics.listLocations', paged(locationColumns, 'locations', 'SELECT count(*) FROM locations')),
    // The total is kept by a trigger (migrations/postgres/logistics/002): no row until the customer's first booking.
    listBookings: sql<[...PageParams, string, string], Paged<BookingRow>>('logistics.listBookings',
        paged(bookingAt('$4'), 'bookings WHERE customer_id = $3', 'SELECT coalesce((SELECT bookings FROM customer_booking_counts WHERE customer_id = $3), 0)')),
    bookingById: sql<[string, string, string], BookingRow>('logistics.bookingById', `SELECT ${bookingAt('$3')} FROM bookings WHERE id = $1 AND customer_id = $2`),
    // A booking as its owner reads it at an instant: what a transition's event announces.
    bookingAtInstant: sql<[string, string], BookingRow>('logistics.bookingAtInstant', `SELECT ${bookingAt('$2')} FROM bookings WHERE id = $1`),
    // Locked until the cancellation commits: the timeline's claim of the same row waits, then finds it moved.
    lockBooking: sql<[string, string, string], BookingRow>('logistics.lockBooking', `SELECT ${bookingAt('$3')} FROM bookings WHERE id = $1 AND customer_id = $2 FOR UPDATE`),
    cancelBooking: sql<[string]>('logistics.cancelBooking', `UPDATE bookings SET status = 'cancelled' WHERE id = $1`),

    // The timeline's scans, each one step of a partial index (migrations/postgres/logistics/003).
    nextDue: sql<[], { due: string | null }>('logistics.nextDue', nextBookingDue),
    // Locked until the claim commits; a row another process is claiming is skipped, one it claimed no longer matches.
    nextTransition: sql<[string], BookingTransition>('logistics.nextTransition', nextBookingTransition('$1', 'FOR UPDATE SKIP LOCKED')),
    // Each transition is claimed by a conditional update: the row moves only from the status the transition leaves.
    start: sql<[string]>('logistics.start', `UPDATE bookings SET status = 'active' WHERE id = $1 AND status = 'confirmed'`),
    complete: sql<[string]>('logistics.complete', `UPDATE bookings SET status = 'completed' WHERE id = $1 AND status = 'active'`),
    // The vehicle's row stays locked until the booking commits: bookings of one vehicle are decided one at a time.
    lockVehicle: sql<[string], Vehicle>('logistics.lockVehicle', `SELECT ${vehicleColumns} FROM vehicles WHERE id = $1 FOR UPDATE`),
    bookingFacts: sql<[string, string, string, string, string], BookingFacts>('logistics.bookingFacts', `SELECT
        EXISTS (SELECT 1 FROM locations WHERE id = $1) AS pickup,
        EXISTS (SELECT 1 FROM locations WHERE id = $2) AS dropoff,
        (SELECT return_at FROM bookings WHERE vehicle_id = $3 AND status <> 'cancelled' AND pickup_at < $4 ORDER BY pickup_at DESC LIMIT 1) AS latest_return,
        (SELECT created_at FROM bookings WHERE customer_id = $5 ORDER BY created_at DESC, id DESC LIMIT 1) AS latest_created,
        ${serverNow} AS now`),
    insertBooking: insertRow<BookingRow, BookingRow>('logistics.insertBooking', 'bookings',
        ['id', 'vehicle_id', 'pickup_location_id', 'dropoff_location_id', 'pickup_at', 'return_at', 'notes', 'customer_id', 'status', 'created_at', 'metadata'], `RETURNING ${bookingColumns}`)
};


/** The logistics schema on PostgreSQL: vehicles, locations and drivers from seed data, bookings made by callers. */
export class PgLogisticsStore implements LogisticsStore {

    private readonly events: PgEventWriter;

    constructor(private readonly db: PgDatabase, private readonly context: RecordContext) {

        this.events = eventWriter(db);
    }

    async listVehicles(filter: VehicleFilter): Promise<ListResult<Vehicle>> {

        const rows = filter.available === undefined ?
            await this.db.rows(queries.listVehicles, filter.limit, filter.offset) :
            await this.db.rows(queries.listVehiclesByAvailability, filter.limit, filter.offset, filter.available);

        return pageOf(rows);
    }

    async getVehicle(id: string): Promise<Vehicle> {

        return found(await this.db.row(queries.vehicleById, id), 'vehicle');
    }

    async listLocations(paging: Page): Promise<ListResult<Location>> {

        return pageOf(await this.db.rows(queries.listLocations, paging.limit, paging.offset));
    }

    async listBookings(customerId: string, paging: Page): Promise<ListResult<Booking>> {

        return pageOf(await this.db.rows(queries.listBookings, paging.limit, paging.offset, customerId, this.now()), bookingRecord);
    }

    async getBooking(customerId: string, id: string): Promise<Booking> {

        return bookingRecord(found(await this.db.row(queries.bookingById, id, customerId, this.now()), 'booking'));
    }

    /**
     * Books a vehicle for the customer in one transaction under a lock on the vehicle's row: references, availability
     * and overlap are decided by the same rule as on SQLite, and the exclusion constraint backs it up.
     */
    createBooking(customerId: string, booking: NewBooking): Promise<Booking> {

        return this.events.writing(this.context, async (tx) => {

            const vehicle = referenced(await tx.row(queries.lockVehicle, booking.vehicle_id), 'vehicle', 'vehicle_id');
            const facts = found(await tx.row(queries.bookingFacts, booking.pickup_location_id, booking.dropoff_location_id, vehicle.id, booking.return_at, customerId), 'vehicle');
            referenced(facts.pickup || undefined, 'location', 'pickup_location_id');
            referenced(facts.dropoff || undefined, 'location', 'dropoff_location_id');
            checkBooking(vehicle, booking, facts.latest_return ?? undefined);

            const row: BookingRow = {
                id: this.context.ids.next(),
                vehicle_id: vehicle.id,
                pickup_location_id: booking.pickup_location_id,
                dropoff_location_id: booking.dropoff_location_id,
                pickup_at: booking.pickup_at,
                return_at: booking.return_at,
                notes: booking.notes,
                customer_id: customerId,
                status: bookingStatusAt(booking, this.now()),
                created_at: createdAt(this.context.clock, facts.latest_created, facts.now),
                metadata: storedMetadata(booking.metadata)
            };

            let made: Booking;
            try {
                made = bookingRecord(found(await tx.row(queries.insertBooking, row), 'booking'));
            }
            catch (err) {
                // Only a writer that bypassed the lock gets here: the constraint refuses what the rule would have.
                if (sqlState(err) === '23P01') {
                    throw overlapRefusal(vehicle.id);
                }

                throw err;
            }

            await this.events.write(tx, this.context, bookingCreatedEvent(made));
            this.events.due(tx, bookingDue(made));
            return made;
        });
    }

    /** Cancels under a lock on the booking's row, decided by the status it has at the store's clock. */
    cancelBooking(customerId: string, id: string): Promise<Booking> {

        return this.events.writing(this.context, async (tx) => {

            const booking = bookingRecord(found(await tx.row(queries.lockBooking, id, customerId, this.now()), 'booking'));
            checkCancellable(booking, booking.status);
            await tx.rows(queries.cancelBooking, id);
            const cancelled: Booking = { ...booking, status: 'cancelled' };
            await this.events.write(tx, this.context, bookingCancelledEvent(cancelled, this.now()));
            return cancelled;
        });
    }

    async nextDue(): Promise<Date | null> {

        const [due] = (await this.db.rows(queries.nextDue)).map((row) => row.due);
        return due ? new Date(due) : null;
    }

    async applyDue(until: Date, limit: number): Promise<AppliedTransition[]> {

        // One at a time, earliest first, each claimed in its own transaction: a booking started here may fall due to
        // complete before the next one starts.
        const at = until.toISOString();
        return await claimEach(limit, () => this.claimNext(at));
    }

    // Finds the booking transition due first by `at` and claims it, in one transaction; none when nothing is due.
    private claimNext(at: string): Promise<AppliedTransition | undefined> {

        return this.events.writing(this.context, async (tx) => {

            const due = await tx.row(queries.nextTransition, at);
            if (due) {
                await tx.rows(due.type === 'logistics.booking.started' ? queries.start : queries.complete, due.id);
                // Stamped with its due instant, and read as of it: the status the transition gave it.
                const booking = bookingRecord(found(await tx.row(queries.bookingAtInstant, due.id, due.due), 'booking'));
                await this.events.write(tx, this.context, bookingMovedEvent(due, booking));
            }

            return due;
        });
    }

    // The store's clock as text, in the form records keep.
    private now(): string {

        return this.context.clock.now().toISOString();
    }
}
