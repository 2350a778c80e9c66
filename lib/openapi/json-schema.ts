import type { JsonSchema } from './joi-schema';
import { always } from '../always';


// The keywords whose values are schemas, a map of schemas or a list of them; every other keyword's value is data.
const schemaKeywords = new Set(['items', 'additionalProperties', 'not']);
const schemaMaps = new Set(['properties']);
const schemaLists = new Set(['anyOf', 'oneOf', 'allOf']);

const componentPrefix = '#/components/schemas/';


function mapSchemas(value: unknown, key: string, walk: (schema: JsonSchema) => JsonSchema): unknown {

    if (schemaKeywords.has(key) && typeof value === 'object') {
        return walk(value as JsonSchema);
    }

    if (schemaMaps.has(key)) {
        return Object.fromEntries(Object.entries(value as Record<string, JsonSchema>).map(([name, schema]) => [name, walk(schema)]));
    }

    if (schemaLists.has(key)) {
        return (value as JsonSchema[]).map(walk);
    }

    return value;
}


/**
 * The JSON Schema (draft 7, the dialect AsyncAPI's schemas extend) of a schema the converter wrote in OpenAPI 3.0's
 * dialect: its one difference here is `nullable`, which JSON Schema says as a null type (and a null in an enum).
 */
export function jsonSchemaOf(schema: JsonSchema): JsonSchema {

    const converted: JsonSchema = {};
    for (const [key, value] of Object.entries(schema)) {
        if (key !== 'nullable') {
            converted[key] = mapSchemas(value, key, jsonSchemaOf);
        }
    }

    if (schema.nullable) {
        converted.type = [schema.type, 'null'];
        if (Array.isArray(schema.enum)) {
            converted.enum = [...schema.enum, null];
        }
    }

    return converted;
}


/** The schema with each reference to a component replaced by that component, so that it stands alone. */
export function inlined(schema: JsonSchema, components: Readonly<Record<string, JsonSchema>>): JsonSchema {

    // The converter's only references are to its components.
    if (typeof schema.$ref === 'string') {
        return inlined(always(components[schema.$ref.slice(componentPrefix.length)], schema.$ref), components);
    }

    return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, mapSchemas(value, key, (child) => inlined(child, components))]));
}
