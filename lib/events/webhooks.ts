import type { Plugin, Request, Server } from '@hapi/hapi';
import type Joi from 'joi';

import { requireAdmin } from '../auth';
import { DomainError } from '../errors';
import { noContent, optionalBody } from '../fields';
import { liveInstance } from '../instances/lookup';
import type { InstanceRegistry } from '../instances/registry';
import { durationMs, instanceParams } from '../instances/schemas';
import { listResponse, type Page } from '../lists';
import type { Scope } from '../scope';
import type { EventLog } from '../storage/engine';
import { matchesDelivery, type DeliveryEntry, type DeliveryPattern } from './deliveries';
import type { Claimed } from '../data-set/dispatcher';
import { matchesType, typePattern, undeliveredPrefix, type ClaimedAttempt, type DisabledReason, type SigningClock, type StoredEndpoint, type StoredEvent, type TypePattern } from './model';
import { maskedSecret, mintSecret } from './signing';
import { attemptedSchema, deliveryCountSchema, deliveryFindSchema, deliveryListQuery, deliveryListSchema, deliveryPatternPayload, endpointChangePayload, endpointParams, endpointRotatedSchema, endpointSchema, endpointsPayload, endpointsSchema, endpointsSetSchema, eventParams, flushSchema, recoverPayload, resendPayload, rotatePayload } from './webhook-schemas';


/** An endpoint as PUT …/webhooks takes it, defaults applied. */
export interface EndpointInput {
    url: string;
    types?: string[];
    secret?: string;
    signing_clock: SigningClock;
    retry_schedule: string[];
    disabled: boolean;
}

/** An endpoint as a caller gives it: url, and what it leaves out takes its default. */
export type WebhookEndpointInput = Pick<EndpointInput, 'url' | 'types' | 'secret'> & Partial<Pick<EndpointInput, 'signing_clock' | 'retry_schedule' | 'disabled'>>;

/** An endpoint as set: its secret in full, shown this once. */
export interface WebhookEndpointSet {
    id: string;
    url: string;
    // As given; null: every type.
    types: string[] | null;
    secret: string;
    signing_clock: SigningClock;
    retry_schedule: string[];
    created_at: string;
    disabled: boolean;
    disabled_reason: DisabledReason | null;
    disabled_at: string | null;
    previous_secret_until: string | null;
}

/** An endpoint as read back: its secret masked, and its deliveries that succeeded and attempts that failed. */
export interface WebhookEndpointRead extends WebhookEndpointSet {
    delivered: number;
    failed: number;
}

/** The webhooks of each data set, for the test kit. */
export interface WebhooksApi {
    /** The body of PUT …/webhooks, with the hosts WEBHOOK_HOSTS allows. */
    payload: Joi.ObjectSchema;
    /** Replaces a data set's endpoints (none removes them); the input has passed payload. */
    set(scope: Scope, endpoints: EndpointInput[]): Promise<{ endpoints: WebhookEndpointSet[] }>;
    /** A data set's endpoints, secrets masked, with their counts. */
    get(scope: Scope): Promise<{ endpoints: WebhookEndpointRead[] }>;
    /** The attempts a data set made that a pattern matches (it has passed deliveryPatternPayload), in the order they were made. */
    find(scope: Scope, pattern: DeliveryPattern): DeliveryEntry[];
    /** Pauses (true) or enables an endpoint, answering it as read back; a 404 endpoint_not_found when there is none. */
    update(scope: Scope, endpointId: string, change: { disabled: boolean }): Promise<WebhookEndpointRead>;
    /** Gives an endpoint a new secret, the old one signing beside it for `overlap` (a duration) of the data set's clock; answers it with the new secret. */
    rotate(scope: Scope, endpointId: string, overlap: string): Promise<WebhookEndpointSet>;
    /** Makes a new attempt of an event now to each endpoint it matches, or to the one named; answers how many were made. */
    resend(scope: Scope, eventId: string, endpointId?: string): Promise<{ attempted: number }>;
    /** Sends again each failed or given-up delivery to an endpoint of the events from `since` on (a normalized instant); answers how many attempts were made. */
    recover(scope: Scope, endpointId: string, since: string): Promise<{ attempted: number }>;
}

