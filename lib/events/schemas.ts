import Joi from 'joi';

import { recordId, timestamp, wording } from '../fields';
import { listSchema } from '../lists';


export const maxEventsLimit = 1000;

// Any prefix of the strings, the empty one included, as a regular expression: a trie of optional groups.
function prefixesOf(strings: readonly string[]): string {

    const heads = [...new Set(strings.filter(Boolean).map((string) => string.charAt(0)))];
    const branches = heads.map((head) => head.replace(/[.*]/, '\\$&') + prefixesOf(strings.filter((string) => string.startsWith(head)).map((string) => string.slice(1))));
    return branches.length ? `(?:${branches.join('|')})?` : '';
}

export const eventStreamHeaders = Joi.object({
    'last-event-id': recordId.empty('').description('The id of the last event received: the stream resumes after it')
}).unknown(true);

/** The schemas of a list of event types: what validation and the documents say an event type is. */
export interface EventSchemas {
    /** A listed type, or a prefix of one ending in `*`. */
    typeFilter: Joi.StringSchema;
    listQuery: Joi.ObjectSchema;
    streamQuery: Joi.ObjectSchema;
    /** What every event holds around its data: a webhook's body, a stream's data line and an item of a list alike. */
    envelope: Joi.ObjectSchema;
    list: Joi.ObjectSchema;
    /** The data of a `webhook.delivery.given_up` event, as the dispatcher writes it after an endpoint's last attempt. */
    givenUp: Joi.ObjectSchema;
}

// One set of schemas per list of types (eventTypesOf answers one list per list of namespaces).
const built = new WeakMap<readonly string[], EventSchemas>();

/** The event schemas of the types a server writes, built once per list as the server registers its routes. */
export function eventSchemas(types: readonly string[]): EventSchemas {

    let schemas = built.get(types);
    if (!schemas) {
        schemas = buildSchemas(types);
        built.set(types, schemas);
    }

    return schemas;
}


function buildSchemas(types: readonly string[]): EventSchemas {

    // A listed event type, or a prefix of one ending in `*` (`pay.*`, `logistics.booking.*`; `*` alone, every type): a
    // pattern the document shows, so that a client sees which values are taken (and bounded by it: no more is read).
    const typeFilter = wording(Joi.string().pattern(new RegExp(`^(?:${types.map((type) => type.replace(/\./g, '\\.')).join('|')}|${prefixesOf(types)}\\*)$`)), {
        'string.pattern.base': `{{#label}} must be an event type (${types.join(', ')}) or a prefix of one ending in * (pay.*)`
    });

    const afterField = recordId.description('An event id: only the events after it (422 event_not_found when the data set holds no such event)');

    const listQuery = Joi.object({
        after: afterField,
        type: typeFilter.description('Only events of this type, or of the types a prefix ending in * matches (pay.*)'),
        limit: Joi.number().integer().min(1).max(maxEventsLimit).default(100).description(`Events per page, 1 to ${maxEventsLimit}`)
    });

    const streamQuery = Joi.object({
        after: afterField.description('An event id: the stream begins after it (Last-Event-ID wins over it); unset, with the events written from now on'),
        type: typeFilter.description('Only events of this type, or of the types a prefix ending in * matches (pay.*)')
    });

    const envelope = Joi.object({
        id: Joi.string().required(),
        type: Joi.string().valid(...types).required(),
        created_at: timestamp.required().description('The data set\'s clock at the change, or the instant a transition fell due'),
        data: Joi.object().unknown(true).required().description('The record as its owner reads it through the API')
    });

    const givenUp = Joi.object({
        webhook_id: Joi.string().required().description('The webhook-id every attempt of the delivery carried'),
        endpoint_id: Joi.string().required().description('The endpoint that was not reached'),
        event_id: Joi.string().required().description('The event it was sent'),
        event_type: Joi.string().valid(...types).required().description('That event\'s type'),
        attempts: Joi.number().integer().min(1).required().description('The attempts made, the last one included')
    }).label('WebhookDeliveryGivenUp');

    return { typeFilter, listQuery, streamQuery, envelope, list: listSchema(envelope.label('EventRecord'), 'EventRecordList'), givenUp };
}

export const eventTypeSchema = Joi.object({
    type: Joi.string().required(),
    description: Joi.string().required().description('What the event says happened, in one line'),
    delivered: Joi.boolean().required().description('Whether webhook endpoints are sent it: a webhook.* type is listed and streamed only'),
    data_schema: Joi.object().unknown(true).required()
        .description('The JSON Schema (draft 7) of the event\'s data, standing alone: the response schema of the record the event announces')
}).label('EventType');

export const eventTypeListSchema = listSchema(eventTypeSchema, 'EventTypeList');
