import type { Clock } from './record-context';
import { DomainError } from './errors';
import { isRecord } from './fixtures';


// What every namespace store shares, whatever its engine: lookups that must find a row, and the order of new records.


// Every namespace words a missing record the same way: 404 "There is no booking with this id",
// 422 "vehicle_id refers to no existing vehicle".

/** The row a lookup found; none is a 404 with the code `<kind>_not_found`. */
export function one<T>(row: T | undefined, kind: string): T {

    if (!row) {
        throw new DomainError('not_found', `${kind}_not_found`, `There is no ${kind.replace(/_/g, ' ')} with this id`);
    }

    return row;
}


/** `one`, under the name the stores import it by. */
export const found = one;


/** The row a lookup found, or null when it found none (a driver's undefined): what a store answers for an optional record. */
export function maybe<T>(row: T | undefined): T | null {

    return row ?? null;
}


/** The rows of a query that declares no row type (`SELECT *` of a table a fixture names), as records of their columns. */
export function many(rows: unknown[]): Record<string, unknown>[] {

    return rows.filter(isRecord);
}


/** The row a body field refers to; none is a 422 with the code `<kind>_not_found` that names the field. */
export function referenced<T>(row: T | undefined, kind: string, field: string): T {

    if (!row) {
        throw new DomainError('unprocessable', `${kind}_not_found`, `${field} refers to no existing ${kind.replace(/_/g, ' ')}`, field);
    }

    return row;
}


/**
 * The instant a write reads as now: the frozen instant while the clock stands still, else the database server's
 * time where the engine reads one (one clock for every process), else the clock's.
 */
export function recordNow(clock: Clock, serverTime?: string): Date {

    return clock.frozen === null && serverTime ? new Date(serverTime) : clock.now();
}


/**
 * The created_at of a new record. While the clock stands still it is exactly the frozen instant, however many records
 * are made (the id then breaks ties). Otherwise it is now, but never at or before `latest`, the newest record it is
 * listed with, so that it sorts after every one of them even when the clock steps back or two records share a
 * millisecond (oldest-first paging then never repeats or skips).
 */
export function createdAt(clock: Clock, latest?: string | null, serverTime?: string): string {

    if (clock.frozen !== null) {
        return clock.frozen;
    }

    const time = recordNow(clock, serverTime).getTime();
    return new Date(latest ? Math.max(time, Date.parse(latest) + 1) : time).toISOString();
}
