import type { RecordContext } from '../../clock';
import type { ListResult, Page } from '../../lists';
import { checkReplay, fromStored, idempotencyCutoff, requestFingerprint, transferRefusal, type StoredOutcome } from '../../namespaces/pay/rules';
import type { GatewayOutcome, GatewayRequest, PayStore, PayTransaction, Provider, TokenType, TransactionType, Wallet } from '../../namespaces/pay/store';
import { createdAt, found, recordNow } from '../../records';
import { insertRow, sql, type PgDatabase, type Runner } from './database';
import { serverNow } from './pages';


interface AccountRow {
    id: string;
    balance: number;
}

// Amounts and balances are bigint: read back as float8, exact for every value the checks allow (below 2^53).
const transactionColumns = 't.id, t.type, t.asset, t.amount::float8 AS amount, t.provider_id, t.status, t.created_at';

/** Every statement the store runs, prepared once per connection. */
export const queries = {
    now: sql<[], { now: string }>('pay_now', `SELECT ${serverNow} AS now`),
    walletByOwner: sql<[string], Omit<Wallet, 'balances'>>('pay_wallet_by_owner', 'SELECT id, owner_id, created_at FROM wallets WHERE owner_id = $1'),
    lockWallet: sql<[string], { id: string }>('pay_lock_wallet', 'SELECT id FROM wallets WHERE owner_id = $1 FOR UPDATE'),
    insertWallet: sql<[string, string, string]>('pay_insert_wallet', 'INSERT INTO wallets (id, owner_id, created_at) VALUES ($1, $2, $3) ON CONFLICT (owner_id) DO NOTHING'),
    balances: sql<[string], Wallet['balances'][number]>('pay_balances', 'SELECT asset, balance::float8 AS amount FROM accounts WHERE wallet_id = $1 ORDER BY asset'),
    transactions: sql<[string, number, number], PayTransaction>('pay_transactions', `SELECT ${transactionColumns} FROM transactions t
        WHERE t.wallet_id = $1 ORDER BY t.created_at DESC, t.id DESC LIMIT $2 OFFSET $3`),
    countTransactions: sql<[string], { total: number }>('pay_count_transactions', 'SELECT count(*)::int AS total FROM transactions WHERE wallet_id = $1'),
    latestTransaction: sql<[string], { created_at: string }>('pay_latest_transaction', 'SELECT max(created_at) AS created_at FROM transactions WHERE wallet_id = $1'),
    transaction: sql<[string, string], PayTransaction>('pay_transaction', `SELECT ${transactionColumns}
        FROM transactions t JOIN wallets w ON w.id = t.wallet_id WHERE t.id = $1 AND w.owner_id = $2`),
    tokens: sql<[], TokenType>('pay_tokens', 'SELECT symbol, name, decimals, stage, description, created_at FROM token_types ORDER BY symbol'),
    token: sql<[string], TokenType>('pay_token', 'SELECT symbol, name, decimals, stage, description, created_at FROM token_types WHERE symbol = $1'),
    providers: sql<[], Provider>('pay_providers', `SELECT p.id, p.name,
        ARRAY(SELECT asset FROM provider_assets WHERE provider_id = p.id ORDER BY asset) AS assets,
        p.supports_deposit, p.supports_withdrawal, p.status, p.created_at
        FROM providers p ORDER BY p.id`),
    provider: sql<[string], { status: 'active' | 'disabled'; supports_deposit: boolean; supports_withdrawal: boolean }>('pay_provider',
        'SELECT status, supports_deposit, supports_withdrawal FROM providers WHERE id = $1'),
    providerAsset: sql<[string, string], { stage: string | null }>('pay_provider_asset', `SELECT t.stage FROM provider_assets pa LEFT JOIN token_types t ON t.symbol = pa.token_symbol
        WHERE pa.provider_id = $1 AND pa.asset = $2`),
    // Accounts are opened with ON CONFLICT: two first moves at once both find the one row, then lock it.
    openWalletAccount: sql<[string, string, string]>('pay_open_wallet_account', `INSERT INTO accounts (wallet_id, asset, created_at) VALUES ($1, $2, $3)
        ON CONFLICT (wallet_id, asset) WHERE wallet_id IS NOT NULL DO NOTHING`),
    openClearingAccount: sql<[string, string, string]>('pay_open_clearing_account', `INSERT INTO accounts (provider_id, asset, created_at) VALUES ($1, $2, $3)
        ON CONFLICT (provider_id, asset) WHERE provider_id IS NOT NULL DO NOTHING`),
    lockWalletAccount: sql<[string, string], AccountRow>('pay_lock_wallet_account', 'SELECT id, balance::float8 AS balance FROM accounts WHERE wallet_id = $1 AND asset = $2 FOR UPDATE'),
    lockClearingAccount: sql<[string, string], AccountRow>('pay_lock_clearing_account', 'SELECT id, balance::float8 AS balance FROM accounts WHERE provider_id = $1 AND asset = $2 FOR UPDATE'),
    insertTransaction: insertRow<PayTransaction & { wallet_id: string }>('pay_insert_transaction', 'transactions',
        ['id', 'wallet_id', 'type', 'asset', 'amount', 'provider_id', 'status', 'created_at']),
    insertEntry: sql<[string, string, number, string]>('pay_insert_entry', 'INSERT INTO entries (transaction_id, account_id, amount, created_at) VALUES ($1, $2, $3, $4)'),
    pruneKeys: sql<[string]>('pay_prune_keys', 'DELETE FROM idempotency_keys WHERE created_at < $1'),
    // A new key comes back with no outcome yet; a key already used comes back as it was settled, once the move that
    // claimed it has committed (the conflicting insert waits for it, and the no-op update then reads the committed row).
    claimKey: sql<[string, string, string, string], { fingerprint: string; outcome: string }>('pay_claim_key', `INSERT INTO idempotency_keys (owner_id, key, fingerprint, outcome, created_at)
        VALUES ($1, $2, $3, '', $4) ON CONFLICT (owner_id, key) DO UPDATE SET outcome = idempotency_keys.outcome RETURNING fingerprint, outcome`),
    settleKey: sql<[string, string, string]>('pay_settle_key', 'UPDATE idempotency_keys SET outcome = $3 WHERE owner_id = $1 AND key = $2')
};


