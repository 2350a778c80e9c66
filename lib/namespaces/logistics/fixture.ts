import Joi from 'joi';

import { currency, recordId, text, utcTimestamp, visibleText } from '../../fields';
import { fixtureCollection, recordOf, recordSchema, type FixtureRecord, type FixtureSpec } from '../../fixtures';
import { metadataSchema, readMetadata, storedMetadata } from '../../metadata';
import { maxNotesLength, returnAt } from './schemas';
import { bookingStatuses } from './store';


// Logistics records as the API shows them. Bookings are checked with the API's rule: a vehicle's bookings that are not
// cancelled never overlap, in the fixture or with those already stored. A booking keeps the status it is given (an
// export's); one without is stored confirmed, the status before its instants, whatever the clock of the load: reads
// show the status of the data set's clock and the timeline stores it (docs/api.md, "Time moves bookings and offers").

/** A booking as its schema below validates it. */
type BookingRecord = FixtureRecord & {
    vehicle_id: string;
    pickup_location_id: string;
    dropoff_location_id: string;
    pickup_at: string;
    return_at: string;
    notes: string;
    customer_id: string;
    status: string;
    metadata: Record<string, string>;
};

function flag(value: Record<string, unknown>, name: string): Record<string, unknown> {

    return { ...value, [name]: value[name] ? 1 : 0 };
}

// SQLite reads a flag as 0 or 1.
function flags(...names: string[]): Record<string, (row: Record<string, unknown>) => unknown> {

    return Object.fromEntries(names.map((name) => [name, (row: Record<string, unknown>) => Boolean(row[name])]));
}

// A booking's metadata, from its JSON text.
const metadataReader = { metadata: (row: Record<string, unknown>) => readMetadata(String(row.metadata)) };


export const logisticsFixture: FixtureSpec = {
    locations: {
        schema: recordSchema({
            name: visibleText(200).required(),
            address: visibleText(300).required(),
            city: visibleText(100).required(),
            latitude: Joi.number().min(-90).max(90).required(),
            longitude: Joi.number().min(-180).max(180).required()
        }),
        references: {},
        toRow: (value) => value,
        fromRow: (row) => recordOf(row, ['id', 'name', 'address', 'city', 'latitude', 'longitude', 'created_at'])
    },
    vehicles: {
        schema: recordSchema({
            make: visibleText(100).required(),
            model: visibleText(100).required(),
            year: Joi.number().integer().min(1900).max(2100).required(),
            seats: Joi.number().integer().min(1).max(100).required(),
            daily_rate: Joi.number().min(0).required(),
            currency: currency.required(),
            is_available: Joi.boolean().default(true)
        }),
        references: {},
        toRow: (value) => flag(value, 'is_available'),
        fromRow: (row) => recordOf(row, ['id', 'make', 'model', 'year', 'seats', 'daily_rate', 'currency', 'is_available', 'created_at'], flags('is_available'))
    },
    drivers: {
        schema: recordSchema({
            name: visibleText(200).required(),
            phone: visibleText(50).required(),
            license_number: visibleText(50).required(),
            vehicle_id: recordId.allow(null).default(null),
            is_active: Joi.boolean().default(true)
        }),
        references: { vehicle_id: () => 'vehicles' },
        // A driver's licence is theirs alone, and a vehicle has one driver.
        unique: [['license_number'], ['vehicle_id']],
        toRow: (value) => flag(value, 'is_active'),
        fromRow: (row) => recordOf(row, ['id', 'name', 'phone', 'license_number', 'vehicle_id', 'is_active', 'created_at'], flags('is_active'))
    },
    bookings: fixtureCollection({
        schema: recordSchema<BookingRecord>({
            vehicle_id: recordId.required(),
            pickup_location_id: recordId.required(),
            dropoff_location_id: recordId.required(),
            pickup_at: utcTimestamp().required(),
            return_at: returnAt.required(),
            notes: text(maxNotesLength).allow('').default(''),
            customer_id: visibleText(200).required(),
            status: Joi.string().valid(...bookingStatuses).default('confirmed'),
            metadata: metadataSchema.default({})
        }),
        references: { vehicle_id: () => 'vehicles', pickup_location_id: () => 'locations', dropoff_location_id: () => 'locations' },
        exclusion: { key: 'vehicle_id', from: 'pickup_at', to: 'return_at', unless: ['status', 'cancelled'] },
        toRow: (value) => ({ ...value, metadata: storedMetadata(value.metadata) }),
        fromRow: (row) => recordOf(row, ['id', 'vehicle_id', 'pickup_location_id', 'dropoff_location_id', 'pickup_at', 'return_at', 'notes', 'customer_id', 'status', 'created_at', 'metadata'], metadataReader)
    })
};