const pluginName = 'localgate-webhooks';

declare module '@hapi/hapi' {
    interface PluginProperties {
        [pluginName]: WebhooksApi;
    }
}

const tags = ['api', 'instances'];

const durationUnitsMs: [string, number][] = [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]];


/** A delay in its largest whole unit, as an endpoint's retry_schedule reads back: 300000 is 5m, 1500 is 1500ms. */
export function delayText(ms: number): string {

    const [unit, size] = durationUnitsMs.find(([, unitMs]) => ms > 0 && ms % unitMs === 0) ?? ['ms', 1];
    return `${ms / size}${unit}`;
}


function patternText({ pattern, prefix }: TypePattern): string {

    return prefix ? `${pattern}*` : pattern;
}


// How an endpoint reads back, its secret as the caller may see it.
function shown(endpoint: StoredEndpoint, secret: string): WebhookEndpointSet {

    return {
        id: endpoint.id,
        url: endpoint.url,
        types: endpoint.types && endpoint.types.map(patternText),
        secret,
        signing_clock: endpoint.signing_clock,
        retry_schedule: endpoint.retry_schedule.map(delayText),
        created_at: endpoint.created_at,
        disabled: endpoint.disabled_at !== null,
        disabled_reason: endpoint.disabled_reason,
        disabled_at: endpoint.disabled_at,
        previous_secret_until: endpoint.previous_secret_until
    };
}


/** Replaces a data set's endpoints in each of its event logs; answers them with their secrets in full. */
async function setEndpoints(scope: Scope, inputs: EndpointInput[]): Promise<{ endpoints: WebhookEndpointSet[] }> {

    const createdAt = scope.services.clock.now().toISOString();
    const endpoints = inputs.map(({ disabled, ...input }, ordinal): StoredEndpoint => {

        return {
            id: scope.services.ids.endpointId(),
            ordinal,
            url: input.url,
            types: input.types ? input.types.map(typePattern) : null,
            secret: input.secret ?? mintSecret(),
            signing_clock: input.signing_clock,
            retry_schedule: input.retry_schedule.map(durationMs),
            created_at: createdAt,
            delivered: 0,
            failed: 0,
            disabled_at: disabled ? createdAt : null,
            disabled_reason: disabled ? 'paused' : null,
            given_up_in_a_row: 0,
            previous_secret: null,
            previous_secret_until: null
        };
    });

    const logs = await scope.data.eventLogs();
    for (const log of logs) {
        await log.replaceEndpoints(endpoints);
    }

    return { endpoints: endpoints.map((endpoint) => shown(endpoint, endpoint.secret)) };
}


/** A data set's endpoints, secrets masked, with their counts summed over its event logs. */
async function readEndpoints(scope: Scope): Promise<{ endpoints: WebhookEndpointRead[] }> {

    const logs = await scope.data.eventLogs();
    const read = await Promise.all(logs.map((log) => log.endpoints()));
    const [first = []] = read;
    return {
        endpoints: first.map((endpoint) => {

            const counted = read.flat().filter(({ id }) => id === endpoint.id);
            return {
                ...shown(endpoint, maskedSecret),
                delivered: counted.reduce((sum, { delivered }) => sum + delivered, 0),
                failed: counted.reduce((sum, { failed }) => sum + failed, 0)
            };
        })
    };
}


function endpointNotFound(id: string, field: string, kind: 'not_found' | 'unprocessable'): DomainError {

    return new DomainError(kind, 'endpoint_not_found', `There is no webhook endpoint ${JSON.stringify(id)} in this data set (GET …/webhooks lists them)`, field);
}


