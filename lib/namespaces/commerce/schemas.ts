import Joi from 'joi';

import { currency, isCurrencyCode, recordId, requestBody, setByService, text, timestamp, visibleText, wording } from '../../fields';
import { listSchema, pageQuery } from '../../lists';
import { currencyDigits, fitsCurrency } from './money';
import { offerStatuses, targetTypes } from './store';


// Longest accepted text of each kind, in UTF-16 code units (what JavaScript's String length counts).
export const maxLengths = {
    name: 200,
    description: 5000,
    message: 2000,
    reason: 2000
};

// Keeps the amount's minor units (price * 10^digits) well inside the integers a double holds exactly.
export const maxPrice = 1_000_000_000_000;


// The number of decimals depends on the currency next to the price; a bad currency is reported by its own rule.
export const price = wording(Joi.number().min(0).max(maxPrice).custom((value: number, helpers) => {

    const { currency: code } = helpers.state.ancestors[0] as { currency?: unknown };
    if (typeof code !== 'string' || !isCurrencyCode(code) || fitsCurrency(value, code)) {
        return value;
    }

    return helpers.error('price.decimals', { currency: code, digits: currencyDigits(code) });
}), {
    'price.decimals': '{{#label}} has more decimals than {{#currency}} allows (at most {{#digits}})'
}).description('Amount in the currency, with no more decimals than the currency has (JPY 0, USD 2, KWD 3)');

export const productParams = Joi.object({
    product_id: recordId.required().description('Product id')
});

export const businessParams = Joi.object({
    business_id: recordId.required().description('Business id')
});

export const inquiryParams = Joi.object({
    inquiry_id: recordId.required().description('Inquiry id')
});

export const scamReportParams = Joi.object({
    report_id: recordId.required().description('Scam report id')
});

export const productListQuery = Joi.object({
    business_id: recordId.description('Only the products of this business'),
    ...pageQuery
});

export const businessListQuery = Joi.object(pageQuery);

export const offerListQuery = Joi.object({
    product_id: recordId.description('Only the offers of this product'),
    ...pageQuery
});


export const newProductSchema = requestBody({
    name: visibleText(maxLengths.name).required().description('Product name, up to 200 characters'),
    description: text(maxLengths.description).allow('').default('').description('Free text, up to 5000 characters; empty when not sent'),
    price: price.required(),
    currency: currency.required(),
    business_id: recordId.required().description('The business that sells the product'),
    id: setByService('generated'),
    created_by: setByService('the caller\'s identity'),
    created_at: setByService('the time of creation'),
    scam_report_count: setByService('counted from scam reports')
}, 'NewProduct');

export const newInquirySchema = requestBody({
    product_id: recordId.description('The product the inquiry is about; send this or business_id')
        .when('business_id', {
            is: Joi.exist(),
            then: wording(Joi.forbidden(), { 'any.unknown': '{{#label}} cannot be sent together with business_id: an inquiry is about one product or one business' }),
            otherwise: wording(Joi.required(), { 'any.required': '{{#label}} or business_id is required: name the product or the business the inquiry is about' })
        }),
    business_id: recordId.description('The business the inquiry is about; send this or product_id'),
    message: visibleText(maxLengths.message).required().description('The buyer\'s question, up to 2000 characters'),
    id: setByService('generated'),
    owner_id: setByService('the caller\'s identity'),
    created_at: setByService('the time of creation')
}, 'NewInquiry');

export const newScamReportSchema = requestBody({
    target_type: Joi.string().valid(...targetTypes).required().description('What is reported'),
    target_id: recordId.required().description('Id of the product, business or offer reported'),
    reason: visibleText(maxLengths.reason).required().description('Why it looks like a scam, up to 2000 characters'),
    id: setByService('generated'),
    reporter_id: setByService('the caller\'s identity'),
    created_at: setByService('the time of creation')
}, 'NewScamReport');


const scamReportCount = Joi.number().integer().min(0).required()
    .description('Number of distinct callers who reported it as a scam: the trust signal');

export const productSchema = Joi.object({
    id: Joi.string().required(),
    name: Joi.string().required(),
    description: Joi.string().allow('').required(),
    price: Joi.number().min(0).required(),
    currency: Joi.string().length(3).required(),
    business_id: Joi.string().required(),
    created_by: Joi.string().required().description('Identity of the caller who created it'),
    created_at: timestamp.required(),
    scam_report_count: scamReportCount
}).label('Product');

export const businessSchema = Joi.object({
    id: Joi.string().required(),
    name: Joi.string().required(),
    description: Joi.string().allow('').required(),
    category: Joi.string().required(),
    city: Joi.string().required(),
    phone: Joi.string().required(),
    created_at: timestamp.required(),
    scam_report_count: scamReportCount
}).label('Business');

export const offerSchema = Joi.object({
    id: Joi.string().required(),
    product_id: Joi.string().required(),
    title: Joi.string().required(),
    price: Joi.number().min(0).required(),
    currency: Joi.string().length(3).required(),
    valid_from: timestamp.required(),
    valid_until: timestamp.required(),
    status: Joi.string().valid(...offerStatuses).required()
        .description('valid until valid_until, expired from then, as of the data set\'s clock').label('OfferStatus'),
    created_at: timestamp.required(),
    scam_report_count: scamReportCount
}).label('Offer');

export const inquirySchema = Joi.object({
    id: Joi.string().required(),
    product_id: Joi.string().allow(null).required().description('The product asked about, or null'),
    business_id: Joi.string().allow(null).required().description('The business asked about, or null'),
    message: Joi.string().required(),
    owner_id: Joi.string().required().description('Identity of the caller who sent it'),
    created_at: timestamp.required()
}).label('Inquiry');

export const scamReportSchema = Joi.object({
    id: Joi.string().required(),
    target_type: Joi.string().valid(...targetTypes).required().description('What is reported').label('ScamReportTargetType'),
    target_id: Joi.string().required(),
    reason: Joi.string().required(),
    reporter_id: Joi.string().required().description('Identity of the caller who reported'),
    created_at: timestamp.required()
}).label('ScamReport');

export const productListSchema = listSchema(productSchema, 'ProductList');

export const businessListSchema = listSchema(businessSchema, 'BusinessList');

export const offerListSchema = listSchema(offerSchema, 'OfferList');
