import type { RequestRoute } from '@hapi/hapi';
import Joi from 'joi';

import { fieldOf } from '../thrown';
import { SchemaConverter, type JsonSchema } from './joi-schema';
import { always } from '../always';


interface Response {
    description: string;
    content?: Record<string, { schema?: JsonSchema; example?: unknown }>;
}

interface Operation {
    parameters?: JsonSchema[];
    requestBody?: { required: boolean; content: Record<string, { schema: JsonSchema }> };
    responses: Record<string, Response>;
}

export interface OpenApiDocument {
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, JsonSchema> };
    externalDocs?: { description: string; url: string };
    'x-asyncapi'?: string;
}


// The document spells a path without its trailing slash (/v1/pay/wallet/ is /v1/pay/wallet).
function documentPath(path: string): string {

    return path.length > 1 ? path.replace(/\/$/, '') : path;
}


/** Whether a route's body may be left out: its schema has a default, which stands for no body. */
export function bodyIsOptional(payload: Joi.Schema): boolean {

    return payload.$_getFlag('default') !== undefined;
}


/** Gives an operation the schemas of its route's joi schemas: parameters, body and the body of each response. */
function describeOperation(operation: Operation, route: RequestRoute, converter: SchemaConverter): void {

    const { validate } = route.settings;
    const sources = [[validate?.params, 'path'], [validate?.query, 'query'], [validate?.headers, 'header']] as const;
    const parameters = sources.flatMap(([schema, location]) => (Joi.isSchema(schema) ? converter.parametersOf(schema, location) : []));
    if (parameters.length) {
        operation.parameters = parameters;
    }

    const payload = validate?.payload;
    const declaredBody = route.settings.plugins?.localgate?.body;
    if (Joi.isSchema(payload)) {
        operation.requestBody = { required: !bodyIsOptional(payload), content: { 'application/json': { schema: converter.schemaOf(payload) } } };
    }
    else if (declaredBody) {
        const schema = converter.schemaOf(declaredBody.schema);
        operation.requestBody = { required: true, content: Object.fromEntries(declaredBody.types.map((type) => [type, { schema }])) };
    }

    const statuses = route.settings.response?.status ?? {};
    const declared: unknown = route.settings.plugins?.['hapi-swagger']?.responses;
    for (const [code, response] of Object.entries(operation.responses)) {
        const schema = statuses[code] ?? fieldOf(fieldOf(declared, code), 'schema');
        if (code === '204') {
            // An answer without a body.
            delete response.content;
        }
        else if (Joi.isSchema(schema)) {
            // A body with a schema is JSON, also where the route's success is not (an event stream's errors).
            const { content: contents = {} } = response;
            const [content] = Object.values(contents);
            response.content = { 'application/json': { ...content, schema: converter.schemaOf(schema) } };
        }
    }
}


/**
 * Replaces the schemas hapi-swagger wrote with those of the joi schemas the routes validate with, converted once by
 * joi-schema.ts: what the server accepts and answers, and each labelled schema as a component of that name; and links
 * the AsyncAPI document of what the server sends unasked (webhooks, event streams).
 */
export function completeDocument(document: OpenApiDocument, routes: RequestRoute[], asyncApiPath: string): void {

    const byOperation = new Map(routes.map((route) => [`${route.method} ${documentPath(route.path)}`, route]));
    const converter = new SchemaConverter();
    for (const [path, item] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(item)) {
            describeOperation(operation, always(byOperation.get(`${method} ${path}`), `the route of ${method} ${path}`), converter);
        }
    }

    document.components.schemas = converter.components;
    document.externalDocs = { description: 'The webhooks and event streams: an AsyncAPI 3.0 document of every event type, made from the same schemas', url: asyncApiPath };
    document['x-asyncapi'] = asyncApiPath;
}
