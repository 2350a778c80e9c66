import type { Placeholder } from '../../namespace';
import { transactionLegs } from './fixture';


// What a fixture's transactions post to the ledger, as the API posts them: the SQL both engines run, per placeholder.

/** The statements that post a stored transaction to the ledger as the API does, one account or entry each. */
export type LedgerStatements = {
    /** Opens the wallet's account of a kind in the transaction's asset when it is not open yet: kind, at, id, kind. */
    openWalletAccount: string;
    /** Opens the provider's clearing account in the transaction's asset when it is not open yet: at, id. */
    openClearingAccount: string;
    /** Writes an entry on the wallet's account of a kind: amount, at, kind, id. */
    walletEntry: string;
    /** Writes an entry on the clearing account: amount, at, id. */
    clearingEntry: string;
};


/** The ledger statements in an engine's placeholders, each taking its parameters in the order it names them. */
export function ledgerStatements(placeholder: Placeholder): LedgerStatements {

    return {
        openWalletAccount: `INSERT INTO accounts (wallet_id, asset, kind, created_at) SELECT t.wallet_id, t.asset, CAST(${placeholder(1)} AS TEXT), CAST(${placeholder(2)} AS TEXT) FROM transactions t
            WHERE t.id = ${placeholder(3)} AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.wallet_id = t.wallet_id AND a.asset = t.asset AND a.kind = ${placeholder(4)})`,
        openClearingAccount: `INSERT INTO accounts (provider_id, asset, created_at) SELECT t.provider_id, t.asset, CAST(${placeholder(1)} AS TEXT) FROM transactions t
            WHERE t.id = ${placeholder(2)} AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.provider_id = t.provider_id AND a.asset = t.asset)`,
        walletEntry: `INSERT INTO entries (transaction_id, account_id, amount, created_at) SELECT t.id, a.id, CAST(${placeholder(1)} AS BIGINT), CAST(${placeholder(2)} AS TEXT)
            FROM transactions t JOIN accounts a ON a.wallet_id = t.wallet_id AND a.asset = t.asset AND a.kind = ${placeholder(3)} WHERE t.id = ${placeholder(4)}`,
        clearingEntry: `INSERT INTO entries (transaction_id, account_id, amount, created_at) SELECT t.id, a.id, CAST(${placeholder(1)} AS BIGINT), CAST(${placeholder(2)} AS TEXT)
            FROM transactions t JOIN accounts a ON a.provider_id = t.provider_id AND a.asset = t.asset WHERE t.id = ${placeholder(3)}`
    };
}


/**
 * What posting one stored transaction runs, in order: for each leg of its move (at created_at) and of its settlement
 * (at settles_at, once settled), the account opened when it is not yet, then the entry.
 */
export function ledgerPosting(row: Record<string, unknown>): [statement: keyof LedgerStatements, params: unknown[]][] {

    const id = row.id;
    const { made, settlement } = transactionLegs(row);
    const steps: [keyof LedgerStatements, unknown[]][] = [];
    for (const { legs, at } of settlement ? [made, settlement] : [made]) {
        for (const { account, amount } of legs) {
            if (account === 'clearing') {
                steps.push(['openClearingAccount', [at, id]], ['clearingEntry', [amount, at, id]]);
            }
            else {
                steps.push(['openWalletAccount', [account, at, id, account]], ['walletEntry', [amount, at, account, id]]);
            }
        }
    }

    return steps;
}
