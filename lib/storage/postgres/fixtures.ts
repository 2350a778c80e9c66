import { excludes, FixtureError, refuseChanged, refuseOverlap, sameRow, storedRefusal, type FixtureRow, type FixtureRows, type OverlappedRow } from '../../fixtures';
import type { FixturePosting, Placeholder } from '../../namespace';
import { overlapQuery, postedInOrder, storedRowQuery, uniqueColumns } from '../fixture-sql';
import type { SeedCheck, StoredRows } from '../engine';
import { always } from '../../always';
import type { PgDatabase, Runner } from './database';
import { engineError, sqlState } from './errors';
import { lockMigrations } from './migrate';


/**
 * Stores a namespace's fixture rows on the connection of a transaction: every reference must name a row that exists
 * (loaded earlier or already there); a row whose id exists already is left as it is (in a collection
 * that must match what is stored, only when it holds the same); any other
 * failure names the record, and the caller's transaction rolls the whole load back. Returns the rows added.
 */
export async function insertFixtureRows(tx: Runner, fixture: FixtureRows): Promise<{ collection: string; record: FixtureRow }[]> {

    const added: { collection: string; record: FixtureRow }[] = [];
    for (const { collection, exclusion, matchStored, rows } of fixture) {
        for (const record of rows) {
            const { where, origin, row, references } = record;
            for (const [field, table, id] of references) {
                if (!await tx.row({ name: '', text: `SELECT 1 FROM "${table}" WHERE id = $1` }, id)) {
                    throw new FixtureError(`${origin}: ${where}.${field}: ${JSON.stringify(id)} names no record of ${table}`, `${where}.${field}`);
                }
            }

            // Checked before the insert, so that the refusal names the record rather than the exclusion constraint.
            if (excludes(exclusion, row)) {
                const other = await tx.row<unknown[], OverlappedRow>({ name: '', text: overlapQuery(collection, exclusion, parameter) }, row[exclusion.key], exclusion.unless[1], row[exclusion.to], row[exclusion.from], row.id);
                refuseOverlap(record, exclusion, other);
            }

            const names = Object.keys(row);
            const text = `INSERT INTO "${collection}" (${names.map((name) => `"${name}"`).join(', ')}) VALUES (${names.map((_, index) => `$${index + 1}`).join(', ')})
                ON CONFLICT (id) DO NOTHING RETURNING 1`;
            if ((await fixtureWrite(tx, record, collection, () => tx.rows({ name: '', text }, ...Object.values(row)))).length) {
                added.push({ collection, record });
            }
            // The insert added nothing: a row of this id is stored.
            else if (matchStored && !sameRow(row, always(await tx.row<unknown[], Record<string, unknown>>({ name: '', text: storedRowQuery(collection, parameter) }, row.id), `the stored row of ${collection}`))) {
                refuseChanged(record, collection);
            }
        }
    }

    return added;
}


const parameter: Placeholder = (n) => `$${n}`;


// Runs one write of a fixture's record: a constraint it breaks is a refusal naming the record (and, for a unique key,
// the field); any other failure is the engine's. The caller's transaction rolls back.
async function fixtureWrite<T>(tx: Runner, record: FixtureRow, collection: string, write: () => Promise<T>): Promise<T> {

    try {
        return await write();
    }
    catch (err) {
        // Integrity constraints are class 23.
        const state = String(sqlState(err));
        if (!state.startsWith('23')) {
            throw engineError(err);
        }

        // PostgreSQL names the columns of a unique key broken in its detail: Key (license_number)=(…) already exists.
        const columns = state === '23505' ? uniqueColumns(err, 'detail', /^Key \(([^)]+)\)=/) : null;
        throw storedRefusal(record, columns, collection);
    }
}


/** Runs a namespace's posting for the rows a fixture added, in the load's transaction; nothing without a posting. */
export async function postFixtureRows(tx: Runner, added: { collection: string; record: FixtureRow }[], posting: FixturePosting | undefined): Promise<void> {

    if (!posting) {
        return;
    }

    const statements = posting.statements(parameter);
    for (const record of postedInOrder(added, posting)) {
        for (const [name, params] of posting.steps(record.row)) {
            await fixtureWrite(tx, record, posting.collection, () => tx.rows({ name: '', text: always(statements[name], `the statement ${name} of the posting`) }, ...params));
        }
    }
}


/** Every row of each table in list order, read in one snapshot. */
export function exportRows(db: PgDatabase, tables: string[]): Promise<StoredRows> {

    return db.transaction(async (tx) => {

        await tx.exec('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
        const rows: StoredRows = {};
        for (const table of tables) {
            rows[table] = await tx.rows<[], Record<string, unknown>>({ name: '', text: `SELECT * FROM "${table}" ORDER BY created_at, id` });
        }

        return rows;
    });
}


/**
 * True when a seed's rows may load in this transaction: none of the tables they fill holds a row yet. The first
 * transaction of a seed takes the migration lock before it looks, so that a process seeding the database at the same
 * time waits until this seed is committed, then finds its rows. The nested ones do not: on other connections of this
 * process, they would wait for the first one's lock forever.
 */
export async function seedMayLoad(tx: Runner, fixture: FixtureRows, seed: SeedCheck): Promise<boolean> {

    if (seed === 'first') {
        await lockMigrations(tx);
    }

    return collectionsEmpty(tx, fixture.map(({ collection }) => collection));
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
