import { FixtureError, type FixtureRows } from '../../fixtures';
import type { Runner } from './database';
import { engineError } from './errors';


/**
 * Stores a namespace's fixture rows on the connection of a transaction: every reference must name a row that exists
 * (loaded earlier or already there); a row whose id exists already is left as it is; any other failure names the
 * record, and the caller's transaction rolls the whole load back. Returns the number of rows added.
 */
export async function insertFixtureRows(tx: Runner, fixture: FixtureRows): Promise<number> {

    let inserted = 0;
    for (const { collection, rows } of fixture) {
        for (const { where, origin, row, references } of rows) {
            for (const [field, table, id] of references) {
                if (!await tx.row({ name: '', text: `SELECT 1 FROM "${table}" WHERE id = $1` }, id)) {
                    throw new FixtureError(`${origin}: ${where}.${field}: ${JSON.stringify(id)} names no record of ${table}`, `${where}.${field}`);
                }
            }

            const names = Object.keys(row);
            const text = `INSERT INTO "${collection}" (${names.map((name) => `"${name}"`).join(', ')}) VALUES (${names.map((_, index) => `$${index + 1}`).join(', ')})
                ON CONFLICT (id) DO NOTHING RETURNING 1`;
            try {
                inserted += (await tx.rows({ name: '', text }, ...Object.values(row))).length;
            }
            catch (err) {
                const known = engineError(err);
                throw known === err ? new FixtureError(`${origin}: ${where}: ${(err as Error).message}`, where) : known;
            }
        }
    }

    return inserted;
}


/** True when none of the collections has a row yet: a schema never seeded. */
export async function collectionsEmpty(tx: Runner, collections: string[]): Promise<boolean> {

    for (const collection of collections) {
        if (await tx.row({ name: '', text: `SELECT 1 FROM "${collection}" LIMIT 1` })) {
            return false;
        }
    }

    return true;
}