// One endpoint as its first event log holds it, or a 404 naming the path's endpoint_id.
async function storedEndpointOf(scope: Scope, endpointId: string): Promise<StoredEndpoint> {

    // Each event log holds the same endpoints: the first one's say.
    const firsts = await Promise.all((await scope.data.eventLogs()).slice(0, 1).map((log) => log.endpoints()));
    const endpoint = firsts.flat().find(({ id }) => id === endpointId);
    if (!endpoint) {
        throw endpointNotFound(endpointId, 'endpoint_id', 'not_found');
    }

    return endpoint;
}


// One endpoint as read back, with its counts.
async function readEndpoint(scope: Scope, endpointId: string): Promise<WebhookEndpointRead> {

    await storedEndpointOf(scope, endpointId);
    return (await readEndpoints(scope)).endpoints.find(({ id }) => id === endpointId)!;
}


/** Pauses or enables an endpoint in each event log; enabled, what waited for it is sent in due order. */
async function updateEndpoint(scope: Scope, endpointId: string, { disabled }: { disabled: boolean }): Promise<WebhookEndpointRead> {

    const current = await storedEndpointOf(scope, endpointId);
    // Pausing a disabled endpoint keeps why and when it was disabled.
    if (disabled !== (current.disabled_at !== null)) {
        const change = disabled ? { at: scope.services.clock.now().toISOString(), reason: 'paused' as const } : null;
        for (const log of await scope.data.eventLogs()) {
            await log.setDisabled(endpointId, change);
        }

        if (!disabled) {
            scope.services.dispatcher.notice();
        }
    }

    return await readEndpoint(scope, endpointId);
}


/** Gives an endpoint a new secret in each event log; the old one signs beside it until the overlap ends. */
async function rotateEndpoint(scope: Scope, endpointId: string, overlap: string): Promise<WebhookEndpointSet> {

    await storedEndpointOf(scope, endpointId);
    const secret = mintSecret();
    const until = new Date(scope.services.clock.now().getTime() + durationMs(overlap)).toISOString();
    for (const log of await scope.data.eventLogs()) {
        await log.rotateSecret(endpointId, secret, until);
    }

    return shown(await storedEndpointOf(scope, endpointId), secret);
}


// The event with this id and the log that holds it, or a 404 naming the path's event_id.
async function findEvent(scope: Scope, eventId: string): Promise<{ log: EventLog; event: StoredEvent }> {

    for (const log of await scope.data.eventLogs()) {
        const position = await log.positionOf(eventId);
        const [event] = position === null ? [] : await log.list(position - 1, null, 1);
        if (event) {
            return { log, event };
        }
    }

    throw new DomainError('not_found', 'event_not_found', `There is no event ${JSON.stringify(eventId)} in this data set: never written, or older than the EVENTS_KEPT kept`, 'event_id');
}


/** Makes a new attempt of one event now, as the route says. */
async function resendEvent(scope: Scope, eventId: string, endpointId?: string): Promise<{ attempted: number }> {

    const { log, event } = await findEvent(scope, eventId);

    if (event.type.startsWith(undeliveredPrefix)) {
        throw new DomainError('unprocessable', 'event_not_delivered', `${event.type} events are listed and streamed, never delivered: there is no delivery to send again`, 'event_id');
    }

    const endpoints = await log.endpoints();
    const named = endpointId === undefined ? null : endpoints.find(({ id }) => id === endpointId) ?? endpointNotFound(endpointId, 'endpoint_id', 'unprocessable');
    if (named instanceof DomainError) {
        throw named;
    }

    if (named && !matchesType(event.type, named.types)) {
        throw new DomainError('unprocessable', 'event_type_not_matched', `The endpoint ${JSON.stringify(named.id)} does not ask for ${event.type} events: its types (PUT …/webhooks) say which it gets`, 'endpoint_id');
    }

    const targets = named ? [named] : endpoints.filter(({ types }) => matchesType(event.type, types));
    const dueAt = scope.services.clock.now();
    const attempted = await scope.services.dispatcher.attemptNow(async (leaseUntil) => claimedFrom(log, await log.resend(event.position, targets.map(({ id }) => id), dueAt, leaseUntil)));
    return { attempted };
}


