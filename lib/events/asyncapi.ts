import type { JsonSchema } from '../openapi/joi-schema';
import type { EventCatalogue } from './catalogue';


/** Where a server serves the document, beside /openapi.json. */
export const asyncApiPath = '/asyncapi.json';

/** An AsyncAPI 3.0 document, as a plain JSON value. */
export type AsyncApiDocument = Record<string, unknown>;

/** The parts of the document that are not the catalogue's: the package it describes and the stream's query. */
export interface AsyncApiFacts {
    title: string;
    version: string;
    streamQuery: JsonSchema;
}


// Standard Webhooks' headers, as the dispatcher signs each attempt (lib/signing.ts).
const webhookHeaders: JsonSchema = {
    type: 'object',
    required: ['content-type', 'webhook-id', 'webhook-timestamp', 'webhook-signature'],
    properties: {
        'content-type': { type: 'string', enum: ['application/json'] },
        'webhook-id': {
            type: 'string',
            pattern: '^msg_[A-Za-z0-9_-]+$',
            description: 'The same for every attempt of one event to one endpoint, and another for any other: a receiver drops a repeat by it'
        },
        'webhook-timestamp': {
            type: 'string',
            pattern: '^[0-9]+$',
            description: 'The attempt\'s instant in Unix seconds: the wall clock, or with the endpoint\'s signing_clock "instance" the instant the attempt fell due on the data set\'s clock'
        },
        'webhook-signature': {
            type: 'string',
            pattern: '^v1,[A-Za-z0-9+/]+={0,2}( v1,[A-Za-z0-9+/]+={0,2})*$',
            description: '`v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` under the endpoint\'s secret (the bytes after `whsec_`, base64-decoded); signatures are separated by spaces'
        }
    }
};

const streamServer = { $ref: '#/servers/localgate' };

const streams = [
    { key: 'defaultStream', address: '/_events/stream', what: 'the default data set', parameters: undefined },
    { key: 'instanceStream', address: '/_instances/{instance_id}/events/stream', what: 'an instance', parameters: { instance_id: { description: 'The id POST /_instances answered with' } } }
];


// The message of one event type: its name, what it says, the event as its payload, and a webhook's headers.
function message(type: { type: string; description: string; event: JsonSchema }, headers?: JsonSchema): JsonSchema {

    return {
        name: type.type,
        title: type.type,
        summary: type.description,
        contentType: 'application/json',
        ...(headers ? { headers } : {}),
        payload: type.event
    };
}


/**
 * The AsyncAPI 3.0 document of what a server sends on its own: each delivered event type as a webhook to the
 * endpoints a data set set, and each type on the event streams, every message's payload the event envelope of its
 * type from the catalogue.
 */
export function asyncApiDocument(catalogue: EventCatalogue, facts: AsyncApiFacts): AsyncApiDocument {

    const delivered = catalogue.types.filter((type) => type.delivered);
    const messages: Record<string, JsonSchema> = {};
    for (const type of delivered) {
        messages[`webhook.${type.type}`] = message(type, { $ref: '#/components/schemas/StandardWebhooksHeaders' });
    }

    for (const type of catalogue.types) {
        messages[`stream.${type.type}`] = message(type);
    }

    const channelMessages = (kind: string, types: typeof catalogue.types) => Object.fromEntries(types.map(({ type }) => [type, { $ref: `#/components/messages/${kind}.${type}` }]));
    const operationMessages = (channel: string, types: typeof catalogue.types) => types.map(({ type }) => ({ $ref: `#/channels/${channel}/messages/${type}` }));

    const channels: Record<string, JsonSchema> = {
        webhooks: {
            address: null,
            title: 'Webhooks',
            description: 'The URL of each endpoint a data set set (PUT /_webhooks, PUT /_instances/{instance_id}/webhooks), for the types it asked for. The address is the endpoint\'s own.',
            servers: [{ $ref: '#/servers/receiver' }],
            messages: channelMessages('webhook', delivered)
        }
    };
    const operations: Record<string, JsonSchema> = {
        sendWebhook: {
            action: 'send',
            channel: { $ref: '#/channels/webhooks' },
            title: 'Deliver an event to an endpoint',
            description: 'A POST of the event as JSON, signed as Standard Webhooks says, once the change that wrote it has committed. A 2xx answer within WEBHOOK_TIMEOUT_MS delivers it; anything else is retried on the data set\'s clock as the endpoint\'s retry_schedule says, with the same webhook-id, and after the last attempt given up (a webhook.delivery.given_up event, never delivered itself).',
            bindings: { http: { method: 'POST', bindingVersion: '0.3.0' } },
            messages: operationMessages('webhooks', delivered)
        }
    };

    for (const { key, address, what, parameters } of streams) {
        channels[key] = {
            address,
            title: `The event stream of ${what}`,
            description: `Server-Sent Events: each event as \`id: <event id>\`, \`event: <type>\` and \`data: <the event>\` lines, in the data set's order; a \`: heartbeat\` comment every 15 s. Resume after an event with the Last-Event-ID header or ?after=.`,
            servers: [streamServer],
            ...(parameters ? { parameters } : {}),
            messages: channelMessages('stream', catalogue.types)
        };
        operations[`${key}Events`] = {
            action: 'send',
            channel: { $ref: `#/channels/${key}` },
            title: `Stream the events of ${what}`,
            description: 'The answer to a GET with an admin token, text/event-stream, open until the client, the data set or the server ends it.',
            bindings: { http: { method: 'GET', query: facts.streamQuery, bindingVersion: '0.3.0' } },
            messages: operationMessages(key, catalogue.types)
        };
    }

    return {
        asyncapi: '3.0.0',
        info: {
            title: `${facts.title} events`,
            version: facts.version,
            description: 'What localgate sends without being asked: the webhooks of each data set\'s endpoints and its Server-Sent Events streams. Every message is an event `{id, type, created_at, data}`, its data the record as its owner reads it through the API (GET /_events/types lists the same schemas). The HTTP API is described by /openapi.json.'
        },
        defaultContentType: 'application/json',
        servers: {
            localgate: {
                host: '{host}',
                protocol: 'http',
                title: 'localgate',
                description: 'The server itself, where HOST and PORT put it',
                variables: { host: { default: '127.0.0.1:3000', description: 'HOST:PORT' } },
                // The streams take an admin token; the receivers, none but the signature.
                security: [{ $ref: '#/components/securitySchemes/adminToken' }]
            },
            receiver: {
                host: '{host}',
                protocol: 'http',
                title: 'A webhook receiver',
                description: 'The host of an endpoint\'s URL: one WEBHOOK_HOSTS allows (this machine, by default)',
                variables: { host: { default: '127.0.0.1:4000', description: 'The host and port of the endpoint\'s URL' } }
            }
        },
        channels,
        operations,
        components: {
            schemas: { ...catalogue.schemas, StandardWebhooksHeaders: webhookHeaders },
            messages,
            securitySchemes: {
                adminToken: {
                    type: 'http',
                    scheme: 'bearer',
                    bearerFormat: 'JWT',
                    description: 'A JWT signed by this localgate whose claims carry role "admin": `npx localgate token --admin` prints one'
                }
            }
        }
    };
}
