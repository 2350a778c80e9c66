import { DomainError } from '../../errors';
import type { NewBooking } from './store';


// The decisions of the logistics namespace: every engine reads the rows, calls these, and writes what they allow.

/**
 * Refuses a booking of a vehicle that cannot be booked, or whose time overlaps a confirmed booking. Half-open ranges
 * [pickup_at, return_at) overlap when each starts before the other ends; a vehicle's confirmed bookings never overlap
 * one another, so of those starting before the requested return the latest one also ends last, and the range overlaps
 * a booking exactly when it overlaps that one: latestReturn is its return_at, undefined when there is none.
 */
export function checkBooking(vehicle: { id: string; is_available: boolean }, booking: NewBooking, latestReturn: string | undefined): void {

    if (!vehicle.is_available) {
        throw new DomainError('conflict', 'vehicle_unavailable', `vehicle_id ${vehicle.id}: this vehicle is not available for booking`, 'vehicle_id');
    }

    if (latestReturn !== undefined && latestReturn > booking.pickup_at) {
        throw overlapRefusal(vehicle.id);
    }
}


/** The refusal of a booking whose time overlaps a confirmed booking of the vehicle: a 409. */
export function overlapRefusal(vehicleId: string): DomainError {

    return new DomainError('conflict', 'booking_overlap', `vehicle_id ${vehicleId} is already booked for part of that time: choose another time or vehicle`);
}
