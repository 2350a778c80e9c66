import type { FixtureExclusion, FixtureRow } from '../fixtures';


// The SQL both engines run to store fixtures, written once: each engine passes how it writes the nth parameter.

/** How an engine writes its nth parameter (1-based): ? for SQLite, $n for PostgreSQL. */
export type Placeholder = (n: number) => string;


/** The query for a stored row that a new one may not overlap: same key, not exempt, overlapping range, another id. */
export function overlapQuery(collection: string, { key, from, to, unless }: FixtureExclusion, placeholder: Placeholder): string {

    return `SELECT id, "${unless[0]}" AS state FROM "${collection}" WHERE "${key}" = ${placeholder(1)} AND "${unless[0]}" <> ${placeholder(2)} AND "${from}" < ${placeholder(3)} AND "${to}" > ${placeholder(4)} AND id <> ${placeholder(5)} LIMIT 1`;
}


/** The query for the stored row of an id, which a fixture row with that id must match. */
export function storedRowQuery(collection: string, placeholder: Placeholder): string {

    return `SELECT * FROM "${collection}" WHERE id = ${placeholder(1)}`;
}


const signed = `CASE t.type WHEN 'deposit' THEN t.amount ELSE -t.amount END`;

/**
 * The statements that post one stored transaction to the ledger as the API does, each with the number of times it
 * takes the transaction's id: the wallet's account and the provider's clearing account in the asset opened when they
 * are not yet, then the two entries.
 */
export function ledgerPosting(placeholder: Placeholder): [sql: string, ids: number][] {

    return [
        [`INSERT INTO accounts (wallet_id, asset, created_at) SELECT t.wallet_id, t.asset, t.created_at FROM transactions t
            WHERE t.id = ${placeholder(1)} AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.wallet_id = t.wallet_id AND a.asset = t.asset)`, 1],
        [`INSERT INTO accounts (provider_id, asset, created_at) SELECT t.provider_id, t.asset, t.created_at FROM transactions t
            WHERE t.id = ${placeholder(1)} AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.provider_id = t.provider_id AND a.asset = t.asset)`, 1],
        [`INSERT INTO entries (transaction_id, account_id, amount, created_at) SELECT id, account_id, amount, created_at FROM (
            SELECT t.id, a.id AS account_id, ${signed} AS amount, t.created_at, 0 AS side
                FROM transactions t JOIN accounts a ON a.wallet_id = t.wallet_id AND a.asset = t.asset WHERE t.id = ${placeholder(1)}
            UNION ALL
            SELECT t.id, a.id, -${signed}, t.created_at, 1
                FROM transactions t JOIN accounts a ON a.provider_id = t.provider_id AND a.asset = t.asset WHERE t.id = ${placeholder(2)}
        ) posting ORDER BY side`, 2]
    ];
}


/**
 * What a namespace posts after a fixture's rows are stored, in the same transaction: statements run once per added
 * record of one collection, in an order (pay: each transaction to the ledger, in the order its check walked them).
 */
export interface FixturePosting {
    readonly collection: string;
    order(a: Record<string, unknown>, b: Record<string, unknown>): number;
    /** The statements, each with the number of times it takes the record's id. */
    statements(placeholder: Placeholder): [sql: string, ids: number][];
}


/** The records of a posting's collection a load added, in the posting's order. */
export function postedInOrder(added: { collection: string; record: FixtureRow }[], posting: FixturePosting): FixtureRow[] {

    return added.filter(({ collection }) => collection === posting.collection).map(({ record }) => record).sort((a, b) => posting.order(a.row, b.row));
}
