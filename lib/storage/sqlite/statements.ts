import type { Statement } from 'better-sqlite3';

import type { Database } from './open';
import { engineError } from './errors';


export type Statements<Queries> = Record<keyof Queries, Statement>;


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
        for (const [name, sql] of Object.entries(queries)) {
            Object.defineProperty(prototype, name, {
                get(this: { db: Database }) {

                    const statement = this.db.prepare(sql);
                    Object.defineProperty(this, name, { value: statement });
                    return statement;
                }
            });
        }

        prototypes.set(queries, prototype);
    }

    return Object.create(prototype, { db: { value: db } }) as Statements<Queries>;
}
