import type { Statement } from 'better-sqlite3';

import type { Database } from './db';
import { DomainError } from './errors';


// What every namespace store shares: an asynchronous interface over synchronous SQLite work.

export type Statements<Queries> = Record<keyof Queries, Statement>;


/** Runs synchronous store work behind the store's asynchronous interface: a throw becomes a rejection. */
export function settled<T>(work: () => T): Promise<T> {

    return new Promise((resolve) => resolve(work()));
}


/** The row a lookup found; none is a 404 with the code `<kind>_not_found` and the given message. */
export function found<T>(row: T | undefined, kind: string, message: string): T {

    if (!row) {
        throw new DomainError('not_found', `${kind}_not_found`, message);
    }

    return row;
}


/** The row a body field refers to; none is a 422 with the code `<kind>_not_found` that names the field. */
export function referenced<T>(row: T | undefined, kind: string, field: string, message: string): T {

    if (!row) {
        throw new DomainError('unprocessable', `${kind}_not_found`, message, field);
    }

    return row;
}


/** Prepares every query of a store once, under the same names. */
export function prepareQueries<Queries extends Record<string, string>>(db: Database, queries: Queries): Statements<Queries> {

    const entries = Object.entries(queries).map(([name, sql]) => [name, db.prepare(sql)]);
    return Object.fromEntries(entries) as Statements<Queries>;
}


/**
 * The created_at of a new record: now, but never at or before the newest record it is listed with, so that it sorts
 * after every one of them even when the clock steps back or two records share a millisecond (oldest-first paging
 * then never repeats or skips).
 */
export function nextCreatedAt(latest: string | null | undefined): string {

    const now = Date.now();
    return new Date(latest ? Math.max(now, Date.parse(latest) + 1) : now).toISOString();
}
