import { typePattern, undeliveredPrefix, type AttemptOutcome, type DisabledReason, type EventType, type SigningClock, type StoredEndpoint, type StoredEvent } from '../outbox';


// What both engines' event logs do alike, written once: the SQL of an event's deliveries and of a prune (each engine
// passes how it writes its parameters), when a write prunes, and an endpoint as its row holds it.

/** How many events a database keeps by default (EVENTS_KEPT), besides those with a delivery still pending. */
export const defaultEventsKept = 10_000;

// A write that carries a database's positions past a multiple of this prunes it.
const pruneEvery = 100;


/** What a store hands the writer: an event's type, its instant and the record it announces. */
export interface NewEvent {
    type: EventType;
    created_at: string;
    data: object;
}


/**
 * The events a namespace announces, typed by what it declares: `Data` maps each of its event types (its descriptor's
 * `eventTypes` keys) to the record that type carries, and an event of a type carries that record.
 */
export type AnnouncedEvent<Data> = { [Type in keyof Data & string]: { type: Type; created_at: string; data: Data[Type] & object } }[keyof Data & string];


/**
 * Whether the write of the event at `position` prunes its database, whose last event was at `floor`. Positions are
 * shared by the data set's databases (on PostgreSQL, by the namespaces of one server database), so one database's
 * positions skip: it prunes each time its own positions pass a multiple, whichever position that is.
 */
export function prunes(position: number, floor: number): boolean {

    return Math.floor(position / pruneEvery) > Math.floor(floor / pruneEvery);
}


/**
 * The INSERT … SELECT of an event's deliveries: one per endpoint whose patterns match its type, due at once; none for
 * the dispatcher's own events. The arguments are how the engine writes the parameters.
 */
export function insertDeliveries(position: string, type: string, dueAt: string): string {

    return `INSERT INTO webhook_deliveries (event_position, endpoint_id, due_at)
        SELECT ${position}, e.id, ${dueAt} FROM webhook_endpoints e
        WHERE substr(${type}, 1, ${undeliveredPrefix.length}) <> '${undeliveredPrefix}' AND (e.types IS NULL OR EXISTS (SELECT 1 FROM webhook_endpoint_types t
            WHERE t.endpoint_id = e.id AND (t.pattern = ${type} OR (t.prefix = 1 AND substr(${type}, 1, length(t.pattern)) = t.pattern))))`;
}


/** The DELETE of the events before a position, except those with a delivery still pending (their deliveries go with them). */
export function pruneEvents(before: string): string {

    return `DELETE FROM events WHERE position < ${before}
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_position = events.position AND d.state = 'pending')`;
}


/** A delivery due, as a claim reads it in one statement: its event, its endpoint, the attempts made and when the next fell due. */
export interface DueRow {
    position: number;
    endpoint_id: string;
    attempts: number;
    due_at: string;
    event_id: string;
    type: EventType;
    created_at: string;
    data: string;
}


/** The event a claimed delivery's row carries. */
export function dueEvent(row: DueRow): StoredEvent {

    return { position: row.position, id: row.event_id, type: row.type, created_at: row.created_at, data: row.data };
}


/** The state a delivery is left in by an attempt's outcome: delivered, given up after the last, else pending again. */
export function deliveryState(outcome: AttemptOutcome): 'delivered' | 'given_up' | 'pending' {

    if (outcome.delivered) {
        return 'delivered';
    }

    return outcome.next_due_at === null ? 'given_up' : 'pending';
}


/** The columns of a webhook endpoint, in the order of its table. */
export const endpointColumns = ['id', 'ordinal', 'url', 'types', 'secret', 'signing_clock', 'retry_schedule', 'created_at', 'delivered', 'failed',
    'disabled_at', 'disabled_reason', 'given_up_in_a_row', 'previous_secret', 'previous_secret_until'] as const;

/**
 * What a replacement changes on an endpoint it keeps: all it was given but its counts (deliveries, failures and those
 * given up in a row), which the endpoint's history holds. Each engine writes `excluded` the same way.
 */
export const endpointUpsert = `ON CONFLICT (id) DO UPDATE SET ordinal = excluded.ordinal, url = excluded.url, types = excluded.types, secret = excluded.secret,
            signing_clock = excluded.signing_clock, retry_schedule = excluded.retry_schedule, disabled_at = excluded.disabled_at,
            disabled_reason = excluded.disabled_reason, previous_secret = excluded.previous_secret, previous_secret_until = excluded.previous_secret_until`;

/** Disables or enables an endpoint: `disabled_at` and `disabled_reason` both null enables it. The arguments are how the engine writes the parameters. */
export function setDisabled(id: string, at: string, reason: string): string {

    return `UPDATE webhook_endpoints SET disabled_at = ${at}, disabled_reason = ${reason} WHERE id = ${id}`;
}

/**
 * Sets the deliveries an endpoint gave up in a row, and disables it (reason given_up, at `disableAt`) when `disableAt`
 * is not null and it is enabled.
 */
export function setGivenUpInARow(id: string, count: string, disableAt: string): string {

    return `UPDATE webhook_endpoints SET given_up_in_a_row = ${count},
            disabled_reason = CASE WHEN ${disableAt} IS NOT NULL AND disabled_at IS NULL THEN 'given_up' ELSE disabled_reason END,
            disabled_at = CASE WHEN disabled_at IS NULL THEN ${disableAt} ELSE disabled_at END
        WHERE id = ${id}`;
}

/** Rotates an endpoint's secret: the one it had signs beside the new one until `until`. */
export function rotateSecret(id: string, secret: string, until: string): string {

    return `UPDATE webhook_endpoints SET previous_secret = secret, secret = ${secret}, previous_secret_until = ${until} WHERE id = ${id}`;
}

/**
 * Makes the failed (pending after an attempt) and given-up deliveries of an endpoint whose events are from an instant
 * on due at once again, except one in flight (leased past now); answers their events' positions.
 */
export function recoverDeliveries(endpointId: string, since: string, dueAt: string, now: string): string {

    return `UPDATE webhook_deliveries SET state = 'pending', due_at = ${dueAt}
        WHERE endpoint_id = ${endpointId} AND (state = 'given_up' OR (state = 'pending' AND attempts > 0))
            AND (leased_until IS NULL OR leased_until <= ${now})
            AND event_position IN (SELECT position FROM events WHERE created_at >= ${since})
        RETURNING event_position`;
}

/** A webhook endpoint as its row holds it: its patterns as given and its schedule, as JSON. */
export interface EndpointRow {
    id: string;
    ordinal: number;
    url: string;
    types: string | null;
    secret: string;
    signing_clock: SigningClock;
    retry_schedule: string;
    created_at: string;
    delivered: number;
    failed: number;
    disabled_at: string | null;
    disabled_reason: DisabledReason | null;
    given_up_in_a_row: number;
    previous_secret: string | null;
    previous_secret_until: string | null;
}


/** The row of an endpoint. */
export function endpointRow(endpoint: StoredEndpoint): EndpointRow {

    return {
        ...endpoint,
        types: endpoint.types && JSON.stringify(endpoint.types.map(({ pattern, prefix }) => (prefix ? `${pattern}*` : pattern))),
        retry_schedule: JSON.stringify(endpoint.retry_schedule)
    };
}


/** The endpoint a row holds. */
export function storedEndpoint(row: EndpointRow): StoredEndpoint {

    const types = row.types === null ? null : (JSON.parse(row.types) as string[]).map(typePattern);
    return { ...row, types, retry_schedule: JSON.parse(row.retry_schedule) as number[] };
}
