import type { Transaction } from 'better-sqlite3';

import type { RecordContext } from '../../record-context';
import { claimEach, type AppliedTransition } from '../../transitions';
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
    type StoredOutcome,
    type TransactionRow
} from './rules';
import { settlementEvent, transactionDue, transactionMadeEvents } from './events';
import type { GatewayOutcome, GatewayRequest, PayStore, PayTransaction, Provider, TokenType, TransactionType, Wallet, WalletBalance } from './store';
import { storedMetadata } from '../../metadata';
import { createdAt, found } from '../../records';
import { eventWriter, type SqliteEventWriter } from '../../storage/sqlite/events';
import type { Database } from '../../storage/sqlite/open';
import { lazyStatements, settled, sql, type Statements } from '../../storage/sqlite/statements';


interface ProviderRow {
    id: string;
    name: string;
    assets: string;
    supports_deposit: number;
    supports_withdrawal: number;
    status: 'active' | 'disabled';
    deposit_settlement_s: number;
    withdrawal_settlement_s: number;
    failure_mode: FailureMode;
    created_at: string;
}

interface AccountRow {
    id: number;
    balance: number;
}

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

// A transaction with its wallet's owner (w, joined on t.wallet_id).
const transactionColumns = 't.id, w.owner_id, t.type, t.asset, t.amount, t.provider_id, t.status, t.created_at, t.settles_at, t.settled_at, t.failure_code, t.metadata';
const providerTerms = 'status, supports_deposit, supports_withdrawal, deposit_settlement_s, withdrawal_settlement_s, failure_mode';

