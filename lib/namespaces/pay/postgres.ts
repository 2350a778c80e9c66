import type { RecordContext } from '../../record-context';
import type { AppliedTransition } from '../../transitions';
import { durationText } from '../../durations';
import type { ListResult, Page } from '../../lists';
import {
    checkReplay,
    creationLegs,
    fromKept,
    fromStored,
    keepUntil,
    madeTransaction,
    requestFingerprint,
    settlementLegs,
    settlementOf,
    transactionRecord,
    transferDecision,
    type AccountKind,
    type FailureMode,
    type Leg,
    type ProviderTerms,
    type StoredOutcome,
    type TransactionRow
} from './rules';
import { settlementEvent, transactionDue, transactionMadeEvents } from './events';
import type { GatewayOutcome, GatewayRequest, PayStore, PayTransaction, Provider, TokenType, TransactionType, Wallet, WalletBalance } from './store';
import { storedMetadata } from '../../metadata';
import { createdAt, found, recordNow } from '../../records';
import { insertRow, sql, type PgDatabase, type Runner } from '../../storage/postgres/database';
import { eventWriter, type PgEventWriter } from '../../storage/postgres/events';
import { serverNow } from '../../storage/postgres/pages';


interface AccountRow {
    id: string;
    balance: number;
}

/** The accounts a posting may move, locked: the wallet's of the asset by kind, and the provider's clearing account. */
type LockedAccounts = Map<AccountKind | 'clearing', AccountRow>;

/** A pending transaction as its settlement reads it. */
interface DueRow {
    id: string;
    wallet_id: string;
    type: TransactionType;
    asset: string;
    amount: number;
    provider_id: string;
    settles_at: string;
    failure_mode: FailureMode;
}

// Amounts and balances are bigint: read back as float8, exact for every value the checks allow (below 2^53).
// A transaction with its wallet's owner (w, joined on t.wallet_id).
const transactionColumns = 't.id, w.owner_id, t.type, t.asset, t.amount::float8 AS amount, t.provider_id, t.status, t.created_at, t.settles_at, t.settled_at, t.failure_code, t.metadata';