/** Sends again what failed or was given up to an endpoint since an instant, as the route says. */
async function recoverEndpoint(scope: Scope, endpointId: string, since: string): Promise<{ attempted: number }> {

    await storedEndpointOf(scope, endpointId);
    const logs = await scope.data.eventLogs();
    const dueAt = scope.services.clock.now();
    const attempted = await scope.services.dispatcher.attemptNow(async (leaseUntil) => {

        const claimed: Claimed[] = [];
        for (const log of logs) {
            claimed.push(...claimedFrom(log, await log.recover(endpointId, since, dueAt, leaseUntil)));
        }

        return claimed;
    });

    return { attempted };
}


function claimedFrom(log: EventLog, attempts: ClaimedAttempt[]): Claimed[] {

    return attempts.map((attempt) => ({ log, attempt }));
}


// The attempts a data set made that a pattern matches.
function findDeliveries(scope: Scope, pattern: DeliveryPattern): DeliveryEntry[] {

    return scope.services.deliveries.list().filter((entry) => matchesDelivery(entry, pattern));
}


/** The webhooks of a server's data sets, as its webhooks plugin exposes them. */
export function webhooksOf(server: Server): WebhooksApi {

    return server.plugins[pluginName];
}


/** The webhook routes of the default data set (/_webhooks…) and of each instance (/_instances/{id}/webhooks…). */
export const webhooksPlugin: Plugin<{ registry: InstanceRegistry; hosts: readonly string[] }> = {
    name: pluginName,
    register(server, { registry, hosts }) {

        const targets = [
            { path: '/_webhooks', events: '/_events', scope: (request: Pick<Request, 'app' | 'params'>) => request.app.scope, params: undefined, what: 'the default data set' },
            { path: '/_instances/{instance_id}/webhooks', events: '/_instances/{instance_id}/events', scope: (request: Pick<Request, 'app' | 'params'>) => liveInstance(registry, (request.params as { instance_id: string }).instance_id), params: instanceParams, what: 'an instance' }
        ];

        const payload = endpointsPayload(hosts);
        for (const target of targets) {
            endpointRoutes(server, target, payload);
            endpointStateRoutes(server, target);
            deliveryRoutes(server, target);
        }

        const api: WebhooksApi = { payload, set: setEndpoints, get: readEndpoints, find: findDeliveries, update: updateEndpoint, rotate: rotateEndpoint, resend: resendEvent, recover: recoverEndpoint };
        server.expose(api);
    }
};


interface Target {
    path: string;
    // The data set's events, whose resend lives here.
    events: string;
    scope: (request: Pick<Request, 'app' | 'params'>) => Scope;
    params: typeof instanceParams | undefined;
    what: string;
}

const admin = { ext: { onPostAuth: { method: requireAdmin } } };


function endpointRoutes(server: Server, { path, scope, params, what }: Target, payload: ReturnType<typeof endpointsPayload>): void {

    server.route<{ Payload: { endpoints: EndpointInput[] } }>({
        method: 'PUT',
        path,
        options: {
            description: `Replace the webhook endpoints of ${what}`,
            notes: [
                'Admin token required. Each event of the types an endpoint asks for is POSTed to it, signed as Standard Webhooks says',
                '(webhook-id, webhook-timestamp, webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">), and retried on the data set\'s clock',
                'after each failed attempt as retry_schedule says, then given up (a webhook.delivery.given_up event). The answer is the only one that shows the secrets in full.',
                'Deliveries pending to the endpoints replaced are dropped.'
            ].join(' '),
            tags,
            ...admin,
            validate: { params, payload },
            response: { status: { 200: endpointsSetSchema } },
            handler: (request) => setEndpoints(scope(request), request.payload.endpoints)
        }
    });

    server.route({
        method: 'GET',
        path,
        options: {
            description: `Read the webhook endpoints of ${what}, with their counts`,
            notes: 'Admin token required. Secrets read whsec_********: the PUT that set them answered them once.',
            tags,
            ...admin,
            validate: { params },
            response: { status: { 200: endpointsSchema } },
            handler: (request) => readEndpoints(scope(request))
        }
    });

    server.route({
        method: 'DELETE',
        path,
        options: {
            description: `Remove the webhook endpoints of ${what}, and the deliveries pending to them`,
            tags,
            ...admin,
            validate: { params },
            response: { status: { 204: noContent } },
            async handler(request, h) {

                await setEndpoints(scope(request), []);
                return h.response().code(204);
            }
        }
    });

    server.route({
        method: 'POST',
        path: `${path}/flush`,
        options: {
            description: `Make every webhook attempt of ${what} due at its clock's instant`,
            notes: 'Admin token required. Answers once each attempt has been made (answered, failed or timed out), with how many were.',
            tags,
            ...admin,
            validate: { params },
            response: { status: { 200: flushSchema } },
            handler: async (request) => ({ attempted: await scope(request).services.dispatcher.flush() })
        }
    });
}


