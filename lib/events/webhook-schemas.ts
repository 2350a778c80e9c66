import Joi from 'joi';

import { clockTimestamp, optionalBody, recordId, requestBody, timestamp, wording } from '../fields';
import { listSchema, pageQuery } from '../lists';
import { keptBodyBytes, keptHeaderChars, keptHeaders } from '../data-set/deliveries';
import { secretKeyBytes } from '../signing';


export const maxEndpoints = 16;
export const maxRetries = 20;
export const maxUrlLength = 2048;

/** The default delays between attempts: eight attempts over about a day and a half. */
export const defaultRetrySchedule = ['5s', '5m', '30m', '2h', '5h', '10h', '10h'];


function escaped(text: string): string {

    return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}


// One pattern schema per list of types (eventTypesOf answers one list per list of namespaces).
const patternSchemas = new WeakMap<readonly string[], Joi.StringSchema>();

/** An event type of the list or a prefix pattern, refused in words that say what is accepted. */
export function typePatternSchema(types: readonly string[]): Joi.StringSchema {

    let schema = patternSchemas.get(types);
    if (!schema) {
        // Every type, and every prefix of one followed by *: what the document says a type pattern is, exactly.
        const prefixes = [...new Set(types.flatMap((type) => Array.from({ length: type.length }, (_, length) => type.slice(0, length))))];
        const typePatternRegex = new RegExp(`^(?:${[...types.map(escaped), `(?:${prefixes.map(escaped).join('|')})\\*`].join('|')})$`);
        schema = wording(Joi.string().max(100).pattern(typePatternRegex), {
            'string.pattern.base': '{{#label}} must be an event type (such as pay.transaction.completed) or a prefix ending with * that matches one (pay.*, *)'
        });
        patternSchemas.set(types, schema);
    }

    return schema;
}


// A duration of at most 7d in each unit: 604800000ms, 604800s, 10080m, 168h, 7d.
const durationRegex = /^(?:(?:\d{1,8}|[1-5]\d{8}|60[0-3]\d{6}|604[0-7]\d{5}|604800000)ms|(?:\d{1,5}|[1-5]\d{5}|60[0-3]\d{3}|604[0-7]\d{2}|604800)s|(?:\d{1,4}|100[0-7]\d|10080)m|(?:\d{1,2}|1[0-5]\d|16[0-8])h|[0-7]d)$/;

/** A duration of at most 7d: 500ms, 5s, 5m, 2h, 1d. */
export const duration = wording(Joi.string().max(20).pattern(durationRegex), {
    'string.pattern.base': '{{#label}} must be a duration of at most 7d, such as 500ms, 5s, 5m, 2h or 1d'
});

/** The bytes of a secret's key, 24 to 64, in base64 with its padding: 8 to 21 groups of four characters and what is left. */
export const secretRegex = /^whsec_(?:(?:[A-Za-z0-9+/]{4}){8,20}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?|(?:[A-Za-z0-9+/]{4}){21}(?:[A-Za-z0-9+/]{2}==)?)$/;

/** Whether a text is a secret Standard Webhooks reads: `whsec_` and the base64 of 24 to 64 bytes. */
export function isSecret(text: string): boolean {

    return secretRegex.test(text);
}


// 0 to 255.
const octet = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const port = '(?::(?:6553[0-5]|655[0-2]\\d|65[0-4]\\d{2}|6[0-4]\\d{3}|[1-5]\\d{4}|[1-9]\\d{0,3}))?';
// A path and a query of the characters a URL keeps as they are, and of percent-encoded bytes (`/hooks/a%20b`), as a
// receiver's route can need them.
const encoded = '%[0-9A-Fa-f]{2}';
const rest = `(?:/(?:[\\w.~!$&'()*+,;=:@/-]|${encoded})*)?(?:\\?(?:[\\w.~!$&'()*+,;=:@/?-]|${encoded})*)?`;


/** The URLs WEBHOOK_HOSTS allows, as a regular expression the document can say: http: or https:, a host it names (any 127.x.x.x when 127.0.0.1), no user name or password. */
export function webhookUrlRegex(hosts: readonly string[]): RegExp {

    const named = hosts.map((host) => (host.includes(':') ? `\\[${escaped(host)}\\]` : escaped(host)));
    const loopback = hosts.includes('127.0.0.1') ? [`127\\.${octet}\\.${octet}\\.${octet}`] : [];
    return new RegExp(`^https?://(?:${[...loopback, ...named].join('|')})${port}${rest}$`);
}


