import Joi from 'joi';

import type { EventTypeSpec, Namespace } from '../namespace';
import { SchemaConverter, type JsonSchema } from '../openapi/joi-schema';
import { inlined, jsonSchemaOf } from '../openapi/json-schema';
import { eventTypesOf, undeliveredPrefix } from '../outbox';
import { eventSchemas } from './schemas';
import { always } from '../always';


/** The event types this feature writes itself, beside those of the namespaces (ownEventTypeNames), for a server that writes these types. */
export function ownEventTypes(types: readonly string[]): Readonly<Record<string, EventTypeSpec>> {

    return {
        'webhook.delivery.given_up': {
            description: 'An endpoint\'s last attempt at an event failed and no more are made: listed and streamed, never delivered',
            data: eventSchemas(types).givenUp
        }
    };
}


/** One event type of the catalogue. */
export interface CatalogueType {
    type: string;
    description: string;
    // Whether endpoints are sent it: a webhook.* type is only listed and streamed.
    delivered: boolean;
    // The JSON Schema of its data, standing alone (no reference out of it).
    data: JsonSchema;
    // The JSON Schema of the whole event, its data a reference into the catalogue's schemas.
    event: JsonSchema;
}

/** Every event type a server writes, and the schemas their events refer to, by label (`#/components/schemas/<label>`). */
export interface EventCatalogue {
    types: CatalogueType[];
    schemas: Record<string, JsonSchema>;
}


// One catalogue per list of namespaces: the types route and the AsyncAPI document share it.
const built = new WeakMap<readonly Namespace[], EventCatalogue>();


/**
 * The catalogue of the namespaces' event types and this feature's own, in the namespaces' order, built once per list:
 * each event's schema is the event envelope around the joi schema of its data, converted as the OpenAPI document
 * converts the routes'.
 */
export function eventCatalogue(namespaces: readonly Namespace[]): EventCatalogue {

    let catalogue = built.get(namespaces);
    if (!catalogue) {
        catalogue = buildCatalogue(namespaces);
        built.set(namespaces, catalogue);
    }

    return catalogue;
}


function buildCatalogue(namespaces: readonly Namespace[]): EventCatalogue {

    const converter = new SchemaConverter();
    const written = eventTypesOf(namespaces);
    const { envelope } = eventSchemas(written);
    const specs = [...namespaces.flatMap((namespace) => Object.entries(namespace.eventTypes ?? {})), ...Object.entries(ownEventTypes(written))];
    const events = specs.map(([type, spec]) => ({ type, description: spec.description, schema: converter.schemaOf(envelope.keys({ type: Joi.string().valid(type).required(), data: spec.data.required() })) }));
    // The components are complete once every event's schema is converted.
    const schemas = Object.fromEntries(Object.entries(converter.components).map(([label, schema]) => [label, jsonSchemaOf(schema)]));
    const types = events.map(({ type, description, schema }) => {

        const event = jsonSchemaOf(schema);
        const data = always((event.properties as Record<string, JsonSchema>).data, `the schema of ${type}'s data`);
        return { type, description, delivered: !type.startsWith(undeliveredPrefix), data: inlined(data, schemas), event };
    });

    return { types, schemas };
}
