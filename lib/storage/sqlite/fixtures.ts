import type Sqlite from 'better-sqlite3';

import { FixtureError, type FixtureRows } from '../../fixtures';
import { demoData } from '../demo';
import type { Database } from './open';


/**
 * Stores a namespace's fixture rows in one immediate transaction: every reference must name a row that exists (loaded
 * earlier or already there); a row whose id exists already is left as it is; any other failure rolls the whole load
 * back and names the record. `within` runs inside the transaction, last: a throw there rolls this load back too.
 * Returns the number of rows added.
 */
export function storeFixtureRows(db: Database, fixture: FixtureRows, within: () => void = () => undefined): number {

    const statements = new Map<string, Sqlite.Statement>();
    const prepared = (sql: string) => {

        let statement = statements.get(sql);
        if (!statement) {
            statement = db.prepare(sql);
            statements.set(sql, statement);
        }

        return statement;
    };

    return db.transaction(() => {

        let inserted = 0;
        for (const { collection, rows } of fixture) {
            for (const { where, origin, row, references } of rows) {
                for (const [field, table, id] of references) {
                    if (!prepared(`SELECT 1 FROM "${table}" WHERE id = ?`).get(id)) {
                        throw new FixtureError(`${origin}: ${where}.${field}: ${JSON.stringify(id)} names no record of ${table}`, `${where}.${field}`);
                    }
                }

                const names = Object.keys(row);
                const sql = `INSERT INTO "${collection}" (${names.map((name) => `"${name}"`).join(', ')}) VALUES (${names.map(() => '?').join(', ')}) ON CONFLICT (id) DO NOTHING`;
                try {
                    inserted += prepared(sql).run(...Object.values(row)).changes;
                }
                catch (err) {
                    throw new FixtureError(`${origin}: ${where}: ${(err as Error).message}`, where);
                }
            }
        }

        within();
        return inserted;
    }).immediate();
}


/** True when none of the collections has a row yet: a database that was never seeded. */
export function collectionsEmpty(db: Database, collections: string[]): boolean {

    return collections.every((collection) => !db.prepare(`SELECT 1 FROM "${collection}" LIMIT 1`).get());
}


/** Loads the shipped demo data of a namespace into a database that has none of it yet; returns the rows added. */
export function seedDemo(db: Database, namespace: string): number {

    const demo = demoData(namespace);
    if (!demo || !collectionsEmpty(db, Object.keys(demo.collections))) {
        return 0;
    }

    return storeFixtureRows(db, demo.rows());
}