/** The body of PUT …/webhooks, the URLs checked against the hosts WEBHOOK_HOSTS allows. */
export function endpointsPayload(hosts: readonly string[], types: readonly string[]): Joi.ObjectSchema {

    const url = wording(Joi.string().max(maxUrlLength).pattern(webhookUrlRegex(hosts)), {
        'string.pattern.base': `{{#label}} must be an http: or https: URL without a user name or password, to a host WEBHOOK_HOSTS allows (${hosts.join(', ')}; any 127.x.x.x counts as 127.0.0.1): set WEBHOOK_HOSTS to allow another`
    });

    const endpoint = Joi.object({
        url: url.required().description('Where deliveries are POSTed: http: or https:, to a host WEBHOOK_HOSTS allows'),
        types: Joi.array().items(typePatternSchema(types)).max(types.length * 2).description('The event types sent, each a type or a prefix ending with *; every type when left out'),
        secret: wording(Joi.string().max(200).pattern(secretRegex), {
            'string.pattern.base': `{{#label}} must be whsec_ followed by the base64 of ${secretKeyBytes.min} to ${secretKeyBytes.max} bytes`
        }).description('The signing secret, whsec_<base64>; one is made when left out, and shown once, in this answer'),
        signing_clock: Joi.string().valid('wall', 'instance').default('wall').description('wall: webhook-timestamp is the wall clock as the attempt leaves; instance: the attempt\'s due instant on the data set\'s clock (repeatable runs)'),
        retry_schedule: Joi.array().items(duration).max(maxRetries).default(defaultRetrySchedule).description(`The delays after each failed attempt, ${maxRetries} at most, each at most 7d: one attempt more than delays in all`),
        disabled: Joi.boolean().default(false).description('true: the endpoint is paused, its deliveries wait (pending) until it is enabled')
    }).label('WebhookEndpointInput');

    return requestBody({
        endpoints: Joi.array().items(endpoint).max(maxEndpoints).required().description(`The endpoints, ${maxEndpoints} at most; they replace those there were`)
    }, 'WebhookEndpointsInput');
}


const endpointKeys = {
    id: Joi.string().required(),
    url: Joi.string().required(),
    types: Joi.array().items(Joi.string()).allow(null).required().description('As given; null: every type'),
    signing_clock: Joi.string().valid('wall', 'instance').required(),
    retry_schedule: Joi.array().items(Joi.string()).required().description('Each delay in its largest whole unit'),
    created_at: timestamp.required(),
    disabled: Joi.boolean().required().description('true: its deliveries wait (pending) until it is enabled'),
    disabled_reason: Joi.string().allow(null).required().description('paused: a client disabled it; given_up: it gave up WEBHOOK_DISABLE_AFTER deliveries in a row; null while enabled'),
    disabled_at: timestamp.allow(null).required().description('When it was disabled, on the data set\'s clock; null while enabled'),
    previous_secret_until: timestamp.allow(null).required().description('Until this instant of the data set\'s clock, the secret the last rotation replaced signs beside this one; null if it was never rotated')
};

const endpointSetKeys = {
    ...endpointKeys,
    secret: Joi.string().required().description('In full: this answer is the only one that shows it')
};

export const endpointsSetSchema = Joi.object({
    endpoints: Joi.array().items(Joi.object(endpointSetKeys).label('WebhookEndpointSet')).required()
}).label('WebhookEndpointsSet');

export const endpointSchema = Joi.object({
    ...endpointKeys,
    secret: Joi.string().required().description('Masked: whsec_********'),
    delivered: Joi.number().integer().min(0).required().description('Deliveries that succeeded'),
    failed: Joi.number().integer().min(0).required().description('Attempts that failed')
}).label('WebhookEndpoint');

export const endpointsSchema = Joi.object({
    endpoints: Joi.array().items(endpointSchema).required()
}).label('WebhookEndpoints');

/** A rotation's answer: the endpoint with its new secret in full. */
export const endpointRotatedSchema = Joi.object(endpointSetKeys).label('WebhookEndpointRotated');

export const endpointParams = Joi.object({
    endpoint_id: recordId.required().description('Endpoint id')
});

export const eventParams = Joi.object({
    event_id: recordId.required().description('Event id')
});

/** The body of PATCH …/webhooks/{endpoint_id}. */
export const endpointChangePayload = requestBody({
    disabled: Joi.boolean().required().description('true pauses the endpoint (its deliveries wait, pending); false enables it, and what waited goes in due order')
}, 'WebhookEndpointChange');

export const defaultRotationOverlap = '24h';

