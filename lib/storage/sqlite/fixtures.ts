import type Sqlite from 'better-sqlite3';

import { excludes, FixtureError, refuseChanged, refuseOverlap, sameRow, storedRefusal, type FixtureRow, type FixtureRows, type OverlappedRow } from '../../fixtures';
import { errnoCode } from '../../errno';
import { overlapQuery, postedInOrder, storedRowQuery, uniqueColumns } from '../fixture-sql';
import type { FixturePosting, NamespaceSchema, Placeholder } from '../../namespace';
import { demoData } from '../demo';
import type { SeedCheck, StoredRows } from '../engine';
import { always } from '../../always';
import { engineError } from './errors';
import type { Database } from './open';


/**
 * Stores a namespace's fixture rows in one immediate transaction: every reference must name a row that exists (loaded
 * earlier or already there); a row whose id exists already is left as it is (in a collection
 * that must match what is stored, only when it holds the same); any other failure
 * rolls the whole load back and names the record. `post` runs next with the rows added, then `within`, last: a throw
 * there rolls this load back too. Returns the number of rows added; for a seed, null when a table it fills holds a row
 * (checked in the transaction, which holds the write lock: another process seeding waits, then finds the rows).
 */
export function storeFixtureRows(db: Database, fixture: FixtureRows, store?: Omit<FixtureStore, 'seed'>): number;
export function storeFixtureRows(db: Database, fixture: FixtureRows, store: FixtureStore): number | null;
export function storeFixtureRows(db: Database, fixture: FixtureRows, { within = () => undefined, post = () => undefined, seed }: FixtureStore = {}): number | null {

    // Each text is prepared once per load, kept by the type of row it reads.
    const writes = new Map<string, Sqlite.Statement<unknown[], unknown>>();
    const overlaps = new Map<string, Sqlite.Statement<unknown[], OverlappedRow>>();
    const storedRows = new Map<string, Sqlite.Statement<unknown[], Record<string, unknown>>>();

    return db.transaction(() => {

        if (seed && !collectionsEmpty(db, fixture.map(({ collection }) => collection))) {
            return null;
        }

        const added: StoredFixtureRow[] = [];
        for (const { collection, exclusion, matchStored, rows } of fixture) {
            for (const record of rows) {
                const { where, origin, row, references } = record;
                for (const [field, table, id] of references) {
                    if (!prepared(db, writes, `SELECT 1 FROM "${table}" WHERE id = ?`).get(id)) {
                        throw new FixtureError(`${origin}: ${where}.${field}: ${JSON.stringify(id)} names no record of ${table}`, `${where}.${field}`);
                    }
                }

                if (excludes(exclusion, row)) {
                    const other = prepared(db, overlaps, overlapQuery(collection, exclusion, parameter)).get(row[exclusion.key], exclusion.unless[1], row[exclusion.to], row[exclusion.from], row.id);
                    refuseOverlap(record, exclusion, other);
                }

                const names = Object.keys(row);
                const sql = `INSERT INTO "${collection}" (${names.map((name) => `"${name}"`).join(', ')}) VALUES (${names.map(() => '?').join(', ')}) ON CONFLICT (id) DO NOTHING`;
                if (fixtureWrite(record, collection, () => prepared(db, writes, sql).run(...Object.values(row)).changes)) {
                    added.push({ collection, record });
                }
                // The insert did nothing: a row of this id is stored.
                else if (matchStored && !sameRow(row, always(prepared(db, storedRows, storedRowQuery(collection, parameter)).get(row.id), `the stored row of ${collection}`))) {
                    refuseChanged(record, collection);
                }
            }
        }

        post(added);
        within();
        return added.length;
    }).immediate();
}


/** What runs in a fixture's transaction beside the rows: `post` with the rows added, then `within`; and a seed's check. */
export interface FixtureStore {
    within?: () => void;
    post?: (added: StoredFixtureRow[]) => void;
    seed?: SeedCheck;
}


/** A row a fixture load added, with its collection. */
export interface StoredFixtureRow {
    collection: string;
    record: FixtureRow;
}


const parameter: Placeholder = () => '?';


// The statement of an SQL text from a load's cache of statements that read one type of row, prepared on first use.
function prepared<Row>(db: Database, statements: Map<string, Sqlite.Statement<unknown[], Row>>, sql: string): Sqlite.Statement<unknown[], Row> {

    let statement = statements.get(sql);
    if (!statement) {
        statement = db.prepare<unknown[], Row>(sql);
        statements.set(sql, statement);
    }

    return statement;
}


// Runs one write of a fixture's record: a constraint it breaks is a refusal naming the record (and, for a unique key,
// the field); any other failure is the engine's.
function fixtureWrite<T>(record: FixtureRow, collection: string, write: () => T): T {

    try {
        return write();
    }
    catch (err) {
        const code = String(errnoCode(err));
        if (!code.startsWith('SQLITE_CONSTRAINT')) {
            throw engineError(err);
        }

        // SQLite names the columns of a unique key broken: UNIQUE constraint failed: drivers.license_number
        const columns = code === 'SQLITE_CONSTRAINT_UNIQUE' ? uniqueColumns(err, 'message', /failed: (.+)$/) : null;
        throw storedRefusal(record, columns, collection);
    }
}


/** What a namespace posts after its fixture rows are stored, as the `post` step of storeFixtureRows; none without a posting. */
export function fixturePosting(db: Database, posting: FixturePosting | undefined): (added: StoredFixtureRow[]) => void {

    if (!posting) {
        return () => undefined;
    }

    const texts = posting.statements(parameter);
    const statements = new Map<string, Sqlite.Statement<unknown[], unknown>>();
    return (added) => {

        for (const record of postedInOrder(added, posting)) {
            for (const [name, params] of posting.steps(record.row)) {
                const statement = prepared(db, statements, always(texts[name], `the statement ${name} of the posting`));
                fixtureWrite(record, posting.collection, () => statement.run(...params));
            }
        }
    };
}


export function exportRows(db: Database, tables: string[]): StoredRows {

    return db.transaction(() => Object.fromEntries(tables.map((table) => [table, db.prepare<[], Record<string, unknown>>(`SELECT * FROM "${table}" ORDER BY created_at, id`).all()]))).deferred();
}


/** True when none of the collections has a row yet: a database that was never seeded. */
export function collectionsEmpty(db: Database, collections: string[]): boolean {

    return collections.every((collection) => !db.prepare(`SELECT 1 FROM "${collection}" LIMIT 1`).get());
}


/** Loads the shipped demo data of a namespace into a database that has none of it yet; returns the rows added. */
export function seedDemo(db: Database, namespace: NamespaceSchema): number {

    const demo = demoData(namespace);
    if (!demo || !collectionsEmpty(db, Object.keys(demo.collections))) {
        return 0;
    }

    return storeFixtureRows(db, demo.rows());
}