export class PgPayStore implements PayStore {

    constructor(private readonly db: PgDatabase, private readonly context: RecordContext) { }

    async openWallet(ownerId: string): Promise<Wallet> {

        const wallet = await readWallet(this.db, ownerId);
        if (wallet) {
            return wallet;
        }

        return await this.db.transaction(async (tx) => {

            await tx.rows(queries.insertWallet, this.context.ids.next(), ownerId, await this.now(tx));
            return (await readWallet(tx, ownerId))!;
        });
    }

    listTransactions(ownerId: string, page: Page): Promise<ListResult<PayTransaction>> {

        // One transaction under REPEATABLE READ: the page and its total come from one snapshot.
        return this.db.transaction(async (tx) => {

            await tx.exec('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
            const wallet = await tx.row(queries.walletByOwner, ownerId);
            if (!wallet) {
                return { data: [], total: 0 };
            }

            const data = await tx.rows(queries.transactions, wallet.id, page.limit, page.offset);
            const { total } = (await tx.row(queries.countTransactions, wallet.id))!;
            return { data, total };
        });
    }

    async getTransaction(ownerId: string, id: string): Promise<PayTransaction> {

        return found(await this.db.row(queries.transaction, id, ownerId), 'transaction');
    }

    async listTokens(): Promise<ListResult<TokenType>> {

        const data = await this.db.rows(queries.tokens);
        return { data, total: data.length };
    }

    async getToken(symbol: string): Promise<TokenType> {

        return found(await this.db.row(queries.token, symbol.toUpperCase()), 'token');
    }

    async listProviders(): Promise<ListResult<Provider>> {

        const data = await this.db.rows(queries.providers);
        return { data, total: data.length };
    }

    deposit(ownerId: string, request: GatewayRequest): Promise<GatewayOutcome> {

        return this.db.transaction((tx) => this.idempotentMove(tx, ownerId, 'deposit', request));
    }

    withdraw(ownerId: string, request: GatewayRequest): Promise<GatewayOutcome> {

        return this.db.transaction((tx) => this.idempotentMove(tx, ownerId, 'withdrawal', request));
    }

    // Runs inside one transaction: the key, the rule checks, the ledger write and the stored outcome commit together.
    private async idempotentMove(tx: Runner, ownerId: string, type: TransactionType, request: GatewayRequest): Promise<GatewayOutcome> {

        const now = await this.now(tx);
        await tx.rows(queries.pruneKeys, idempotencyCutoff(new Date(now)));

        // The key is claimed first: a second request with the same key waits here until the first commits, then
        // finds its outcome (or, should the first roll back, claims the key itself). Keys past retention were pruned
        // just above, so a key found here is one to replay.
        const fingerprint = requestFingerprint(type, request);
        const stored = (await tx.row(queries.claimKey, ownerId, request.idempotencyKey, fingerprint, now))!;
        if (stored.outcome) {
            checkReplay(stored.fingerprint, fingerprint);
            return { replayed: true, ...fromStored(JSON.parse(stored.outcome) as StoredOutcome) };
        }

        const walletId = await this.lockWallet(tx, ownerId, now);
        const outcome = await this.transfer(tx, walletId, type, request, now);
        await tx.rows(queries.settleKey, ownerId, request.idempotencyKey, JSON.stringify(outcome));
        return { replayed: false, ...fromStored(outcome) };
    }

    // Reads what the rules decide on under row locks, and writes one transaction with two balanced entries when they allow it.
    private async transfer(tx: Runner, walletId: string, type: TransactionType, request: GatewayRequest, now: string): Promise<StoredOutcome> {

        const { providerId, asset, amount } = request;
        const provider = await tx.row(queries.provider, providerId);
        const assetStage = provider && await tx.row(queries.providerAsset, providerId, asset);
        // Locked wallet account first, then the clearing account: every move takes them in this order, so none deadlock.
        const walletAccount = await tx.row(queries.lockWalletAccount, walletId, asset);
        const clearingAccount = provider && await tx.row(queries.lockClearingAccount, providerId, asset);
        const refused = transferRefusal(type, request, provider, assetStage, { wallet: walletAccount?.balance ?? 0, clearing: clearingAccount?.balance ?? 0 });
        if (refused) {
            return { refusal: refused };
        }

        const wallet = walletAccount ?? await this.openAccount(tx, queries.openWalletAccount, queries.lockWalletAccount, walletId, asset, now);
        const clearing = clearingAccount ?? await this.openAccount(tx, queries.openClearingAccount, queries.lockClearingAccount, providerId, asset, now);

        // The wallet is locked: its transactions get created_at in the order they commit, even when clocks differ.
        const latest = await tx.row(queries.latestTransaction, walletId);
        const transaction: PayTransaction = {
            id: this.context.ids.next(),
            type,
            asset,
            amount,
            provider_id: providerId,
            status: 'completed',
            created_at: createdAt(this.context.clock, latest?.created_at, now)
        };

        const signed = type === 'deposit' ? amount : -amount;
        await tx.rows(queries.insertTransaction, { ...transaction, wallet_id: walletId });
        await tx.rows(queries.insertEntry, transaction.id, wallet.id, signed, transaction.created_at);
        await tx.rows(queries.insertEntry, transaction.id, clearing.id, -signed, transaction.created_at);

        return { transaction };
    }

    private async openAccount(tx: Runner, open: typeof queries.openWalletAccount, lock: typeof queries.lockWalletAccount, owner: string, asset: string, now: string): Promise<AccountRow> {

        await tx.rows(open, owner, asset, now);
        return (await tx.row(lock, owner, asset))!;
    }

    // Opens the wallet when it has none and locks it: the moves of one wallet take turns.
    private async lockWallet(tx: Runner, ownerId: string, now: string): Promise<string> {

        const wallet = await tx.row(queries.lockWallet, ownerId);
        if (wallet) {
            return wallet.id;
        }

        await tx.rows(queries.insertWallet, this.context.ids.next(), ownerId, now);
        return (await tx.row(queries.lockWallet, ownerId))!.id;
    }

    private async now(tx: Runner): Promise<string> {

        return recordNow(this.context.clock, (await tx.row(queries.now))!.now).toISOString();
    }
}


async function readWallet(db: Runner, ownerId: string): Promise<Wallet | undefined> {

    const wallet = await db.row(queries.walletByOwner, ownerId);
    if (!wallet) {
        return undefined;
    }

    const balances = await db.rows(queries.balances, wallet.id);
    return { id: wallet.id, owner_id: wallet.owner_id, balances, created_at: wallet.created_at };
}
