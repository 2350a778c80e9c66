import { FixtureError, refuseOverlap, type FixtureExclusion, type FixtureRows } from '../../fixtures';
import type { StoredRows } from '../engine';
import type { PgDatabase, Runner } from './database';
import { engineError } from './errors';


/**
 * Stores a namespace's fixture rows on the connection of a transaction: every reference must name a row that exists
 * (loaded earlier or already there); a row whose id exists already is left as it is; any other failure names the
 * record, and the caller's transaction rolls the whole load back. Returns the number of rows added.
 */
export async function insertFixtureRows(tx: Runner, fixture: FixtureRows): Promise<number> {

    let inserted = 0;
    for (const { collection, exclusion, rows } of fixture) {
        for (const record of rows) {
            const { where, origin, row, references } = record;
            for (const [field, table, id] of references) {
                if (!await tx.row({ name: '', text: `SELECT 1 FROM "${table}" WHERE id = $1` }, id)) {
                    throw new FixtureError(`${origin}: ${where}.${field}: ${JSON.stringify(id)} names no record of ${table}`, `${where}.${field}`);
                }
            }

            // Checked before the insert, so that the refusal names the record rather than the exclusion constraint.
            if (exclusion && row[exclusion.when[0]] === exclusion.when[1]) {
                const other = await tx.row<unknown[], { id: string }>({ name: '', text: overlapQuery(collection, exclusion) }, row[exclusion.key], exclusion.when[1], row[exclusion.to], row[exclusion.from], row.id);
                refuseOverlap(record, exclusion, other?.id);
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


function overlapQuery(collection: string, { key, from, to, when }: FixtureExclusion): string {

    return `SELECT id FROM "${collection}" WHERE "${key}" = $1 AND "${when[0]}" = $2 AND "${from}" < $3 AND "${to}" > $4 AND id <> $5 LIMIT 1`;
}


/** Stores pay's fixture rows, then writes their ledger as the API does (accounts opened, two entries per transaction), then runs `within`. */
export async function insertPayFixtureRows(tx: Runner, fixture: FixtureRows, within: () => Promise<void>): Promise<number> {

    const inserted = await insertFixtureRows(tx, fixture);
    for (const statement of ledgerPosting) {
        await tx.exec(statement);
    }

    await within();
    return inserted;
}


// Transactions without entries (those just loaded) get accounts and balanced entries (checked at commit). Deposits
// post before withdrawals, so that no wallet account is overdrawn on the way to the balances the fixture adds up to.
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
    ) posting ORDER BY type, created_at, id, side`
];


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


/** True when none of the collections has a row yet: a schema never seeded. */
export async function collectionsEmpty(tx: Runner, collections: string[]): Promise<boolean> {

    for (const collection of collections) {
        if (await tx.row({ name: '', text: `SELECT 1 FROM "${collection}" LIMIT 1` })) {
            return false;
        }
    }

    return true;
}
