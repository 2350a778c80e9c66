import type { TimedStore } from '../../transitions';
import type { ListResult, Page } from '../../lists';
import type { Metadata } from '../../metadata';


export interface Vehicle {
    id: string;
    make: string;
    model: string;
    year: number;
    seats: number;
    daily_rate: number;
    currency: string;
    is_available: boolean;
    created_at: string;
}

export interface Location {
    id: string;
    name: string;
    address: string;
    city: string;
    latitude: number;
    longitude: number;
    created_at: string;
}

/** Confirmed until pickup_at, active from then, completed from return_at; cancelled stays cancelled. */
export const bookingStatuses = ['confirmed', 'active', 'completed', 'cancelled'] as const;

export type BookingStatus = typeof bookingStatuses[number];

export interface Booking {
    id: string;
    vehicle_id: string;
    pickup_location_id: string;
    dropoff_location_id: string;
    pickup_at: string;
    return_at: string;
    notes: string;
    customer_id: string;
    status: BookingStatus;
    created_at: string;
    /** The client's own pairs given with the booking; {} when none were. */
    metadata: Metadata;
}

/** What a caller sends to book: timestamps already in toISOString() form. */
export type NewBooking = Pick<Booking, 'vehicle_id' | 'pickup_location_id' | 'dropoff_location_id' | 'pickup_at' | 'return_at' | 'notes' | 'metadata'>;

export type VehicleFilter = Page & { available?: boolean };


/**
 * The logistics namespace as the routes and the timeline see it, whatever engine keeps it. A booking read shows the
 * status of the store's clock, whether or not the timeline has stored it yet.
 */
export interface LogisticsStore extends TimedStore {

    /** A page of vehicles, oldest first, optionally only those with the given availability. */
    listVehicles(filter: VehicleFilter): Promise<ListResult<Vehicle>>;

    /** One vehicle; vehicle_not_found when there is no such id. */
    getVehicle(id: string): Promise<Vehicle>;

    /** A page of pickup and drop-off locations, oldest first. */
    listLocations(paging: Page): Promise<ListResult<Location>>;

    /** A page of one customer's bookings, oldest first. */
    listBookings(customerId: string, paging: Page): Promise<ListResult<Booking>>;

    /** One booking of the customer; booking_not_found when it does not exist or belongs to someone else (same error). */
    getBooking(customerId: string, id: string): Promise<Booking>;

    /**
     * Books a vehicle for the customer: references, availability and overlap decided in one write transaction. A
     * booking whose pickup_at (or return_at) has passed by the store's clock is stored active (or completed).
     */
    createBooking(customerId: string, booking: NewBooking): Promise<Booking>;

    /**
     * Cancels one of the customer's bookings that has not started by the store's clock; booking_not_found as getBooking,
     * booking_started or booking_completed (409) for one that has. A cancelled booking is answered as it is.
     */
    cancelBooking(customerId: string, id: string): Promise<Booking>;
}
