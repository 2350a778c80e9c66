import { DomainError } from '../../errors';
import { readMetadata } from '../../metadata';
import type { Booking, BookingStatus, NewBooking } from './store';


// The decisions of the logistics namespace: every engine reads the rows, calls these, and writes what they allow.

/** A booking as a store's query reads it: its metadata as the JSON text the row holds. */
export type BookingRow = Omit<Booking, 'metadata'> & { metadata: string };


/** A booking as its customer reads it, from the row a store's query read. */
export function bookingRecord(row: BookingRow): Booking {

    return { ...row, metadata: readMetadata(row.metadata) };
}


/**
 * Refuses a booking of a vehicle that cannot be booked, or whose time overlaps a booking that holds the vehicle (every
 * one but a cancelled one). Half-open ranges [pickup_at, return_at) overlap when each starts before the other ends; a
 * vehicle's holding bookings never overlap one another, so of those starting before the requested return the latest
 * one also ends last, and the range overlaps a booking exactly when it overlaps that one: latestReturn is its
 * return_at, undefined when there is none.
 */
export function checkBooking(vehicle: { id: string; is_available: boolean }, booking: NewBooking, latestReturn: string | undefined): void {

    if (!vehicle.is_available) {
        throw new DomainError('conflict', 'vehicle_unavailable', `vehicle_id ${vehicle.id}: this vehicle is not available for booking`, 'vehicle_id');
    }

    if (latestReturn !== undefined && latestReturn > booking.pickup_at) {
        throw overlapRefusal(vehicle.id);
    }
}


/** The refusal of a booking whose time overlaps a booking that holds the vehicle: a 409. */
export function overlapRefusal(vehicleId: string): DomainError {

    return new DomainError('conflict', 'booking_overlap', `vehicle_id ${vehicleId} is already booked for part of that time: choose another time or vehicle`);
}


/**
 * The status a booking has at `now` by its own instants (timestamps in toISOString() form, so text order is time
 * order): confirmed before its pickup_at, active from then, completed from its return_at. A new booking is stored in
 * it; a stored booking reads it unless stored later (lifecycle-sql.ts).
 */
export function bookingStatusAt(booking: Pick<Booking, 'pickup_at' | 'return_at'>, now: string): BookingStatus {

    if (booking.return_at <= now) {
        return 'completed';
    }

    return booking.pickup_at <= now ? 'active' : 'confirmed';
}


/** Refuses to cancel a booking that has started (active) or ended (completed) by the store's clock: a 409 naming why. */
export function checkCancellable(booking: Pick<Booking, 'id' | 'pickup_at' | 'return_at'>, status: BookingStatus): void {

    if (status === 'active') {
        throw new DomainError('conflict', 'booking_started', `Booking ${booking.id} started at its pickup_at (${booking.pickup_at}) and holds its vehicle until ${booking.return_at}: only a booking that has not started can be cancelled`);
    }

    if (status === 'completed') {
        throw new DomainError('conflict', 'booking_completed', `Booking ${booking.id} ended at its return_at (${booking.return_at}): a completed booking cannot be cancelled`);
    }
}
