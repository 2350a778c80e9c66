import { DomainError } from '../errors';
import type { EventLog } from '../storage/engine';
import type { Event, StoredEvent, TypePattern } from '../outbox';


/**
 * A place in a data set's order across its event logs: after the event at `position` of the log at `rank` (its place
 * in namespace order). Two databases can hand out one position (PostgreSQL's sequence is per database), and namespace
 * order breaks the tie: an earlier log's event at the same position came before, a later log's came after.
 */
export interface Cursor {
    position: number;
    rank: number;
}

/** An event as a log read it, with the rank of its log. */
export interface RankedEvent {
    stored: StoredEvent;
    rank: number;
}

/** A page of a data set's events, and how many match after the cursor in all (this page included). */
export interface EventPage {
    data: Event[];
    total: number;
}

/** The event as the API shows it: its data parsed. */
export function eventOf(stored: StoredEvent): Event {

    return { id: stored.id, type: stored.type, created_at: stored.created_at, data: JSON.parse(stored.data) as Record<string, unknown> };
}


/** The position a log's reads start after, for a cursor: a later log's event at the cursor's position still follows it. */
export function afterIn(cursor: Cursor, rank: number): number {

    return rank > cursor.rank ? cursor.position - 1 : cursor.position;
}


/** Where the event with this id stands; none of the logs holds it (never written, or pruned) → 422 event_not_found naming `field`. */
export async function cursorOf(logs: readonly EventLog[], id: string, field: string): Promise<Cursor> {

    const positions = await Promise.all(logs.map((log) => log.positionOf(id)));
    for (const [rank, position] of positions.entries()) {
        if (position !== null) {
            return { position, rank };
        }
    }

    throw new DomainError('unprocessable', 'event_not_found', `${field} names no event this data set holds: it never existed, or it is older than the EVENTS_KEPT kept`, field);
}


/** The cursor after every event the logs hold now: what a stream with no cursor starts from. */
export async function lastCursor(logs: readonly EventLog[]): Promise<Cursor> {

    const positions = await Promise.all(logs.map((log) => log.lastPosition()));
    const position = Math.max(0, ...positions);
    // After the last log's event at that position: every log's event at it came before.
    return { position, rank: logs.length };
}


/** Events of the logs after each log's own position (null: from its oldest), in the data set's order, at most `limit`. */
export async function readMerged(logs: readonly EventLog[], after: (rank: number) => number | null, types: TypePattern[] | null, limit: number): Promise<RankedEvent[]> {

    const lists = await Promise.all(logs.map((log, rank) => log.list(after(rank), types, limit)));
    // In rank order before the sort, which is stable: events at one position stay in namespace order.
    const merged = lists.flatMap((list, rank) => list.map((stored) => ({ stored, rank })));
    merged.sort((a, b) => a.stored.position - b.stored.position);
    return merged.slice(0, limit);
}


// How many events of one log follow a position: a read bounded by what the log keeps (EVENTS_KEPT, and the events a
// delivery still waits for).
async function countAfter(log: EventLog, after: number | null, types: TypePattern[] | null): Promise<number> {

    return (await log.list(after, types, Number.MAX_SAFE_INTEGER)).length;
}


/** A page of the data set's events after an event id (null: from the oldest kept), of the types asked for (null: all). */
export async function listEvents(logs: readonly EventLog[], query: { after: string | null; types: TypePattern[] | null; limit: number }): Promise<EventPage> {

    const cursor = query.after === null ? null : await cursorOf(logs, query.after, 'after');
    const after = (rank: number) => (cursor ? afterIn(cursor, rank) : null);
    const [page, counts] = await Promise.all([
        readMerged(logs, after, query.types, query.limit),
        Promise.all(logs.map((log, rank) => countAfter(log, after(rank), query.types)))
    ]);
    return { data: page.map(({ stored }) => eventOf(stored)), total: counts.reduce((sum, count) => sum + count, 0) };
}
