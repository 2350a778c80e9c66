import Joi from 'joi';

import { recordId, timestamp, wording } from '../fields';
import { listSchema } from '../lists';
import { eventTypes, matchesType, typePattern } from './model';


export const maxEventsLimit = 1000;

// Longer than any listed type: a longer one names none, and is refused before it is read.
const maxTypeLength = 100;

/** A listed event type, or a prefix pattern ending in `*` that matches at least one (`pay.*`; `*` alone, every type). */
export const eventTypeFilter = wording(Joi.string().max(maxTypeLength).custom((value: string, helpers) => {

    // One refusal of a type too long: max has made it.
    const pattern = typePattern(value);
    return value.length > maxTypeLength || eventTypes.some((type) => matchesType(type, [pattern])) ? value : helpers.error('type.unknown');
}), {
    'type.unknown': `{{#label}} must be an event type (${eventTypes.join(', ')}) or a prefix of one ending in * (pay.*)`
});

const afterField = recordId.description('An event id: only the events after it (422 event_not_found when the data set holds no such event)');

export const eventListQuery = Joi.object({
    after: afterField,
    type: eventTypeFilter.description('Only events of this type, or of the types a prefix ending in * matches (pay.*)'),
    limit: Joi.number().integer().min(1).max(maxEventsLimit).default(100).description(`Events per page, 1 to ${maxEventsLimit}`)
});

export const eventStreamQuery = Joi.object({
    after: afterField.description('An event id: the stream begins after it (Last-Event-ID wins over it); unset, with the events written from now on'),
    type: eventTypeFilter.description('Only events of this type, or of the types a prefix ending in * matches (pay.*)')
});

export const eventStreamHeaders = Joi.object({
    'last-event-id': recordId.empty('').description('The id of the last event received: the stream resumes after it')
}).unknown(true);

export const eventSchema = Joi.object({
    id: Joi.string().required(),
    type: Joi.string().valid(...eventTypes).required(),
    created_at: timestamp.required().description('The data set\'s clock at the change, or the instant a transition fell due'),
    data: Joi.object().unknown(true).required().description('The record as its owner reads it through the API')
}).label('Event');

export const eventListSchema = listSchema(eventSchema, 'EventList');
