import Joi from 'joi';

import { currency, recordId, text, utcTimestamp, visibleText } from '../../fields';
import type { FixtureSpec } from '../../fixtures';
import { toMinorUnits } from './money';
import { maxLengths, price } from './schemas';
import { targetTypes } from './store';


// Commerce records as the API shows them; scam_report_count is not loaded but counted from the scam reports.

function record(keys: Joi.PartialSchemaMap): Joi.ObjectSchema {

    return Joi.object({ id: recordId.min(1), created_at: utcTimestamp(), ...keys });
}

const tableOfTarget: Record<string, string> = { product: 'products', business: 'businesses', offer: 'offers' };

function priced(value: Record<string, unknown>): Record<string, unknown> {

    const { price: amount, ...rest } = value;
    return { ...rest, price_minor: toMinorUnits(amount as number, value.currency as string) };
}


export const commerceFixture: FixtureSpec = {
    businesses: {
        schema: record({
            name: visibleText(maxLengths.name).required(),
            description: text(maxLengths.description).allow('').default(''),
            category: visibleText(100).required(),
            city: visibleText(100).required(),
            phone: visibleText(50).required()
        }),
        references: {},
        toRow: (value) => value
    },
    products: {
        schema: record({
            name: visibleText(maxLengths.name).required(),
            description: text(maxLengths.description).allow('').default(''),
            price: price.required(),
            currency: currency.required(),
            business_id: recordId.required(),
            created_by: visibleText(200).default('fixture')
        }),
        references: { business_id: () => 'businesses' },
        toRow: priced
    },
    offers: {
        schema: record({
            product_id: recordId.required(),
            title: visibleText(200).required(),
            price: price.required(),
            currency: currency.required(),
            valid_from: utcTimestamp().required(),
            valid_until: utcTimestamp().required()
        }),
        references: { product_id: () => 'products' },
        toRow: priced
    },
    inquiries: {
        schema: record({
            product_id: recordId,
            business_id: recordId,
            message: visibleText(maxLengths.message).required(),
            owner_id: visibleText(200).required()
        }).xor('product_id', 'business_id'),
        references: { product_id: () => 'products', business_id: () => 'businesses' },
        toRow: (value) => ({ product_id: null, business_id: null, ...value })
    },
    scam_reports: {
        schema: record({
            target_type: Joi.string().valid(...targetTypes).required(),
            target_id: recordId.required(),
            reason: visibleText(maxLengths.reason).required(),
            reporter_id: visibleText(200).required()
        }),
        references: { target_id: (value) => tableOfTarget[value.target_type as string]! },
        toRow: (value) => value
    }
};
