import type { Transaction } from 'better-sqlite3';

import type { RecordContext } from '../../clock';
import type { ListResult, Page } from '../../lists';
import { checkReplay, fromStored, idempotencyCutoff, requestFingerprint, transferRefusal, type StoredOutcome } from '../../namespaces/pay/rules';
import type { GatewayOutcome, GatewayRequest, PayStore, PayTransaction, Provider, TokenType, TransactionType, Wallet } from '../../namespaces/pay/store';
import { createdAt, found } from '../../records';
import type { Database } from './open';
import { lazyStatements, settled, sql, type Statements } from './statements';


interface ProviderRow {
    id: string;
    name: string;
    assets: string;
    supports_deposit: number;
    supports_withdrawal: number;
    status: 'active' | 'disabled';
    created_at: string;
}

interface AccountRow {
    id: number;
    balance: number;
}

/** Every statement the store runs, prepared once per connection. */
// LIMIT and OFFSET take their parameters behind a unary plus: SQLite plans a bare LIMIT parameter with its bound value,
// and so prepares the statement again each time a new value is bound, that is on every call.
export const queries = {
    walletByOwner: sql<[string], Omit<Wallet, 'balances'>>('SELECT id, owner_id, created_at FROM wallets WHERE owner_id = ?'),
    insertWallet: sql<[string, string, string]>('INSERT INTO wallets (id, owner_id, created_at) VALUES (?, ?, ?)'),
    balances: sql<[string], Wallet['balances'][number]>('SELECT asset, balance AS amount FROM accounts WHERE wallet_id = ? ORDER BY asset'),
    transactions: sql<[string, number, number], PayTransaction>(`SELECT id, type, asset, amount, provider_id, status, created_at FROM transactions
        WHERE wallet_id = ? ORDER BY created_at DESC, id DESC LIMIT +? OFFSET +?`),
    countTransactions: sql<[string], { total: number }>('SELECT count(*) AS total FROM transactions WHERE wallet_id = ?'),
    latestTransaction: sql<[string], string | null>('SELECT max(created_at) FROM transactions WHERE wallet_id = ?'),
    transaction: sql<[string, string], PayTransaction>(`SELECT t.id, t.type, t.asset, t.amount, t.provider_id, t.status, t.created_at
        FROM transactions t JOIN wallets w ON w.id = t.wallet_id WHERE t.id = ? AND w.owner_id = ?`),
    tokens: sql<[], TokenType>('SELECT symbol, name, decimals, stage, description, created_at FROM token_types ORDER BY symbol'),
    token: sql<[string], TokenType>('SELECT symbol, name, decimals, stage, description, created_at FROM token_types WHERE symbol = ?'),
    providers: sql<[], ProviderRow>(`SELECT p.id, p.name, p.supports_deposit, p.supports_withdrawal, p.status, p.created_at,
        (SELECT json_group_array(asset) FROM (SELECT asset FROM provider_assets WHERE provider_id = p.id ORDER BY asset)) AS assets
        FROM providers p ORDER BY p.id`),
    provider: sql<[string], Pick<ProviderRow, 'status' | 'supports_deposit' | 'supports_withdrawal'>>('SELECT status, supports_deposit, supports_withdrawal FROM providers WHERE id = ?'),
    providerAsset: sql<[string, string], { stage: string | null }>(`SELECT t.stage FROM provider_assets pa LEFT JOIN token_types t ON t.symbol = pa.token_symbol
        WHERE pa.provider_id = ? AND pa.asset = ?`),
    walletAccount: sql<[string, string], AccountRow>('SELECT id, balance FROM accounts WHERE wallet_id = ? AND asset = ?'),
    clearingAccount: sql<[string, string], AccountRow>('SELECT id, balance FROM accounts WHERE provider_id = ? AND asset = ?'),
    insertWalletAccount: sql<[string, string, string], AccountRow>('INSERT INTO accounts (wallet_id, asset, created_at) VALUES (?, ?, ?) RETURNING id, balance'),
    insertClearingAccount: sql<[string, string, string], AccountRow>('INSERT INTO accounts (provider_id, asset, created_at) VALUES (?, ?, ?) RETURNING id, balance'),
    insertTransaction: sql<[string, string, TransactionType, string, number, string, string]>(`INSERT INTO transactions (id, wallet_id, type, asset, amount, provider_id, status, created_at)
        VALUES (?, ?, ?, ?, ?, ?, 'completed', ?)`),
    insertEntry: sql<[string, number, number, string]>('INSERT INTO entries (transaction_id, account_id, amount, created_at) VALUES (?, ?, ?, ?)'),
    pruneKeys: sql<[string]>('DELETE FROM idempotency_keys WHERE created_at < ?'),
    findKey: sql<[string, string], { fingerprint: string; outcome: string }>('SELECT fingerprint, outcome FROM idempotency_keys WHERE owner_id = ? AND key = ?'),
    insertKey: sql<[string, string, string, string, string]>('INSERT INTO idempotency_keys (owner_id, key, fingerprint, outcome, created_at) VALUES (?, ?, ?, ?, ?)')
};

