import Crypto from 'node:crypto';

import type { Namespace } from './namespace';


/**
 * The event types a data set writes are the registered namespaces' (`eventTypes` of each descriptor), named
 * `<namespace>.<record>.<what happened>`, and the dispatcher's own, written when a delivery is given up.
 */
export type EventType = string;

/** The event types the events feature writes itself, beside those of the namespaces. */
export const ownEventTypeNames: readonly EventType[] = ['webhook.delivery.given_up'];

// One list per list of namespaces: every schema built from it is built once.
const typeLists = new WeakMap<readonly Pick<Namespace, 'eventTypes'>[], readonly EventType[]>();

/** Every event type a server of these namespaces writes: each namespace's in the list's order, then the feature's own. */
export function eventTypesOf(namespaces: readonly Pick<Namespace, 'eventTypes'>[]): readonly EventType[] {

    let types = typeLists.get(namespaces);
    if (!types) {
        types = [...namespaces.flatMap((namespace) => Object.keys(namespace.eventTypes ?? {})), ...ownEventTypeNames];
        typeLists.set(namespaces, types);
    }

    return types;
}

/** Events of these types are listed and streamed but never delivered: a receiver that is down would be sent news of its own failure. */
export const undeliveredPrefix = 'webhook.';

/** An event as the API shows it. */
export interface Event {
    id: string;
    type: EventType;
    created_at: string;
    data: Record<string, unknown>;
}

/** An event as a namespace's database holds it: its place in the data set's order, and its data as JSON text. */
export interface StoredEvent {
    position: number;
    id: string;
    type: EventType;
    created_at: string;
    data: string;
}

/** A type an endpoint or a query asks for: one type, or with `prefix` every type that starts with `pattern` (`pay.*` is `pay.`). */
export interface TypePattern {
    pattern: string;
    prefix: boolean;
}

/** Reads `pay.transaction.completed` or `pay.*` (a trailing `*` matches a prefix; `*` alone, every type). */
export function typePattern(text: string): TypePattern {

    return text.endsWith('*') ? { pattern: text.slice(0, -1), prefix: true } : { pattern: text, prefix: false };
}

/** Whether a type matches one of the patterns; no patterns match every type. */
export function matchesType(type: string, patterns: readonly TypePattern[] | null): boolean {

    return patterns === null || patterns.some(({ pattern, prefix }) => (prefix ? type.startsWith(pattern) : type === pattern));
}

export type SigningClock = 'wall' | 'instance';

/** Why an endpoint is disabled: a client paused it, or it gave up WEBHOOK_DISABLE_AFTER deliveries in a row. */
export type DisabledReason = 'paused' | 'given_up';

/** A webhook endpoint as each event-writing database of the data set holds it. */
export interface StoredEndpoint {
    id: string;
    // Its place in the list the endpoints were set with.
    ordinal: number;
    url: string;
    // Null: every type.
    types: TypePattern[] | null;
    secret: string;
    signing_clock: SigningClock;
    // The delays after each failed attempt, in milliseconds: one attempt more than delays in all.
    retry_schedule: number[];
    created_at: string;
    // Deliveries that succeeded, and attempts that failed, in this database.
    delivered: number;
    failed: number;
    // Null while enabled: a disabled endpoint's deliveries stay pending.
    disabled_at: string | null;
    disabled_reason: DisabledReason | null;
    // Deliveries given up since its last delivery, the same in each database.
    given_up_in_a_row: number;
    // The secret a rotation replaced, signing beside the new one until previous_secret_until (the data set's clock).
    previous_secret: string | null;
    previous_secret_until: string | null;
}

/**
 * An attempt claimed for sending: the event, its endpoint, which attempt (1 for the first), the instant it fell due and
 * the lease its claim took (the wall clock).
 */
export interface ClaimedAttempt {
    event: StoredEvent;
    endpoint: StoredEndpoint;
    attempt: number;
    due_at: string;
    leased_until: string;
}

/** A claimed attempt's hold on its delivery: the delivery, the attempt it makes and the lease it holds now. */
export interface HeldLease {
    position: number;
    endpoint_id: string;
    attempt: number;
    leased_until: string;
}

/**
 * What became of an attempt: delivered, or failed with the next attempt due at `next_due_at`, or failed for the last
 * time (`next_due_at` null), when `given_up` is the `webhook.delivery.given_up` event to write in the same transaction.
 */
export interface AttemptOutcome {
    position: number;
    endpoint_id: string;
    attempt: number;
    delivered: boolean;
    next_due_at: string | null;
    given_up: { created_at: string; data: Record<string, unknown> } | null;
}

/** The secrets an attempt at `at` (the data set's clock) is signed with: the one a rotation replaced while its overlap lasts, then the endpoint's own. */
export function signingSecrets(endpoint: Pick<StoredEndpoint, 'secret' | 'previous_secret' | 'previous_secret_until'>, at: Date): string[] {

    // A rotation sets both, and nothing sets one alone.
    const overlapping = endpoint.previous_secret_until !== null && at.getTime() < Date.parse(endpoint.previous_secret_until);
    const secrets = overlapping ? [endpoint.previous_secret, endpoint.secret] : [endpoint.secret];
    return secrets.filter((secret): secret is string => secret !== null);
}


/**
 * The `webhook-id` of an event's delivery to an endpoint: the same on every attempt (the body is the stored event), and
 * another for any other event, endpoint or body, so that no two bodies share one across the data sets of a process
 * (a fork's events repeat its source's ids and its endpoints may repeat their ids).
 */
export function webhookId(eventId: string, endpointId: string, body: string): string {

    return `msg_${Crypto.createHash('sha256').update(`${eventId}\n${endpointId}\n${body}`).digest('base64url').slice(0, 26)}`;
}
