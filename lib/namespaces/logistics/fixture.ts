import Joi from 'joi';

import { currency, recordId, utcTimestamp, visibleText } from '../../fields';
import type { FixtureSpec } from '../../fixtures';


// Logistics records as the API shows them. Bookings are made through the API, where the overlap rule decides.

function record(keys: Joi.PartialSchemaMap): Joi.ObjectSchema {

    return Joi.object({ id: recordId.min(1), created_at: utcTimestamp(), ...keys });
}

function flag(value: Record<string, unknown>, name: string): Record<string, unknown> {

    return { ...value, [name]: value[name] ? 1 : 0 };
}


export const logisticsFixture: FixtureSpec = {
    locations: {
        schema: record({
            name: visibleText(200).required(),
            address: visibleText(300).required(),
            city: visibleText(100).required(),
            latitude: Joi.number().min(-90).max(90).required(),
            longitude: Joi.number().min(-180).max(180).required()
        }),
        references: {},
        toRow: (value) => value
    },
    vehicles: {
        schema: record({
            make: visibleText(100).required(),
            model: visibleText(100).required(),
            year: Joi.number().integer().min(1900).max(2100).required(),
            seats: Joi.number().integer().min(1).max(100).required(),
            daily_rate: Joi.number().min(0).required(),
            currency: currency.required(),
            is_available: Joi.boolean().default(true)
        }),
        references: {},
        toRow: (value) => flag(value, 'is_available')
    },
    drivers: {
        schema: record({
            name: visibleText(200).required(),
            phone: visibleText(50).required(),
            license_number: visibleText(50).required(),
            vehicle_id: recordId.allow(null).default(null),
            is_active: Joi.boolean().default(true)
        }),
        references: { vehicle_id: () => 'vehicles' },
        toRow: (value) => flag(value, 'is_active')
    }
};
