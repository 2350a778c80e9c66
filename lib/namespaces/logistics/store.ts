import type { ListResult, Page } from '../../lists';


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

export type BookingStatus = 'confirmed' | 'cancelled';

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
}

/** What a caller sends to book: timestamps already in toISOString() form. */
export type NewBooking = Pick<Booking, 'vehicle_id' | 'pickup_location_id' | 'dropoff_location_id' | 'pickup_at' | 'return_at' | 'notes'>;

export type VehicleFilter = Page & { available?: boolean };


/** The logistics namespace as the routes see it, whatever engine keeps it. */
export interface LogisticsStore {

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

    /** Books a vehicle for the customer: references, availability and overlap decided in one write transaction. */
    createBooking(customerId: string, booking: NewBooking): Promise<Booking>;
}
