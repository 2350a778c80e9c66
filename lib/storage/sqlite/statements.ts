import type { Statement } from 'better-sqlite3';

import type { Database } from './open';
import { engineError } from './errors';


/** An SQL text that carries the types of its parameters and of each row it reads (a plucked value for pluck()). */
export type Query<Params extends unknown[], Row> = string & { readonly types?: [Params, Row] };

/** The prepared statements of a set of queries, typed by them. */
export type Statements<Queries> = { [Name in keyof Queries]: Queries[Name] extends Query<infer Params, infer Row> ? Statement<Params, Row> : never };


/** Marks an SQL text with the types of its parameters and rows: the statement prepared from it takes and gives those. */
export function sql<Params extends unknown[] = [], Row = never>(text: string): Query<Params, Row> {

    return text;
}


/** Runs synchronous store work behind the store's asynchronous interface: a throw becomes a rejection, and an SQLite failure a domain error. */
export function settled<T>(work: () => T): Promise<T> {

    return new Promise((resolve) => {

        try {
            resolve(work());
        }
        catch (err) {
            throw engineError(err);
        }
    });
}


// One prototype per query set, whose getters prepare a statement on first use and keep it on the object.
const prototypes = new WeakMap<object, object>();


/**
 * The statements of a store, each prepared on first use and kept: a new instance's databases cost nothing until a
 * request reads them, and statements a request never runs are never prepared.
 */
export function lazyStatements<Queries extends Record<string, string>>(db: Database, queries: Queries): Statements<Queries> {

    let prototype = prototypes.get(queries);
    if (!prototype) {
        prototype = {};
        for (const [name, text] of Object.entries(queries)) {
            Object.defineProperty(prototype, name, {
                get(this: { db: Database }) {

                    const statement = this.db.prepare(text);
                    Object.defineProperty(this, name, { value: statement });
                    return statement;
                }
            });
        }

        prototypes.set(queries, prototype);
    }

    return Object.create(prototype, { db: { value: db } }) as Statements<Queries>;
}