/** Every statement the store runs, prepared once per connection. */
export const queries = {
    now: sql<[], { now: string }>('pay_now', `SELECT ${serverNow} AS now`),
    walletByOwner: sql<[string], Omit<Wallet, 'balances'>>('pay_wallet_by_owner', 'SELECT id, owner_id, created_at FROM wallets WHERE owner_id = $1'),
    lockWallet: sql<[string], { id: string }>('pay_lock_wallet', 'SELECT id FROM wallets WHERE owner_id = $1 FOR UPDATE'),
    insertWallet: sql<[string, string, string]>('pay_insert_wallet', 'INSERT INTO wallets (id, owner_id, created_at) VALUES ($1, $2, $3) ON CONFLICT (owner_id) DO NOTHING'),
    balances: sql<[string], WalletBalance>('pay_balances', `SELECT asset, coalesce(sum(balance) FILTER (WHERE kind = 'available'), 0)::float8 AS amount,
        coalesce(sum(balance) FILTER (WHERE kind = 'pending_in'), 0)::float8 AS pending_in, coalesce(sum(balance) FILTER (WHERE kind = 'pending_out'), 0)::float8 AS pending_out
        FROM accounts WHERE wallet_id = $1 GROUP BY asset ORDER BY asset`),
    transactions: sql<[string, number, number], TransactionRow>('pay_transactions', `SELECT ${transactionColumns} FROM transactions t JOIN wallets w ON w.id = t.wallet_id
        WHERE t.wallet_id = $1 ORDER BY t.created_at DESC, t.id DESC LIMIT $2 OFFSET $3`),
    countTransactions: sql<[string], { total: number }>('pay_count_transactions', 'SELECT count(*)::int AS total FROM transactions WHERE wallet_id = $1'),
    latestTransaction: sql<[string], { created_at: string }>('pay_latest_transaction', 'SELECT max(created_at) AS created_at FROM transactions WHERE wallet_id = $1'),
    transaction: sql<[string, string], TransactionRow>('pay_transaction', `SELECT ${transactionColumns}
        FROM transactions t JOIN wallets w ON w.id = t.wallet_id WHERE t.id = $1 AND w.owner_id = $2`),
    transactionById: sql<[string], TransactionRow>('pay_transaction_by_id', `SELECT ${transactionColumns} FROM transactions t JOIN wallets w ON w.id = t.wallet_id WHERE t.id = $1`),
    tokens: sql<[], TokenType>('pay_tokens', 'SELECT symbol, name, decimals, stage, description, created_at FROM token_types ORDER BY symbol'),
    token: sql<[string], TokenType>('pay_token', 'SELECT symbol, name, decimals, stage, description, created_at FROM token_types WHERE symbol = $1'),
    providers: sql<[], Omit<Provider, 'settlement'> & ProviderTerms>('pay_providers', `SELECT p.id, p.name,
        ARRAY(SELECT asset FROM provider_assets WHERE provider_id = p.id ORDER BY asset) AS assets,
        p.supports_deposit, p.supports_withdrawal, p.status, p.created_at, p.deposit_settlement_s, p.withdrawal_settlement_s, p.failure_mode
        FROM providers p ORDER BY p.id`),
    provider: sql<[string], ProviderTerms>('pay_provider',
        'SELECT status, supports_deposit, supports_withdrawal, deposit_settlement_s, withdrawal_settlement_s, failure_mode FROM providers WHERE id = $1'),
    providerAsset: sql<[string, string], { stage: string | null }>('pay_provider_asset', `SELECT t.stage FROM provider_assets pa LEFT JOIN token_types t ON t.symbol = pa.token_symbol
        WHERE pa.provider_id = $1 AND pa.asset = $2`),
    // Accounts are opened with ON CONFLICT: two first moves at once both find the one row, then lock it.
    openWalletAccount: sql<[string, string, AccountKind, string]>('pay_open_wallet_account', `INSERT INTO accounts (wallet_id, asset, kind, created_at) VALUES ($1, $2, $3, $4)
        ON CONFLICT (wallet_id, asset, kind) WHERE wallet_id IS NOT NULL DO NOTHING`),
    openClearingAccount: sql<[string, string, string]>('pay_open_clearing_account', `INSERT INTO accounts (provider_id, asset, created_at) VALUES ($1, $2, $3)
        ON CONFLICT (provider_id, asset) WHERE provider_id IS NOT NULL DO NOTHING`),
    // Every posting locks the wallet's accounts of the asset (by id) before the clearing account: none deadlock.
    lockWalletAccounts: sql<[string, string], AccountRow & { kind: AccountKind }>('pay_lock_wallet_accounts',
        'SELECT id, kind, balance::float8 AS balance FROM accounts WHERE wallet_id = $1 AND asset = $2 ORDER BY id FOR UPDATE'),
    lockWalletAccount: sql<[string, string, AccountKind], AccountRow>('pay_lock_wallet_account',
        'SELECT id, balance::float8 AS balance FROM accounts WHERE wallet_id = $1 AND asset = $2 AND kind = $3 FOR UPDATE'),
    lockClearingAccount: sql<[string, string], AccountRow>('pay_lock_clearing_account', 'SELECT id, balance::float8 AS balance FROM accounts WHERE provider_id = $1 AND asset = $2 FOR UPDATE'),
    insertTransaction: insertRow<TransactionRow & { wallet_id: string }>('pay_insert_transaction', 'transactions',
        ['id', 'wallet_id', 'type', 'asset', 'amount', 'provider_id', 'status', 'created_at', 'settles_at', 'settled_at', 'failure_code', 'metadata']),
    insertEntry: sql<[string, string, number, string]>('pay_insert_entry', 'INSERT INTO entries (transaction_id, account_id, amount, created_at) VALUES ($1, $2, $3, $4)'),
    nextDue: sql<[], { due: string | null }>('pay_next_due', `SELECT min(settles_at) AS due FROM transactions WHERE status = 'pending'`),
    due: sql<[string, number], DueRow>('pay_due', `SELECT t.id, t.wallet_id, t.type, t.asset, t.amount::float8 AS amount, t.provider_id, t.settles_at, p.failure_mode
        FROM transactions t JOIN providers p ON p.id = t.provider_id WHERE t.status = 'pending' AND t.settles_at <= $1 ORDER BY t.settles_at, t.id LIMIT $2`),
    // The claim: the row is still pending only for the first process to get here; a later one updates nothing.
    settle: sql<[string, string | null, string], { id: string }>('pay_settle',
        `UPDATE transactions SET status = $1, settled_at = settles_at, failure_code = $2 WHERE id = $3 AND status = 'pending' RETURNING id`),
    pruneKeys: sql<[string]>('pay_prune_keys', 'DELETE FROM idempotency_keys WHERE keep_until < $1'),
    // A new key comes back with no outcome yet; a key already used comes back as it was settled, once the move that
    // claimed it has committed (the conflicting insert waits for it, and the no-op update then reads the committed row).
    claimKey: sql<[string, string, string, string], { fingerprint: string; outcome: string }>('pay_claim_key', `INSERT INTO idempotency_keys (owner_id, key, fingerprint, outcome, created_at, keep_until)
        VALUES ($1, $2, $3, '', $4, $4) ON CONFLICT (owner_id, key) DO UPDATE SET outcome = idempotency_keys.outcome RETURNING fingerprint, outcome`),
    settleKey: sql<[string, string, string, string]>('pay_settle_key', 'UPDATE idempotency_keys SET outcome = $3, keep_until = $4 WHERE owner_id = $1 AND key = $2')
};


