import Joi from 'joi';

import { recordId, requestBody, setByService, text, timestamp, timestampExample, utcTimestamp, wording, type TimestampRule } from '../../fields';
import { listSchema, pageQuery } from '../../lists';
import { metadataSchema } from '../../metadata';
import { bookingStatuses } from './store';
import { always } from '../../always';


export const maxNotesLength = 1000;

const normalizedTimestamp = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;


const afterPickup: TimestampRule = (normalized, helpers) => {

    // pickup_at is validated first; when it passed, it is in the same normalized form, so text order is time order.
    const pickupAt = always((helpers.state.ancestors as { pickup_at?: unknown }[])[0], 'the booking a return_at is checked in').pickup_at;
    const comparable = typeof pickupAt === 'string' && normalizedTimestamp.test(pickupAt);
    return comparable && pickupAt >= normalized ? helpers.error('timestamp.afterPickup') : normalized;
};

/** The return of a booking: after its pickup_at. */
export const returnAt = wording(utcTimestamp(afterPickup), { 'timestamp.afterPickup': '{{#label}} must be after pickup_at' });


export const vehicleParams = Joi.object({
    vehicle_id: recordId.required().description('Identifier of the vehicle')
});

export const bookingParams = Joi.object({
    booking_id: recordId.required().description('Identifier of one of the caller\'s bookings')
});

export const vehicleQuery = Joi.object({
    available: Joi.boolean().description('true: only vehicles that can be booked; false: only those that cannot'),
    ...pageQuery
});

export const pageOnlyQuery = Joi.object(pageQuery);

export const bookingPayload = requestBody({
    vehicle_id: recordId.required().description('The vehicle to book'),
    pickup_location_id: recordId.required().description('Where the customer picks the vehicle up'),
    dropoff_location_id: recordId.required().description('Where the customer returns the vehicle'),
    pickup_at: utcTimestamp().required().description(`Start of the booking, ISO 8601 UTC (${timestampExample})`),
    return_at: returnAt.required().description('End of the booking, after pickup_at; the vehicle is free again from this instant'),
    notes: text(maxNotesLength).allow('').default('').description('Free text for the rental desk'),
    metadata: metadataSchema.default({}),
    id: setByService('generated'),
    customer_id: setByService('the caller\'s identity'),
    status: setByService('confirmed on creation, or the status of the clock for a pickup_at already past'),
    created_at: setByService('the time of creation')
}, 'NewBooking');


export const vehicleSchema = Joi.object({
    id: Joi.string().required(),
    make: Joi.string().required().example('Toyota'),
    model: Joi.string().required().example('Yaris Hybrid'),
    year: Joi.number().integer().required().description('Model year'),
    seats: Joi.number().integer().min(1).required(),
    daily_rate: Joi.number().min(0).required().description('Price of one day, in currency'),
    currency: Joi.string().length(3).required().description('ISO 4217 code'),
    is_available: Joi.boolean().required().description('Whether the vehicle can be booked at all'),
    created_at: timestamp.required()
}).label('Vehicle');

export const locationSchema = Joi.object({
    id: Joi.string().required(),
    name: Joi.string().required().example('Quayside Depot'),
    address: Joi.string().required(),
    city: Joi.string().required(),
    latitude: Joi.number().min(-90).max(90).required(),
    longitude: Joi.number().min(-180).max(180).required(),
    created_at: timestamp.required()
}).label('PickupLocation');

export const bookingSchema = Joi.object({
    id: Joi.string().required(),
    vehicle_id: Joi.string().required(),
    pickup_location_id: Joi.string().required(),
    dropoff_location_id: Joi.string().required(),
    pickup_at: timestamp.required().description('Start of the booking, ISO 8601 UTC with milliseconds'),
    return_at: timestamp.required().description('End of the booking (exclusive), ISO 8601 UTC with milliseconds'),
    notes: Joi.string().allow('').required(),
    customer_id: Joi.string().required().description('The caller who booked: the subject of their token'),
    status: Joi.string().valid(...bookingStatuses).required()
        .description('confirmed until pickup_at, active from then, completed from return_at, as of the data set\'s clock; cancelled stays cancelled. Every booking but a cancelled one holds its vehicle')
        .label('BookingStatus'),
    created_at: timestamp.required(),
    metadata: metadataSchema.required()
}).label('Booking');

export const vehicleListSchema = listSchema(vehicleSchema, 'VehicleList');

export const locationListSchema = listSchema(locationSchema, 'PickupLocationList');

export const bookingListSchema = listSchema(bookingSchema, 'BookingList');