// The params of a route under one endpoint or one event: the target's own and the id.
function paramsWith(params: Target['params'], own: Joi.ObjectSchema): Joi.ObjectSchema {

    return params ? params.concat(own) : own;
}


function endpointStateRoutes(server: Server, { path, events, scope, params, what }: Target): void {

    const endpointPath = `${path}/{endpoint_id}`;
    const withEndpoint = paramsWith(params, endpointParams);
    const notFound = { 404: 'endpoint_not_found: endpoint_id names no endpoint of the data set' };
    const attemptsNotes = 'Answers once each attempt has been made (answered, failed or timed out), with how many were, as flush does. An attempt counts on from the delivery\'s last (a failure is retried as the endpoint\'s retry_schedule says from there, and given up past its end); a disabled endpoint\'s deliveries are made due and wait, pending, until it is enabled (not counted); a delivery in flight is left to its attempt.';

    server.route<{ Params: { endpoint_id: string }; Payload: { disabled: boolean } }>({
        method: 'PATCH',
        path: endpointPath,
        options: {
            description: `Pause or enable a webhook endpoint of ${what}`,
            notes: 'Admin token required. disabled: true pauses it: its deliveries stay pending, neither claimed nor attempted (disabled_reason paused). false enables it, whether a client paused it or it gave up WEBHOOK_DISABLE_AFTER deliveries in a row (disabled_reason given_up): what waited is sent at once, in due order. Answers the endpoint as GET reads it.',
            tags,
            ...admin,
            plugins: { localgate: { errors: notFound } },
            validate: { params: withEndpoint, payload: endpointChangePayload },
            response: { status: { 200: endpointSchema } },
            handler: (request) => updateEndpoint(scope(request), request.params.endpoint_id, request.payload)
        }
    });

    server.route<{ Params: { endpoint_id: string }; Payload: { overlap: string } }>({
        method: 'POST',
        path: `${endpointPath}/rotate`,
        options: {
            description: `Give a webhook endpoint of ${what} a new secret`,
            notes: 'Admin token required. Mints a new secret and answers the endpoint with it in full (the only answer that shows it). Until previous_secret_until (now plus overlap, on the data set\'s clock) every attempt is signed with both, webhook-signature: v1,<old> v1,<new>, so that a receiver that knows either verifies while it rolls its secret; then with the new one only. A rotation during an overlap ends it: the secret it replaces is the one before it.',
            tags,
            ...admin,
            plugins: { localgate: { errors: notFound } },
            validate: { params: withEndpoint, payload: rotatePayload },
            response: { status: { 200: endpointRotatedSchema } },
            handler: (request) => rotateEndpoint(scope(request), request.params.endpoint_id, request.payload.overlap)
        }
    });

    server.route<{ Params: { endpoint_id: string }; Payload: { since: string } }>({
        method: 'POST',
        path: `${endpointPath}/recover`,
        options: {
            description: `Send again the failed and given-up deliveries to a webhook endpoint of ${what}`,
            notes: `Admin token required. Each delivery to the endpoint whose event was created at or after since (the data set's clock), failed (waiting for its next attempt) or given up, gets a new attempt now, the same webhook-id, in due order. ${attemptsNotes}`,
            tags,
            ...admin,
            plugins: { localgate: { errors: notFound } },
            validate: { params: withEndpoint, payload: recoverPayload },
            response: { status: { 200: attemptedSchema } },
            handler: (request) => recoverEndpoint(scope(request), request.params.endpoint_id, request.payload.since)
        }
    });

    server.route<{ Params: { event_id: string }; Payload: { endpoint_id?: string } }>({
        method: 'POST',
        path: `${events}/{event_id}/resend`,
        options: {
            description: `Send one event of ${what} again to its webhook endpoints`,
            notes: `Admin token required. A new attempt now of the event to each endpoint whose types match it, or to endpoint_id only, with the same webhook-id as its earlier attempts; an endpoint set after the event gets its first. ${attemptsNotes} No endpoint matching answers attempted 0.`,
            tags,
            ...admin,
            plugins: {
                localgate: {
                    errors: {
                        404: 'event_not_found: event_id names no event the data set holds: never written, or older than the EVENTS_KEPT kept',
                        422: 'event_not_delivered (a webhook.* event, which is never delivered), endpoint_not_found (endpoint_id names no endpoint) or event_type_not_matched (the endpoint named does not ask for the event\'s type)'
                    }
                }
            },
            validate: { params: paramsWith(params, eventParams), payload: resendPayload },
            response: { status: { 200: attemptedSchema } },
            handler: (request) => resendEvent(scope(request), request.params.event_id, request.payload.endpoint_id)
        }
    });
}