/** Every statement the store runs, prepared once per connection. */
// LIMIT and OFFSET take their parameters behind a unary plus: SQLite plans a bare LIMIT parameter with its bound value,
// and so prepares the statement again each time a new value is bound, that is on every call.
export const queries = {
    walletByOwner: sql<[string], Omit<Wallet, 'balances'>>('SELECT id, owner_id, created_at FROM wallets WHERE owner_id = ?'),
    insertWallet: sql<[string, string, string]>('INSERT INTO wallets (id, owner_id, created_at) VALUES (?, ?, ?)'),
    balances: sql<[string], WalletBalance>(`SELECT asset, sum(CASE kind WHEN 'available' THEN balance ELSE 0 END) AS amount,
        sum(CASE kind WHEN 'pending_in' THEN balance ELSE 0 END) AS pending_in, sum(CASE kind WHEN 'pending_out' THEN balance ELSE 0 END) AS pending_out
        FROM accounts WHERE wallet_id = ? GROUP BY asset ORDER BY asset`),
    transactions: sql<[string, number, number], TransactionRow>(`SELECT ${transactionColumns} FROM transactions t JOIN wallets w ON w.id = t.wallet_id
        WHERE t.wallet_id = ? ORDER BY t.created_at DESC, t.id DESC LIMIT +? OFFSET +?`),
    countTransactions: sql<[string], { total: number }>('SELECT count(*) AS total FROM transactions WHERE wallet_id = ?'),
    latestTransaction: sql<[string], string | null>('SELECT max(created_at) FROM transactions WHERE wallet_id = ?'),
    transaction: sql<[string, string], TransactionRow>(`SELECT ${transactionColumns}
        FROM transactions t JOIN wallets w ON w.id = t.wallet_id WHERE t.id = ? AND w.owner_id = ?`),
    transactionById: sql<[string], TransactionRow>(`SELECT ${transactionColumns} FROM transactions t JOIN wallets w ON w.id = t.wallet_id WHERE t.id = ?`),
    tokens: sql<[], TokenType>('SELECT symbol, name, decimals, stage, description, created_at FROM token_types ORDER BY symbol'),
    token: sql<[string], TokenType>('SELECT symbol, name, decimals, stage, description, created_at FROM token_types WHERE symbol = ?'),
    providers: sql<[], ProviderRow>(`SELECT p.id, p.name, p.supports_deposit, p.supports_withdrawal, p.status, p.created_at,
        p.deposit_settlement_s, p.withdrawal_settlement_s, p.failure_mode,
        (SELECT json_group_array(asset) FROM (SELECT asset FROM provider_assets WHERE provider_id = p.id ORDER BY asset)) AS assets
        FROM providers p ORDER BY p.id`),
    provider: sql<[string], Omit<ProviderRow, 'id' | 'name' | 'assets' | 'created_at'>>(`SELECT ${providerTerms} FROM providers WHERE id = ?`),
    providerAsset: sql<[string, string], { stage: string | null }>(`SELECT t.stage FROM provider_assets pa LEFT JOIN token_types t ON t.symbol = pa.token_symbol
        WHERE pa.provider_id = ? AND pa.asset = ?`),
    walletAccount: sql<[string, string, AccountKind], AccountRow>('SELECT id, balance FROM accounts WHERE wallet_id = ? AND asset = ? AND kind = ?'),
    clearingAccount: sql<[string, string], AccountRow>('SELECT id, balance FROM accounts WHERE provider_id = ? AND asset = ?'),
    insertWalletAccount: sql<[string, string, AccountKind, string], AccountRow>('INSERT INTO accounts (wallet_id, asset, kind, created_at) VALUES (?, ?, ?, ?) RETURNING id, balance'),
    insertClearingAccount: sql<[string, string, string], AccountRow>('INSERT INTO accounts (provider_id, asset, created_at) VALUES (?, ?, ?) RETURNING id, balance'),
    insertTransaction: sql<[TransactionRow & { wallet_id: string }]>(`INSERT INTO transactions (id, wallet_id, type, asset, amount, provider_id, status, created_at, settles_at, settled_at, failure_code, metadata)
        VALUES (@id, @wallet_id, @type, @asset, @amount, @provider_id, @status, @created_at, @settles_at, @settled_at, @failure_code, @metadata)`),
    insertEntry: sql<[string, number, number, string]>('INSERT INTO entries (transaction_id, account_id, amount, created_at) VALUES (?, ?, ?, ?)'),
    nextDue: sql<[], string | null>(`SELECT min(settles_at) FROM transactions WHERE status = 'pending'`),
    firstDue: sql<[string], DueRow>(`SELECT t.id, t.wallet_id, t.type, t.asset, t.amount, t.provider_id, t.settles_at, p.failure_mode
        FROM transactions t JOIN providers p ON p.id = t.provider_id WHERE t.status = 'pending' AND t.settles_at <= ? ORDER BY t.settles_at, t.id LIMIT 1`),
    settle: sql<[string, string | null, string]>(`UPDATE transactions SET status = ?, settled_at = settles_at, failure_code = ? WHERE id = ? AND status = 'pending'`),
    pruneKeys: sql<[string]>('DELETE FROM idempotency_keys WHERE keep_until < ?'),
    findKey: sql<[string, string], { fingerprint: string; outcome: string }>('SELECT fingerprint, outcome FROM idempotency_keys WHERE owner_id = ? AND key = ?'),
    insertKey: sql<[string, string, string, string, string, string]>('INSERT INTO idempotency_keys (owner_id, key, fingerprint, outcome, created_at, keep_until) VALUES (?, ?, ?, ?, ?, ?)')
};

/** Pay's ledger on SQLite: wallets, the gateway's moves under one immediate transaction each, and their settlement. */
export class SqlitePayStore implements PayStore {

    private readonly sql: Statements<typeof queries>;
    private readonly walletRead: Transaction<(ownerId: string) => Wallet | undefined>;
    private readonly walletOpen: Transaction<(ownerId: string) => Wallet>;
    private readonly transactionsRead: Transaction<(ownerId: string, page: Page) => ListResult<PayTransaction>>;
    private readonly moneyMove: (ownerId: string, type: TransactionType, request: GatewayRequest) => GatewayOutcome;
    private readonly settleFirstDue: (until: string) => AppliedTransition | null;
    private readonly events: SqliteEventWriter;