/** The body of POST …/webhooks/{endpoint_id}/rotate; none takes the default overlap. */
export const rotatePayload = optionalBody(requestBody({
    overlap: duration.default(defaultRotationOverlap).description(`How long, on the data set's clock, the old secret signs beside the new one (at most 7d; ${defaultRotationOverlap} when left out; 0s: not at all)`)
}, 'WebhookRotation'));

/** The body of POST …/events/{event_id}/resend; none sends to every endpoint the event's type matches. */
export const resendPayload = optionalBody(requestBody({
    endpoint_id: recordId.description('The endpoint to send it to; left out, each endpoint whose types match the event\'s')
}, 'WebhookResend'));

/** The body of POST …/webhooks/{endpoint_id}/recover. */
export const recoverPayload = requestBody({
    since: clockTimestamp().required().description('An ISO 8601 UTC instant: the deliveries of events created from then on (the data set\'s clock) are sent again')
}, 'WebhookRecover');


// One side of an attempt as the delivery journal keeps it.
function keptMessageSchema(label: string, what: string): Joi.ObjectSchema {

    return Joi.object({
        headers: Joi.object().pattern(Joi.string(), Joi.string()).required().description(`${what}: the first ${keptHeaders} headers, names in lower case, each name and value cut at ${keptHeaderChars} characters, credentials [hidden]`),
        body: Joi.string().allow('').required().description(`The first ${keptBodyBytes} bytes of the body, as UTF-8 text, credentials [hidden]`),
        body_truncated: Joi.boolean().required().description(`Whether the body was longer than ${keptBodyBytes} bytes`)
    }).allow(null).required().label(label);
}


export const deliverySchema = Joi.object({
    id: Joi.string().required().description('<webhook_id>.<attempt>'),
    event_id: Joi.string().required(),
    type: Joi.string().required(),
    webhook_id: Joi.string().required().description('The webhook-id header: the same for every attempt of one event to one endpoint'),
    endpoint_id: Joi.string().required(),
    url: Joi.string().required(),
    attempt: Joi.number().integer().min(1).required(),
    at: timestamp.required().description('The attempt\'s instant on the data set\'s clock'),
    status: Joi.number().integer().allow(null).required().description('The receiver\'s status; null when there was none'),
    duration_ms: Joi.number().integer().min(0).required(),
    error: Joi.string().allow(null).required().description('timeout, connection_refused, connection_reset, host_not_found, host_not_allowed, connection_failed or dropped (a fault rule)'),
    fault: Joi.string().allow(null).required().description('The id of the outbound fault rule that acted on the attempt'),
    next_attempt_at: timestamp.allow(null).required().description('When it is tried again; null when delivered or given up'),
    request: keptMessageSchema('WebhookAttemptRequest', 'What the attempt sent').description('What the attempt sent: its headers and the start of its body; null when nothing left (a fault rule dropped it before, a host WEBHOOK_HOSTS does not allow)'),
    response: keptMessageSchema('WebhookAttemptResponse', 'What the receiver answered').description('The receiver\'s headers and the start of its body; null when no answer came')
}).label('WebhookDelivery');

export const deliveryListQuery = Joi.object(pageQuery);

export const deliveryListSchema = listSchema(deliverySchema, 'WebhookDeliveryList');

// One pattern payload per list of types.
const patternPayloads = new WeakMap<readonly string[], Joi.ObjectSchema>();

/** The pattern of attempts a find or count matches, its type one of the list's or a prefix of one. */
export function deliveryPatternPayload(types: readonly string[]): Joi.ObjectSchema {

    let payload = patternPayloads.get(types);
    if (payload) {
        return payload;
    }

    payload = requestBody({
        type: typePatternSchema(types).description('An event type, or a prefix ending with *'),
        status: Joi.number().integer().min(100).max(599).allow(null).description('The receiver\'s status; null: attempts with none'),
        attempt: Joi.number().integer().min(1).max(maxRetries + 1),
        endpoint_id: recordId,
        webhook_id: recordId
    }, 'WebhookDeliveryPattern');
    patternPayloads.set(types, payload);
    return payload;
}

export const deliveryCountSchema = Joi.object({
    count: Joi.number().integer().min(0).required()
}).label('WebhookDeliveryCount');

export const deliveryFindSchema = Joi.object({
    deliveries: Joi.array().items(deliverySchema).required()
}).label('WebhookDeliveryMatches');

export const flushSchema = Joi.object({
    attempted: Joi.number().integer().min(0).required().description('The attempts made')
}).label('WebhookFlush');

export const attemptedSchema = Joi.object({
    attempted: Joi.number().integer().min(0).required().description('The attempts made, once each was answered, failed or timed out')
}).label('WebhookAttempted');