export class SqlitePayStore implements PayStore {

    private readonly sql: Statements<typeof queries>;
    private readonly walletRead: Transaction<(ownerId: string) => Wallet | undefined>;
    private readonly walletOpen: Transaction<(ownerId: string) => Wallet>;
    private readonly transactionsRead: Transaction<(ownerId: string, page: Page) => ListResult<PayTransaction>>;
    private readonly moneyMove: Transaction<(ownerId: string, type: TransactionType, request: GatewayRequest) => GatewayOutcome>;

    constructor(db: Database, private readonly context: RecordContext) {

        this.sql = lazyStatements(db, queries);

        // Reads run deferred (one snapshot); writes run immediate, taking the write lock before they read.
        this.walletRead = db.transaction((ownerId: string) => this.readWallet(ownerId));
        this.walletOpen = db.transaction((ownerId: string) => {

            this.ensureWallet(ownerId, this.context.clock.now().toISOString());
            return this.readWallet(ownerId)!;
        });

        this.transactionsRead = db.transaction((ownerId: string, page: Page) => this.readTransactions(ownerId, page));
        this.moneyMove = db.transaction((ownerId: string, type: TransactionType, request: GatewayRequest) => this.idempotentMove(ownerId, type, request));
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
            return found(transaction, 'transaction');
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
                created_at: row.created_at
            }));

            return { data, total: data.length };
        });
    }

    deposit(ownerId: string, request: GatewayRequest): Promise<GatewayOutcome> {

        return settled(() => this.moneyMove.immediate(ownerId, 'deposit', request));
    }

    withdraw(ownerId: string, request: GatewayRequest): Promise<GatewayOutcome> {

        return settled(() => this.moneyMove.immediate(ownerId, 'withdrawal', request));
    }

    // Runs inside one immediate transaction: the key, the rule checks, the ledger write and the stored outcome commit together.
    private idempotentMove(ownerId: string, type: TransactionType, request: GatewayRequest): GatewayOutcome {

        const now = this.context.clock.now();
        this.sql.pruneKeys.run(idempotencyCutoff(now));

        const fingerprint = requestFingerprint(type, request);
        const stored = this.sql.findKey.get(ownerId, request.idempotencyKey);
        if (stored) {
            checkReplay(stored.fingerprint, fingerprint);
            return { replayed: true, ...fromStored(JSON.parse(stored.outcome) as StoredOutcome) };
        }

        const at = now.toISOString();
        const walletId = this.ensureWallet(ownerId, at);
        const outcome = this.transfer(walletId, type, request, at);
        this.sql.insertKey.run(ownerId, request.idempotencyKey, fingerprint, JSON.stringify(outcome), at);
        return { replayed: false, ...fromStored(outcome) };
    }

    // Reads what the rules decide on, and writes one transaction with two balanced entries when they allow it.
    private transfer(walletId: string, type: TransactionType, request: GatewayRequest, now: string): StoredOutcome {

        const { providerId, asset, amount } = request;
        const provider = this.sql.provider.get(providerId);
        const terms = provider && { status: provider.status, supports_deposit: provider.supports_deposit === 1, supports_withdrawal: provider.supports_withdrawal === 1 };
        const assetStage = provider && this.sql.providerAsset.get(providerId, asset);
        const walletAccount = this.sql.walletAccount.get(walletId, asset);
        const clearingAccount = this.sql.clearingAccount.get(providerId, asset);
        const refused = transferRefusal(type, request, terms, assetStage, { wallet: walletAccount?.balance ?? 0, clearing: clearingAccount?.balance ?? 0 });
        if (refused) {
            return { refusal: refused };
        }

        const wallet = walletAccount ?? this.sql.insertWalletAccount.get(walletId, asset, now)!;
        const clearing = clearingAccount ?? this.sql.insertClearingAccount.get(providerId, asset, now)!;
        const created = createdAt(this.context.clock, this.sql.latestTransaction.pluck().get(walletId));
        const id = this.context.ids.next();
        const signed = type === 'deposit' ? amount : -amount;
        this.sql.insertTransaction.run(id, walletId, type, asset, amount, providerId, created);
        this.sql.insertEntry.run(id, wallet.id, signed, created);
        this.sql.insertEntry.run(id, clearing.id, -signed, created);

        return { transaction: { id, type, asset, amount, provider_id: providerId, status: 'completed', created_at: created } };
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

        const data = this.sql.transactions.all(wallet.id, page.limit, page.offset);
        const { total } = this.sql.countTransactions.get(wallet.id)!;
        return { data, total };
    }
}