    constructor(db: Database, private readonly context: RecordContext) {

        this.sql = lazyStatements(db, queries);
        this.events = eventWriter(db);

        // Reads run deferred (one snapshot); writes run immediate, taking the write lock before they read.
        this.walletRead = db.transaction((ownerId: string) => this.readWallet(ownerId));
        this.walletOpen = db.transaction((ownerId: string) => {

            this.ensureWallet(ownerId, this.context.clock.now().toISOString());
            return found(this.readWallet(ownerId), 'wallet');
        });

        this.transactionsRead = db.transaction((ownerId: string, page: Page) => this.readTransactions(ownerId, page));
        this.moneyMove = this.events.writing(this.context, (ownerId: string, type: TransactionType, request: GatewayRequest) => this.idempotentMove(ownerId, type, request));
        this.settleFirstDue = this.events.writing(this.context, (until: string) => this.settleDue(until));
    }

    openWallet(ownerId: string): Promise<Wallet> {

        return settled(() => this.walletRead.deferred(ownerId) ?? this.walletOpen.immediate(ownerId));
    }

    listTransactions(ownerId: string, page: Page): Promise<ListResult<PayTransaction>> {

        return settled(() => this.transactionsRead.deferred(ownerId, page));
    }

    getTransaction(ownerId: string, id: string): Promise<PayTransaction> {

        return settled(() => {

            const transaction = this.sql.transaction.get(id, ownerId);
            return transactionRecord(found(transaction, 'transaction'));
        });
    }

    listTokens(): Promise<ListResult<TokenType>> {

        return settled(() => {

            const data = this.sql.tokens.all();
            return { data, total: data.length };
        });
    }

    getToken(symbol: string): Promise<TokenType> {

        return settled(() => {

            const upper = symbol.toUpperCase();
            const token = this.sql.token.get(upper);
            return found(token, 'token');
        });
    }

    listProviders(): Promise<ListResult<Provider>> {

        return settled(() => {

            const data = this.sql.providers.all().map((row) => ({
                id: row.id,
                name: row.name,
                assets: JSON.parse(row.assets) as string[],
                supports_deposit: row.supports_deposit === 1,
                supports_withdrawal: row.supports_withdrawal === 1,
                status: row.status,
                settlement: { deposit: durationText(row.deposit_settlement_s), withdrawal: durationText(row.withdrawal_settlement_s) },
                created_at: row.created_at
            }));

            return { data, total: data.length };
        });
    }

    deposit(ownerId: string, request: GatewayRequest): Promise<GatewayOutcome> {

        return settled(() => this.moneyMove(ownerId, 'deposit', request));
    }

    withdraw(ownerId: string, request: GatewayRequest): Promise<GatewayOutcome> {

        return settled(() => this.moneyMove(ownerId, 'withdrawal', request));
    }

    nextDue(): Promise<Date | null> {

        return settled(() => {

            const due = this.sql.nextDue.pluck().get();
            return due ? new Date(due) : null;
        });
    }

    // Each transition is found and claimed under the write lock of its own immediate transaction: another process
    // applying the same rows takes turns with this one, and finds them settled.
    applyDue(until: Date, limit: number): Promise<AppliedTransition[]> {

        const at = until.toISOString();
        return claimEach(limit, () => settled(() => this.settleFirstDue(at)));
    }

    // Settles the earliest pending transaction due by `until`, stamped and posted at its own due instant.
    private settleDue(until: string): AppliedTransition | null {

        const due = this.sql.firstDue.get(until);
        if (!due) {
            return null;
        }

        const settlement = settlementOf(due.failure_mode, due.amount);
        this.sql.settle.run(settlement.status, settlement.failure_code, due.id);
        this.post(due.id, due.wallet_id, due.provider_id, due.asset, settlementLegs(due.type, settlement.status, due.amount), due.settles_at);
        const event = settlementEvent(settlement, transactionRecord(found(this.sql.transactionById.get(due.id), 'transaction')));
        this.events.write(this.context, event);
        return { type: event.type, id: due.id, due: event.created_at };
    }

