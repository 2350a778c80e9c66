import Joi from 'joi';

import { currency, recordId, text, utcTimestamp, visibleText } from '../../fields';
import { fixtureCollection, recordOf, recordSchema, type FixtureRecord, type FixtureSpec } from '../../fixtures';
import { fromMinorUnits, toMinorUnits } from './money';
import { maxLengths, price } from './schemas';
import { offerStatuses, targetTypes, type TargetType } from './store';


// Commerce records as the API shows them; scam_report_count is not loaded but counted from the scam reports. An offer
// keeps the status it is given (an export's); one without is stored valid, whatever the clock of the load: reads show
// the status of the data set's clock and the timeline stores it (docs/api.md, "Time moves bookings and offers").

const tableOfTarget: Record<TargetType, string> = { product: 'products', business: 'businesses', offer: 'offers' };

/** A product or an offer as its schema below validates it: a price in its currency's major units. */
type PricedRecord = FixtureRecord & { price: number; currency: string };

/** A scam report as its schema below validates it: the kind of record it names says the table its target_id refers to. */
type ScamReportRecord = FixtureRecord & { target_type: TargetType; target_id: string; reason: string; reporter_id: string };

function priced({ price: amount, ...rest }: PricedRecord): Record<string, unknown> {

    return { ...rest, price_minor: toMinorUnits(amount, rest.currency) };
}

// A price is read back from its minor units (PostgreSQL reads a bigint as text).
const readers = { price: (row: Record<string, unknown>) => fromMinorUnits(Number(row.price_minor), String(row.currency)) };

function fieldsOf(row: Record<string, unknown>, fields: string[]): Record<string, unknown> {

    return recordOf(row, fields, readers);
}


export const commerceFixture: FixtureSpec = {
    businesses: {
        schema: recordSchema({
            name: visibleText(maxLengths.name).required(),
            description: text(maxLengths.description).allow('').default(''),
            category: visibleText(100).required(),
            city: visibleText(100).required(),
            phone: visibleText(50).required()
        }),
        references: {},
        toRow: (value) => value,
        fromRow: (row) => fieldsOf(row, ['id', 'name', 'description', 'category', 'city', 'phone', 'created_at'])
    },
    products: fixtureCollection({
        schema: recordSchema<PricedRecord & Record<string, unknown>>({
            name: visibleText(maxLengths.name).required(),
            description: text(maxLengths.description).allow('').default(''),
            price: price.required(),
            currency: currency.required(),
            business_id: recordId.required(),
            created_by: visibleText(200).default('fixture')
        }),
        references: { business_id: () => 'businesses' },
        toRow: priced,
        fromRow: (row) => fieldsOf(row, ['id', 'name', 'description', 'price', 'currency', 'business_id', 'created_by', 'created_at'])
    }),
    offers: fixtureCollection({
        schema: recordSchema<PricedRecord & Record<string, unknown>>({
            product_id: recordId.required(),
            title: visibleText(200).required(),
            price: price.required(),
            currency: currency.required(),
            valid_from: utcTimestamp().required(),
            valid_until: utcTimestamp().required(),
            status: Joi.string().valid(...offerStatuses).default('valid')
        }),
        references: { product_id: () => 'products' },
        toRow: priced,
        fromRow: (row) => fieldsOf(row, ['id', 'product_id', 'title', 'price', 'currency', 'valid_from', 'valid_until', 'status', 'created_at'])
    }),
    inquiries: {
        schema: recordSchema({
            product_id: recordId,
            business_id: recordId,
            message: visibleText(maxLengths.message).required(),
            owner_id: visibleText(200).required()
        }).xor('product_id', 'business_id'),
        references: { product_id: () => 'products', business_id: () => 'businesses' },
        toRow: (value) => ({ product_id: null, business_id: null, ...value }),
        fromRow: (row) => fieldsOf(row, ['id', row.product_id === null ? 'business_id' : 'product_id', 'message', 'owner_id', 'created_at'])
    },
    scam_reports: fixtureCollection({
        schema: recordSchema<ScamReportRecord>({
            target_type: Joi.string().valid(...targetTypes).required(),
            target_id: recordId.required(),
            reason: visibleText(maxLengths.reason).required(),
            reporter_id: visibleText(200).required()
        }),
        references: { target_id: (value) => tableOfTarget[value.target_type] },
        unique: [['target_type', 'target_id', 'reporter_id']],
        toRow: (value) => value,
        fromRow: (row) => fieldsOf(row, ['id', 'target_type', 'target_id', 'reason', 'reporter_id', 'created_at'])
    })
};
