import type Joi from 'joi';

import { durationTextMs, parseDurationMs } from '../durations';
import { DomainError } from '../errors';
import type { Scope } from '../scope';
import type { EventLog } from '../storage/engine';
import { matchesDelivery, type DeliveryEntry, type DeliveryPattern } from '../data-set/deliveries';
import type { Claimed } from '../data-set/leases';
import { matchesType, typePattern, undeliveredPrefix, type ClaimedAttempt, type DisabledReason, type SigningClock, type StoredEndpoint, type StoredEvent, type TypePattern } from '../outbox';
import { maskedSecret, mintSecret } from '../signing';
import { deliveryPatternPayload, endpointsPayload } from './webhook-schemas';
import { always } from '../always';


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
    /** The body of a find or count of attempts, its type one of the server's event types or a prefix of one. */
    pattern: Joi.ObjectSchema;
    /** The attempts a data set made that a pattern matches (it has passed pattern), in the order they were made. */
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
        retry_schedule: endpoint.retry_schedule.map(durationTextMs),
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
            retry_schedule: input.retry_schedule.map(parseDurationMs),
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
    return always((await readEndpoints(scope)).endpoints.find(({ id }) => id === endpointId), `endpoint ${endpointId} read back`);
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
    const until = new Date(scope.services.clock.now().getTime() + parseDurationMs(overlap)).toISOString();
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


/** The webhooks of each data set, their endpoints' hosts those WEBHOOK_HOSTS allows and their types the server's event types. */
export function webhooksService(hosts: readonly string[], types: readonly string[]): WebhooksApi {

    return { payload: endpointsPayload(hosts, types), pattern: deliveryPatternPayload(types), set: setEndpoints, get: readEndpoints, find: findDeliveries, update: updateEndpoint, rotate: rotateEndpoint, resend: resendEvent, recover: recoverEndpoint };
}