/** Pay's ledger on PostgreSQL: the same rules, each move decided under a lock on the wallet's accounts in one transaction. */
export class PgPayStore implements PayStore {

    private readonly events: PgEventWriter;

    constructor(private readonly db: PgDatabase, private readonly context: RecordContext) {

        this.events = eventWriter(db);
    }

    async openWallet(ownerId: string): Promise<Wallet> {

        const wallet = await readWallet(this.db, ownerId);
        if (wallet) {
            return wallet;
        }

        return await this.db.transaction(async (tx) => {

            await tx.rows(queries.insertWallet, this.context.ids.next(), ownerId, await this.now(tx));
            return found(await readWallet(tx, ownerId), 'wallet');
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

            const data = (await tx.rows(queries.transactions, wallet.id, page.limit, page.offset)).map(transactionRecord);
            const { total } = found(await tx.row(queries.countTransactions, wallet.id), 'wallet');
            return { data, total };
        });
    }

    async getTransaction(ownerId: string, id: string): Promise<PayTransaction> {

        return transactionRecord(found(await this.db.row(queries.transaction, id, ownerId), 'transaction'));
    }

    async listTokens(): Promise<ListResult<TokenType>> {

        const data = await this.db.rows(queries.tokens);
        return { data, total: data.length };
    }

    async getToken(symbol: string): Promise<TokenType> {

        return found(await this.db.row(queries.token, symbol.toUpperCase()), 'token');
    }

    async listProviders(): Promise<ListResult<Provider>> {

        const data = (await this.db.rows(queries.providers)).map(({ deposit_settlement_s: deposit, withdrawal_settlement_s: withdrawal, failure_mode: _mode, created_at, ...provider }) => ({
            ...provider,
            settlement: { deposit: durationText(deposit), withdrawal: durationText(withdrawal) },
            created_at
        }));

        return { data, total: data.length };
    }

    deposit(ownerId: string, request: GatewayRequest): Promise<GatewayOutcome> {

        return this.events.writing(this.context, (tx) => this.idempotentMove(tx, ownerId, 'deposit', request));
    }

    withdraw(ownerId: string, request: GatewayRequest): Promise<GatewayOutcome> {

        return this.events.writing(this.context, (tx) => this.idempotentMove(tx, ownerId, 'withdrawal', request));
    }

    async nextDue(): Promise<Date | null> {

        const { due } = found(await this.db.row(queries.nextDue), 'transaction');
        return due === null ? null : new Date(due);
    }

    async applyDue(until: Date, limit: number): Promise<AppliedTransition[]> {

        const applied: AppliedTransition[] = [];
        for (const due of await this.db.rows(queries.due, until.toISOString(), limit)) {
            const transition = await this.events.writing(this.context, (tx) => this.settle(tx, due));
            if (transition) {
                applied.push(transition);
            }
        }

        return applied;
    }

    // Claims one pending transaction and posts its settlement at its own due instant; null when another process had.
    private async settle(tx: Runner, due: DueRow): Promise<AppliedTransition | null> {

        const settlement = settlementOf(due.failure_mode, due.amount);
        if (!await tx.row(queries.settle, settlement.status, settlement.failure_code, due.id)) {
            return null;
        }

        const accounts = await this.lockAccounts(tx, due.wallet_id, due.provider_id, due.asset);
        await this.post(tx, due.id, due.wallet_id, due.provider_id, due.asset, accounts, settlementLegs(due.type, settlement.status, due.amount), due.settles_at);
        const event = settlementEvent(settlement, transactionRecord(found(await tx.row(queries.transactionById, due.id), 'transaction')));
        await this.events.write(tx, this.context, event);
        return { type: event.type, id: due.id, due: event.created_at };
    }

    // Runs inside one transaction: the key, the rule checks, the ledger write and the stored outcome commit together.
    private async idempotentMove(tx: Runner, ownerId: string, type: TransactionType, request: GatewayRequest): Promise<GatewayOutcome> {

        const now = await this.now(tx);
        await tx.rows(queries.pruneKeys, now);

        // The key is claimed first: a second request with the same key waits here until the first commits, then
        // finds its outcome (or, should the first roll back, claims the key itself). Keys past retention were pruned
        // just above, so a key found here is one to replay.
        const fingerprint = requestFingerprint(type, request);
        const stored = found(await tx.row(queries.claimKey, ownerId, request.idempotencyKey, fingerprint, now), 'idempotency_key');
        if (stored.outcome) {
            checkReplay(stored.fingerprint, fingerprint);
            return { replayed: true, ...fromKept(stored.outcome, ownerId) };
        }

        const walletId = await this.lockWallet(tx, ownerId, now);
        const outcome = await this.transfer(tx, ownerId, walletId, type, request, now);
        await tx.rows(queries.settleKey, ownerId, request.idempotencyKey, JSON.stringify(outcome), keepUntil(new Date(now), outcome.transaction?.settles_at));
        return { replayed: false, ...fromStored(outcome, ownerId) };
    }

