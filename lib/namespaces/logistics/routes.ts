import type { Request, Server, ServerRoute } from '@hapi/hapi';

import { callerId } from '../../auth';
import type { Namespace } from '../../namespace';
import { dataOf } from '../../scope';
import { createdResponse, listResponse, type Page } from '../../lists';
import {
    bookingListSchema,
    bookingParams,
    bookingPayload,
    bookingSchema,
    locationListSchema,
    pageOnlyQuery,
    vehicleListSchema,
    vehicleParams,
    vehicleQuery,
    vehicleSchema
} from './schemas';
import type { LogisticsStore, NewBooking, VehicleFilter } from './store';


const tags = ['api', 'logistics'];


/** The logistics endpoints, served from the store of each request's data set (the namespace's, as registered). */
export function logisticsRoutes(server: Server, namespace: Namespace<LogisticsStore>): void {

    // The logistics store of the request's data set.
    const logisticsOf = (request: Pick<Request, 'app'>): LogisticsStore => dataOf(request).store(namespace);

    const listVehicles: ServerRoute<{ Query: VehicleFilter }> = {
        method: 'GET',
        path: '/vehicles',
        options: {
            auth: { mode: 'optional' },
            description: 'List vehicles',
            notes: 'Oldest first (created_at, then id). available=true lists only vehicles that can be booked, available=false only those that cannot.',
            tags,
            validate: { query: vehicleQuery },
            response: { status: { 200: vehicleListSchema } },
            handler: async (request, h) => listResponse(h, await logisticsOf(request).listVehicles(request.query))
        }
    };

    const getVehicle: ServerRoute<{ Params: { vehicle_id: string } }> = {
        method: 'GET',
        path: '/vehicles/{vehicle_id}',
        options: {
            auth: { mode: 'optional' },
            description: 'Get one vehicle',
            tags,
            validate: { params: vehicleParams },
            response: { status: { 200: vehicleSchema } },
            handler: (request) => logisticsOf(request).getVehicle(request.params.vehicle_id)
        }
    };

    const listLocations: ServerRoute<{ Query: Page }> = {
        method: 'GET',
        path: '/locations',
        options: {
            auth: { mode: 'optional' },
            description: 'List pickup and drop-off locations',
            notes: 'Oldest first (created_at, then id).',
            tags,
            validate: { query: pageOnlyQuery },
            response: { status: { 200: locationListSchema } },
            handler: async (request, h) => listResponse(h, await logisticsOf(request).listLocations(request.query))
        }
    };

    const createBooking: ServerRoute<{ Payload: NewBooking }> = {
        method: 'POST',
        path: '/bookings',
        options: {
            description: 'Book a vehicle',
            notes: [
                'The booking belongs to the caller (customer_id is the subject of the bearer token) and is confirmed at once;',
                'with a pickup_at already past by the data set\'s clock it is active (completed with a return_at past too).',
                'It holds the vehicle over [pickup_at, return_at) until cancelled, whatever its status: a booking may pick up at the instant another returns.',
                '409 vehicle_unavailable when the vehicle cannot be booked, 409 booking_overlap when the time is taken, 422 for an unknown vehicle or location.'
            ],
            tags,
            plugins: {
                localgate: {
                    errors: {
                        400: 'a return_at that is not after pickup_at (code validation_failed naming return_at)',
                        409: 'vehicle_unavailable: the vehicle cannot be booked at all; booking_overlap: it is already booked for part of that time',
                        422: 'vehicle_not_found or location_not_found: vehicle_id, pickup_location_id or dropoff_location_id names no record'
                    }
                }
            },
            validate: { payload: bookingPayload },
            response: { status: { 201: bookingSchema } },
            handler: async (request, h) => {

                const booking = await logisticsOf(request).createBooking(callerId(request), request.payload);
                return createdResponse(h, request, booking);
            }
        }
    };

    const listBookings: ServerRoute<{ Query: Page }> = {
        method: 'GET',
        path: '/bookings',
        options: {
            description: 'List the caller\'s bookings',
            notes: 'Only bookings made with the caller\'s identity, oldest first (created_at, then id). Each status is the one of the data set\'s clock: confirmed before pickup_at, active from then, completed from return_at.',
            tags,
            validate: { query: pageOnlyQuery },
            response: { status: { 200: bookingListSchema } },
            handler: async (request, h) => listResponse(h, await logisticsOf(request).listBookings(callerId(request), request.query))
        }
    };

    const getBooking: ServerRoute<{ Params: { booking_id: string } }> = {
        method: 'GET',
        path: '/bookings/{booking_id}',
        options: {
            description: 'Get one of the caller\'s bookings',
            notes: 'Another caller\'s booking answers the same 404 as an id that does not exist. Its status is the one of the data set\'s clock.',
            tags,
            validate: { params: bookingParams },
            response: { status: { 200: bookingSchema } },
            handler: (request) => logisticsOf(request).getBooking(callerId(request), request.params.booking_id)
        }
    };

    const cancelBooking: ServerRoute<{ Params: { booking_id: string } }> = {
        method: 'POST',
        path: '/bookings/{booking_id}/cancel',
        options: {
            description: 'Cancel one of the caller\'s bookings',
            notes: [
                'Only a booking that has not started by the data set\'s clock (confirmed) can be cancelled; it frees its vehicle at once.',
                'A booking already cancelled is answered as it is. Another caller\'s booking answers the same 404 as an id that does not exist.'
            ],
            tags,
            plugins: {
                localgate: {
                    errors: {
                        409: 'booking_started: its pickup_at has passed (it is active); booking_completed: its return_at has passed'
                    }
                }
            },
            validate: { params: bookingParams },
            response: { status: { 200: bookingSchema } },
            handler: (request) => logisticsOf(request).cancelBooking(callerId(request), request.params.booking_id)
        }
    };

    // One by one: hapi types each route's request by its own query, params and payload.
    server.route(listVehicles);
    server.route(getVehicle);
    server.route(listLocations);
    server.route(createBooking);
    server.route(listBookings);
    server.route(getBooking);
    server.route(cancelBooking);
}
