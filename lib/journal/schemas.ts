import Joi from 'joi';

import { timestamp } from '../fields';
import { listSchema, pageQuery } from '../lists';


const nearMissSchema = Joi.object({
    method: Joi.string().required(),
    path: Joi.string().required()
}).label('NearMiss');

export const journalEntrySchema = Joi.object({
    id: Joi.string().required().description('The request id (X-Request-Id)'),
    at: timestamp.required().description('When the request arrived'),
    method: Joi.string().required().description('In upper case'),
    path: Joi.string().required().description('The API path, without an instance\'s base path'),
    query: Joi.object().unknown(true).required().description('Each parameter as sent: a string, or an array of the strings of a repeated one'),
    headers: Joi.object().unknown(true).required().description('Header names in lower case, values as sent; credentials read [hidden]'),
    body: Joi.any().required().description('Any JSON value: the body as the request sent it, parsed (an object, an array, a string, a number, a boolean or null); null without a body; when body_truncated, a string: the body\'s text cut at JOURNAL_BODY_BYTES'),
    body_truncated: Joi.boolean().required(),
    caller: Joi.string().allow(null).required().description('The token\'s sub, null without a token'),
    status: Joi.number().integer().allow(null).required().description('The status answered, or that a dropped reply would have had; null when dropped before'),
    code: Joi.string().allow(null).required().description('The error code of a 4xx or 5xx'),
    duration_ms: Joi.number().integer().min(0).required(),
    route: Joi.string().allow(null).required().description('The route that took the request; null when none did'),
    fault: Joi.string().allow(null).required().description('The id of the fault rule that acted on the request'),
    near_miss: nearMissSchema.allow(null).required().description('For a request no route took (404, 405): the closest route')
}).label('JournalEntry');

export const journalListQuery = Joi.object({
    ...pageQuery,
    unmatched: Joi.boolean().default(false).description('true: only requests no route took')
});

export const journalListSchema = listSchema(journalEntrySchema, 'JournalEntryList');

export const journalCountSchema = Joi.object({
    count: Joi.number().integer().min(0).required()
}).label('JournalCount');

export const journalFindSchema = Joi.object({
    requests: Joi.array().items(journalEntrySchema).required()
}).label('JournalMatches');
