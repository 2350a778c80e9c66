import type Sqlite from 'better-sqlite3';

import { FixtureError, refuseOverlap, type FixtureExclusion, type FixtureRows } from '../../fixtures';
import { demoData } from '../demo';
import type { StoredRows } from '../engine';
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
        for (const { collection, exclusion, rows } of fixture) {
            for (const record of rows) {
                const { where, origin, row, references } = record;
                for (const [field, table, id] of references) {
                    if (!prepared(`SELECT 1 FROM "${table}" WHERE id = ?`).get(id)) {
                        throw new FixtureError(`${origin}: ${where}.${field}: ${JSON.stringify(id)} names no record of ${table}`, `${where}.${field}`);
                    }
                }

                if (exclusion && row[exclusion.when[0]] === exclusion.when[1]) {
                    const other = prepared(overlapQuery(collection, exclusion)).pluck().get(row[exclusion.key], exclusion.when[1], row[exclusion.to], row[exclusion.from], row.id) as string | undefined;
                    refuseOverlap(record, exclusion, other);
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


/** The query for a stored row that a new one may not overlap: same key and state, overlapping range, another id. */
function overlapQuery(collection: string, { key, from, to, when }: FixtureExclusion): string {

    return `SELECT id FROM "${collection}" WHERE "${key}" = ? AND "${when[0]}" = ? AND "${from}" < ? AND "${to}" > ? AND id <> ? LIMIT 1`;
}


/** Stores pay's fixture rows, then writes their ledger as the API does: accounts opened, two entries per transaction. */
export function storePayFixtureRows(db: Database, fixture: FixtureRows, within: () => void): number {

    return storeFixtureRows(db, fixture, () => {

        for (const statement of ledgerPosting) {
            db.prepare(statement).run();
        }

        within();
    });
}


// Transactions without entries (those just loaded) get accounts and balanced entries. Deposits post before
// withdrawals, so that no wallet account is overdrawn on the way to the balances the fixture was checked to add up to.
const unposted = 'NOT EXISTS (SELECT 1 FROM entries e WHERE e.transaction_id = t.id)';
const signed = `CASE t.type WHEN 'deposit' THEN t.amount ELSE -t.amount END`;
const ledgerPosting = [
    `INSERT INTO accounts (wallet_id, asset, created_at) SELECT t.wallet_id, t.asset, min(t.created_at) FROM transactions t
        WHERE ${unposted} AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.wallet_id = t.wallet_id AND a.asset = t.asset)
        GROUP BY t.wallet_id, t.asset ORDER BY min(t.created_at), t.wallet_id, t.asset`,
    `INSERT INTO accounts (provider_id, asset, created_at) SELECT t.provider_id, t.asset, min(t.created_at) FROM transactions t
        WHERE ${unposted} AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.provider_id = t.provider_id AND a.asset = t.asset)
        GROUP BY t.provider_id, t.asset ORDER BY min(t.created_at), t.provider_id, t.asset`,
    `INSERT INTO entries (transaction_id, account_id, amount, created_at) SELECT id, account_id, amount, created_at FROM (
        SELECT t.id, a.id AS account_id, ${signed} AS amount, t.created_at, t.type AS type, 0 AS side
            FROM transactions t JOIN accounts a ON a.wallet_id = t.wallet_id AND a.asset = t.asset WHERE ${unposted}
        UNION ALL
        SELECT t.id, a.id, -${signed}, t.created_at, t.type, 1
            FROM transactions t JOIN accounts a ON a.provider_id = t.provider_id AND a.asset = t.asset WHERE ${unposted}
    ) ORDER BY type, created_at, id, side`
];


/** Every row of each table in list order, read in one transaction. */
export function exportRows(db: Database, tables: string[]): StoredRows {

    return db.transaction(() => Object.fromEntries(tables.map((table) => [table, db.prepare(`SELECT * FROM "${table}" ORDER BY created_at, id`).all() as Record<string, unknown>[]]))).deferred();
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
