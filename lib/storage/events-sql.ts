import { typePattern, undeliveredPrefix, type AttemptOutcome, type EventType, type SigningClock, type StoredEndpoint, type StoredEvent } from '../events/model';


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
export const endpointColumns = ['id', 'ordinal', 'url', 'types', 'secret', 'signing_clock', 'retry_schedule', 'created_at', 'delivered', 'failed'] as const;

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