    // Runs inside one immediate transaction: the key, the rule checks, the ledger write and the stored outcome commit together.
    private idempotentMove(ownerId: string, type: TransactionType, request: GatewayRequest): GatewayOutcome {

        const now = this.context.clock.now();
        this.sql.pruneKeys.run(now.toISOString());

        const fingerprint = requestFingerprint(type, request);
        const stored = this.sql.findKey.get(ownerId, request.idempotencyKey);
        if (stored) {
            checkReplay(stored.fingerprint, fingerprint);
            return { replayed: true, ...fromKept(stored.outcome, ownerId) };
        }

        const at = now.toISOString();
        const walletId = this.ensureWallet(ownerId, at);
        const outcome = this.transfer(ownerId, walletId, type, request, at);
        this.sql.insertKey.run(ownerId, request.idempotencyKey, fingerprint, JSON.stringify(outcome), at, keepUntil(now, outcome.transaction?.settles_at));
        return { replayed: false, ...fromStored(outcome, ownerId) };
    }

    // Reads what the rules decide on, and writes one transaction with its balanced entries when they allow it.
    private transfer(ownerId: string, walletId: string, type: TransactionType, request: GatewayRequest, now: string): StoredOutcome {

        const { providerId, asset } = request;
        const provider = this.sql.provider.get(providerId);
        const terms = provider && { ...provider, supports_deposit: provider.supports_deposit === 1, supports_withdrawal: provider.supports_withdrawal === 1 };
        const assetStage = provider && this.sql.providerAsset.get(providerId, asset);
        const balances = {
            wallet: this.sql.walletAccount.get(walletId, asset, 'available')?.balance ?? 0,
            incoming: this.sql.walletAccount.get(walletId, asset, 'pending_in')?.balance ?? 0,
            outgoing: this.sql.walletAccount.get(walletId, asset, 'pending_out')?.balance ?? 0,
            clearing: this.sql.clearingAccount.get(providerId, asset)?.balance ?? 0
        };

        const decision = transferDecision(type, request, terms, assetStage, balances);
        if ('refusal' in decision) {
            return decision;
        }

        const created = createdAt(this.context.clock, this.sql.latestTransaction.pluck().get(walletId));
        const transaction = madeTransaction(this.context.ids.next(), ownerId, type, request, decision.terms, created);
        this.sql.insertTransaction.run({ ...transaction, wallet_id: walletId, metadata: storedMetadata(transaction.metadata) });
        this.post(transaction.id, walletId, providerId, asset, creationLegs(type, transaction.status === 'pending', transaction.amount), created);
        for (const event of transactionMadeEvents(transaction)) {
            this.events.write(this.context, event);
        }

        // A move that settles later: the data set's timeline applies it at its instant.
        const due = transactionDue(transaction);
        if (due) {
            this.events.due(due);
        }

        return { transaction };
    }

    // Writes the entries of a posting at `at`, opening the accounts it moves that are not open yet.
    private post(transactionId: string, walletId: string, providerId: string, asset: string, legs: Leg[], at: string): void {

        for (const { account, amount } of legs) {
            const row = account === 'clearing' ?
                this.sql.clearingAccount.get(providerId, asset) ?? this.sql.insertClearingAccount.get(providerId, asset, at) :
                this.sql.walletAccount.get(walletId, asset, account) ?? this.sql.insertWalletAccount.get(walletId, asset, account, at);
            this.sql.insertEntry.run(transactionId, found(row, 'account').id, amount, at);
        }
    }

    private ensureWallet(ownerId: string, at: string): string {

        const wallet = this.sql.walletByOwner.get(ownerId);
        if (wallet) {
            return wallet.id;
        }

        const id = this.context.ids.next();
        this.sql.insertWallet.run(id, ownerId, at);
        return id;
    }

    private readWallet(ownerId: string): Wallet | undefined {

        const wallet = this.sql.walletByOwner.get(ownerId);
        if (!wallet) {
            return undefined;
        }

        const balances = this.sql.balances.all(wallet.id);
        return { id: wallet.id, owner_id: wallet.owner_id, balances, created_at: wallet.created_at };
    }

    private readTransactions(ownerId: string, page: Page): ListResult<PayTransaction> {

        const wallet = this.sql.walletByOwner.get(ownerId);
        if (!wallet) {
            return { data: [], total: 0 };
        }

        const data = this.sql.transactions.all(wallet.id, page.limit, page.offset).map(transactionRecord);
        const { total } = found(this.sql.countTransactions.get(wallet.id), 'wallet');
        return { data, total };
    }
}