    // Reads what the rules decide on under row locks, and writes one transaction with its balanced entries when they allow it.
    private async transfer(tx: Runner, ownerId: string, walletId: string, type: TransactionType, request: GatewayRequest, now: string): Promise<StoredOutcome> {

        const { providerId, asset } = request;
        const provider = await tx.row(queries.provider, providerId);
        const assetStage = provider && await tx.row(queries.providerAsset, providerId, asset);
        const accounts = await this.lockAccounts(tx, walletId, providerId, asset);
        const balance = (kind: AccountKind | 'clearing') => accounts.get(kind)?.balance ?? 0;
        const decision = transferDecision(type, request, provider, assetStage, { wallet: balance('available'), incoming: balance('pending_in'), outgoing: balance('pending_out'), clearing: balance('clearing') });
        if ('refusal' in decision) {
            return decision;
        }

        // The wallet is locked: its transactions get created_at in the order they commit, even when clocks differ.
        const latest = await tx.row(queries.latestTransaction, walletId);
        const transaction = madeTransaction(this.context.ids.next(), ownerId, type, request, decision.terms, createdAt(this.context.clock, latest?.created_at, now));
        await tx.rows(queries.insertTransaction, { ...transaction, wallet_id: walletId, metadata: storedMetadata(transaction.metadata) });
        await this.post(tx, transaction.id, walletId, providerId, asset, accounts, creationLegs(type, transaction.status === 'pending', transaction.amount), transaction.created_at);
        for (const event of transactionMadeEvents(transaction)) {
            await this.events.write(tx, this.context, event);
        }

        // A move that settles later: the data set's timeline applies it at its instant.
        const due = transactionDue(transaction);
        if (due) {
            this.events.due(tx, due);
        }

        return { transaction };
    }

    // Locks the wallet's accounts of the asset, then the provider's clearing account: the one order every posting takes.
    private async lockAccounts(tx: Runner, walletId: string, providerId: string, asset: string): Promise<LockedAccounts> {

        const accounts: LockedAccounts = new Map();
        for (const { kind, ...account } of await tx.rows(queries.lockWalletAccounts, walletId, asset)) {
            accounts.set(kind, account);
        }

        const clearing = await tx.row(queries.lockClearingAccount, providerId, asset);
        if (clearing) {
            accounts.set('clearing', clearing);
        }

        return accounts;
    }

    // Writes the entries of a posting at `at`, opening (and locking) the accounts it moves that are not open yet.
    private async post(tx: Runner, transactionId: string, walletId: string, providerId: string, asset: string, accounts: LockedAccounts, legs: Leg[], at: string): Promise<void> {

        for (const { account, amount } of legs) {
            const row = accounts.get(account) ?? await openAccount(tx, account, walletId, providerId, asset, at);
            accounts.set(account, row);
            await tx.rows(queries.insertEntry, transactionId, row.id, amount, at);
        }
    }

    // Opens the wallet when it has none and locks it: the moves of one wallet take turns.
    private async lockWallet(tx: Runner, ownerId: string, now: string): Promise<string> {

        const wallet = await tx.row(queries.lockWallet, ownerId);
        if (wallet) {
            return wallet.id;
        }

        await tx.rows(queries.insertWallet, this.context.ids.next(), ownerId, now);
        return found(await tx.row(queries.lockWallet, ownerId), 'wallet').id;
    }

    private async now(tx: Runner): Promise<string> {

        return recordNow(this.context.clock, found(await tx.row(queries.now), 'instant').now).toISOString();
    }
}


// Opens an account of the wallet (or the provider's clearing account) in the asset and locks it.
async function openAccount(tx: Runner, account: AccountKind | 'clearing', walletId: string, providerId: string, asset: string, at: string): Promise<AccountRow> {

    if (account === 'clearing') {
        await tx.rows(queries.openClearingAccount, providerId, asset, at);
        return found(await tx.row(queries.lockClearingAccount, providerId, asset), 'account');
    }

    await tx.rows(queries.openWalletAccount, walletId, asset, account, at);
    return found(await tx.row(queries.lockWalletAccount, walletId, asset, account), 'account');
}


async function readWallet(db: Runner, ownerId: string): Promise<Wallet | undefined> {

    const wallet = await db.row(queries.walletByOwner, ownerId);
    if (!wallet) {
        return undefined;
    }

    const balances = await db.rows(queries.balances, wallet.id);
    return { id: wallet.id, owner_id: wallet.owner_id, balances, created_at: wallet.created_at };
}
