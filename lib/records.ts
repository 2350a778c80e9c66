import { DomainError } from './errors';


// What every namespace store shares, whatever its engine: lookups that must find a row, and the order of new records.


// Every namespace words a missing record the same way: 404 "There is no booking with this id",
// 422 "vehicle_id refers to no existing vehicle".

/** The row a lookup found; none is a 404 with the code `<kind>_not_found`. */
export function found<T>(row: T | undefined, kind: string): T {

    if (!row) {
        throw new DomainError('not_found', `${kind}_not_found`, `There is no ${kind.replace(/_/g, ' ')} with this id`);
    }

    return row;
}


/** The row a body field refers to; none is a 422 with the code `<kind>_not_found` that names the field. */
export function referenced<T>(row: T | undefined, kind: string, field: string): T {

    if (!row) {
        throw new DomainError('unprocessable', `${kind}_not_found`, `${field} refers to no existing ${kind.replace(/_/g, ' ')}`, field);
    }

    return row;
}


/**
 * The created_at of a new record: now, but never at or before the newest record it is listed with, so that it sorts
 * after every one of them even when the clock steps back, stands still or two records share a millisecond (oldest-first
 * paging then never repeats or skips).
 */
export function nextCreatedAt(latest: string | null | undefined, now: Date): string {

    const time = now.getTime();
    return new Date(latest ? Math.max(time, Date.parse(latest) + 1) : time).toISOString();
}
