import Joi from 'joi';

import { hostAllowed, urlHost } from '../data-set/sender';
import { recordId, requestBody, timestamp, wording } from '../fields';
import { durationMs } from '../instances/schemas';
import { listSchema, pageQuery } from '../lists';
import { eventTypes } from './model';
import { isSecret, secretKeyBytes } from './signing';


export const maxEndpoints = 16;
export const maxRetries = 20;
export const maxUrlLength = 2048;

// The longest delay between two attempts.
const maxDelayMs = 7 * 86_400_000;

/** The default delays between attempts: eight attempts over about a day and a half. */
export const defaultRetrySchedule = ['5s', '5m', '30m', '2h', '5h', '10h', '10h'];


/** Whether a text names event types: a listed type, or a prefix ending with * that matches at least one. */
export function isTypePattern(text: string): boolean {

    return text.endsWith('*') ? eventTypes.some((type) => type.startsWith(text.slice(0, -1))) : eventTypes.some((type) => type === text);
}


/** An event type or a prefix pattern, refused in words that say what is accepted. */
export const typePatternSchema = wording(Joi.string().max(100).custom((value: string, helpers) => (isTypePattern(value) ? value : helpers.error('type.unknown'))), {
    'type.unknown': '{{#label}} must be an event type (such as pay.transaction.completed) or a prefix ending with * that matches one (pay.*, *)'
});


const duration = wording(Joi.string().max(20).pattern(/^\d+(?:ms|[smhd])$/).custom((value: string, helpers) => (durationMs(value) <= maxDelayMs ? value : helpers.error('duration.long'))), {
    'string.pattern.base': '{{#label}} must be a duration such as 500ms, 5s, 5m, 2h or 1d',
    'duration.long': '{{#label}} must be at most 7d'
});


/** The body of PUT …/webhooks, the URLs checked against the hosts WEBHOOK_HOSTS allows. */
export function endpointsPayload(hosts: readonly string[]): Joi.ObjectSchema {

    const url = wording(Joi.string().max(maxUrlLength).uri({ scheme: ['http', 'https'] }).custom((value: string, helpers) => {

        const parsed = new URL(value);
        if (parsed.username !== '' || parsed.password !== '') {
            return helpers.error('url.credentials');
        }

        return hostAllowed(urlHost(parsed), hosts) ? value : helpers.error('url.host', { host: urlHost(parsed) });
    }), {
        'string.uri': '{{#label}} must be an http: or https: URL',
        'string.uriCustomScheme': '{{#label}} must be an http: or https: URL',
        'url.credentials': '{{#label}} must not carry a user name or password: sign deliveries with the secret instead',
        'url.host': `{{#label}} names the host {{#host}}, which WEBHOOK_HOSTS does not allow (it allows ${hosts.join(', ')}): set WEBHOOK_HOSTS to add it`
    });

    const endpoint = Joi.object({
        url: url.required().description('Where deliveries are POSTed: http: or https:, to a host WEBHOOK_HOSTS allows'),
        types: Joi.array().items(typePatternSchema).max(eventTypes.length * 2).description('The event types sent, each a type or a prefix ending with *; every type when left out'),
        secret: wording(Joi.string().max(200).custom((value: string, helpers) => (isSecret(value) ? value : helpers.error('secret.format'))), {
            'secret.format': `{{#label}} must be whsec_ followed by the base64 of ${secretKeyBytes.min} to ${secretKeyBytes.max} bytes`
        }).description('The signing secret, whsec_<base64>; one is made when left out, and shown once, in this answer'),
        signing_clock: Joi.string().valid('wall', 'instance').default('wall').description('wall: webhook-timestamp is the wall clock as the attempt leaves; instance: the attempt\'s due instant on the data set\'s clock (repeatable runs)'),
        retry_schedule: Joi.array().items(duration).max(maxRetries).default(defaultRetrySchedule).description(`The delays after each failed attempt, ${maxRetries} at most, each at most 7d: one attempt more than delays in all`)
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
    created_at: timestamp.required()
};

export const endpointsSetSchema = Joi.object({
    endpoints: Joi.array().items(Joi.object({
        ...endpointKeys,
        secret: Joi.string().required().description('In full: this answer is the only one that shows it')
    }).label('WebhookEndpointSet')).required()
}).label('WebhookEndpointsSet');

export const endpointsSchema = Joi.object({
    endpoints: Joi.array().items(Joi.object({
        ...endpointKeys,
        secret: Joi.string().required().description('Masked: whsec_********'),
        delivered: Joi.number().integer().min(0).required().description('Deliveries that succeeded'),
        failed: Joi.number().integer().min(0).required().description('Attempts that failed')
    }).label('WebhookEndpoint')).required()
}).label('WebhookEndpoints');

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
    next_attempt_at: timestamp.allow(null).required().description('When it is tried again; null when delivered or given up')
}).label('WebhookDelivery');

export const deliveryListQuery = Joi.object(pageQuery);

export const deliveryListSchema = listSchema(deliverySchema, 'WebhookDeliveryList');

export const deliveryPatternPayload = requestBody({
    type: typePatternSchema.description('An event type, or a prefix ending with *'),
    status: Joi.number().integer().min(100).max(599).allow(null).description('The receiver\'s status; null: attempts with none'),
    attempt: Joi.number().integer().min(1).max(maxRetries + 1),
    endpoint_id: recordId,
    webhook_id: recordId
}, 'WebhookDeliveryPattern');

export const deliveryCountSchema = Joi.object({
    count: Joi.number().integer().min(0).required()
}).label('WebhookDeliveryCount');

export const deliveryFindSchema = Joi.object({
    deliveries: Joi.array().items(deliverySchema).required()
}).label('WebhookDeliveryMatches');

export const flushSchema = Joi.object({
    attempted: Joi.number().integer().min(0).required().description('The attempts made')
}).label('WebhookFlush');