function deliveryRoutes(server: Server, { path, scope, params, what }: Target): void {

    const deliveries = `${path}/deliveries`;
    const patternNotes = 'Admin token required. The body is a pattern: type (an event type, or a prefix ending with *), status (the receiver\'s, or null for none), attempt, endpoint_id, webhook_id; each one given must match, and an empty body matches every attempt.';
    const find = (request: Pick<Request, 'app' | 'params'>, pattern: DeliveryPattern) => findDeliveries(scope(request), pattern);

    server.route<{ Query: Page }>({
        method: 'GET',
        path: deliveries,
        options: {
            description: `The webhook attempts ${what} made`,
            notes: 'Admin token required. In the order they were made, at most JOURNAL_SIZE kept (the oldest dropped), in memory only.',
            tags,
            ...admin,
            validate: { params, query: deliveryListQuery },
            response: { status: { 200: deliveryListSchema } },
            handler(request, h) {

                const { limit, offset } = request.query;
                const kept = scope(request).services.deliveries.list();
                return listResponse(h, { data: kept.slice(offset, offset + limit), total: kept.length });
            }
        }
    });

    server.route<{ Payload: DeliveryPattern }>({
        method: 'POST',
        path: `${deliveries}/count`,
        options: {
            description: `Count the webhook attempts ${what} made that match a pattern`,
            notes: patternNotes,
            tags,
            ...admin,
            validate: { params, payload: optionalBody(deliveryPatternPayload) },
            response: { status: { 200: deliveryCountSchema } },
            handler: (request) => ({ count: find(request, request.payload).length })
        }
    });

    server.route<{ Payload: DeliveryPattern }>({
        method: 'POST',
        path: `${deliveries}/find`,
        options: {
            description: `Find the webhook attempts ${what} made that match a pattern`,
            notes: patternNotes,
            tags,
            ...admin,
            validate: { params, payload: optionalBody(deliveryPatternPayload) },
            response: { status: { 200: deliveryFindSchema } },
            handler: (request) => ({ deliveries: find(request, request.payload) })
        }
    });

    server.route({
        method: 'DELETE',
        path: deliveries,
        options: {
            description: `Forget the webhook attempts ${what} made`,
            tags,
            ...admin,
            validate: { params },
            response: { status: { 204: noContent } },
            handler(request, h) {

                scope(request).services.deliveries.clear();
                return h.response().code(204);
            }
        }
    });
}
