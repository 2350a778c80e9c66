import Joi from 'joi';

import { recordId, utcTimestamp, visibleText } from '../../fields';
import { recordOf, recordSchema, type FixtureCollection, type FixtureRecord, type FixtureRefusal, type FixtureSpec } from '../../fixtures';
import { metadataSchema, readMetadata, storedMetadata } from '../../metadata';
import {
    creationLegs,
    maxAmount,
    maxBalance,
    settlementLegs,
    settlementOf,
    settlementSeconds,
    settlesAt,
    transferDecision,
    type AccountKind,
    type Leg,
    type ProviderTerms
} from './rules';
import type { PayTransaction, TransactionStatus, TransactionType, WalletBalance } from './store';


// Pay records as the API shows them, each transaction with the wallet it moved. Balances are not stored as given: the
// ledger is written as the API writes it (accounts per wallet, asset and kind, a clearing account per provider and
// asset, the entries of each move and of its settlement), so a wallet's balances must be exactly what its transactions
// add up to. A pending transaction loads pending with its settles_at, and settles as the API's would have.

/** A wallet as its schema below validates it. */
type WalletRecord = FixtureRecord & { owner_id: string; balances?: WalletBalance[] };

/** A transaction as its schema below validates it: settles_at, settled_at and failure_code as given, if they are. */
type TransactionRecord = FixtureRecord & {
    wallet_id: string;
    type: TransactionType;
    asset: string;
    amount: number;
    provider_id: string;
    status: TransactionStatus;
    settles_at?: string;
    settled_at?: string | null;
    failure_code?: string | null;
    metadata: Record<string, string>;
};

/** A ledger account as an export reads it back: PostgreSQL gives its bigint balance as text. */
type AccountRow = { wallet_id: string; asset: string; kind: AccountKind; balance: number | string };

const asset = Joi.string().pattern(/^[A-Z]{3,12}$/).messages({ 'string.pattern.base': '{{#label}} must be a currency code or token symbol in upper case (USD, MIT)' });

// Balances are listed by asset, in code point order as the API lists them.
function byAsset(a: { asset: string }, b: { asset: string }): number {

    return Number(a.asset > b.asset) - Number(a.asset < b.asset);
}

// Reads back what PostgreSQL gives as text (bigint) as a number, and metadata from its JSON text.
const readers = { amount: (row: Record<string, unknown>) => Number(row.amount), metadata: (row: Record<string, unknown>) => readMetadata(String(row.metadata)) };

// The deposit currencies every provider row of the migrations moves, and the stage of each token type they ship.
const currencies = ['EUR', 'GBP', 'JPY', 'KES', 'USD'];
const tokenStages: Record<string, string> = { MIT: 'live', MXT: 'pilot', NST: 'planned' };

/** A provider as the migrations fix it: its terms, and the stage of each asset it moves (null for a currency). */
export interface FixtureProvider extends ProviderTerms {
    assets: Record<string, string | null>;
}

/** The providers the pay migrations ship, which fixtures move money through (a fixture adds none). */
const instant = { deposit_settlement_s: 0, withdrawal_settlement_s: 0, failure_mode: 'none' } as const;
const settlementCurrencies = { EUR: null, GBP: null, USD: null };

export const payProviders: Record<string, FixtureProvider> = {
    'bank-transfer': {
        status: 'active', supports_deposit: true, supports_withdrawal: true,
        deposit_settlement_s: 172_800, withdrawal_settlement_s: 86_400, failure_mode: 'returned', assets: settlementCurrencies
    },
    card: { status: 'active', supports_deposit: true, supports_withdrawal: true, ...instant, failure_mode: 'declined', assets: settlementCurrencies },
    sandbox: {
        status: 'active', supports_deposit: true, supports_withdrawal: true, ...instant,
        assets: { ...Object.fromEntries(currencies.map((code) => [code, null])), ...tokenStages }
    },
    'legacy-bank': { status: 'disabled', supports_deposit: true, supports_withdrawal: true, ...instant, assets: { EUR: null, USD: null } }
};


type Settled = Pick<PayTransaction, 'status' | 'settles_at' | 'settled_at' | 'failure_code'>;

/** What a transaction's settlement follows from: its move, and the settlement fields it gives. */
type Settling = Pick<TransactionRecord, 'provider_id' | 'type' | 'status' | 'created_at' | 'settles_at' | 'settled_at' | 'failure_code'>;

/**
 * A transaction's settlement, what it gives or else what the API would have written: settles_at its provider's delay
 * after created_at, settled_at its settles_at unless pending, no failure_code. An unknown provider settles at once
 * (the check refuses it).
 */
export function settlementFields(transaction: Settling): Settled {

    const provider = payProviders[transaction.provider_id];
    const seconds = provider ? settlementSeconds(provider, transaction.type) : 0;
    const status = transaction.status;
    const due = transaction.settles_at ?? settlesAt(transaction.created_at, seconds);
    return {
        status,
        settles_at: due,
        settled_at: transaction.settled_at === undefined ? (status === 'pending' ? null : due) : transaction.settled_at,
        failure_code: transaction.failure_code ?? null
    };
}


/** The legs a stored transaction posts, each with its instant. */
export interface Posting {
    legs: Leg[];
    at: string;
}

/** The legs a stored transaction posts as the API did: its move's at created_at, its settlement's at settles_at. */
export function transactionLegs(row: Record<string, unknown>): { made: Posting; settlement?: Posting } {

    // A stored row is one toRow() made: its settlement fields are all set.
    return legsOf({
        type: row.type === 'withdrawal' ? 'withdrawal' : 'deposit',
        amount: Number(row.amount),
        created_at: String(row.created_at),
        status: row.status === 'pending' ? 'pending' : row.status === 'failed' ? 'failed' : 'completed',
        settles_at: String(row.settles_at)
    });
}


// The legs of a transaction and of its settlement, once settled, each with its instant.
function legsOf(transaction: Pick<TransactionRecord, 'type' | 'amount' | 'created_at'> & Pick<Settled, 'status' | 'settles_at'>): { made: Posting; settlement?: Posting } {

    const { type, amount, created_at: created, status, settles_at: due } = transaction;
    const delayed = due > created || status === 'pending';
    const made = { legs: creationLegs(type, delayed, amount), at: created };
    return status !== 'pending' && delayed ? { made, settlement: { legs: settlementLegs(type, status, amount), at: due } } : { made };
}


/**
 * Orders transactions as the API could have made them: by created_at, and at one instant deposits before withdrawals,
 * else in the order given (sorts are stable). Ids say nothing of the order (they may be random), and a frozen clock
 * gives every move one instant: deposits first within it never lowers a running balance below what the order they
 * were made in had.
 */
export function byTimeOrder(a: Record<string, unknown>, b: Record<string, unknown>): number {

    const order = (x: string, y: string) => Number(x > y) - Number(x < y);
    return order(String(a.created_at), String(b.created_at)) || Number(a.type === 'withdrawal') - Number(b.type === 'withdrawal');
}

// Every transaction of the fixture, with its index, in time order.
function inTimeOrder(transactions: TransactionRecord[]): [TransactionRecord, number][] {

    return transactions.map((transaction, index): [TransactionRecord, number] => [transaction, index]).sort(([a], [b]) => byTimeOrder(a, b));
}


// Why a transaction's settlement is not one the API could have written, or null: the field and the reason.
function settlementProblem(transaction: TransactionRecord, provider: ProviderTerms): [field: string, message: string] | null {

    const { type, amount, created_at: created } = transaction;
    const { status, settles_at: due, settled_at: settled, failure_code: code } = settlementFields(transaction);
    const seconds = settlementSeconds(provider, type);
    const expected = settlesAt(created, seconds);
    if (due !== expected) {
        return ['settles_at', `${due} is not when a ${type} through provider ${String(transaction.provider_id)} made at ${created} settles: ${expected}`];
    }

    const outcome = settlementOf(provider.failure_mode, amount);
    if (status === 'pending' ? seconds === 0 : status !== outcome.status) {
        return ['status', status === 'pending' ? `A ${type} through provider ${String(transaction.provider_id)} settles at once: it is never pending` :
            `A ${type} of ${amount} through provider ${String(transaction.provider_id)} settles ${outcome.status}, not ${status}`];
    }

    if (settled !== (status === 'pending' ? null : due)) {
        return ['settled_at', status === 'pending' ? 'A pending transaction has not settled: settled_at must be null' : `A transaction settles when it is due: settled_at must be its settles_at, ${due}`];
    }

    if (code !== (status === 'pending' ? null : outcome.failure_code)) {
        return ['failure_code', status === 'failed' ? `A failed transaction carries why: failure_code must be ${String(outcome.failure_code)}` : `Only a failed transaction carries a failure_code: it must be null`];
    }

    return null;
}


// What a walk of the ledger holds: each wallet's accounts by asset and kind, and the clearing account of each provider and asset.
class RunningLedger {

    readonly wallets = new Map<string, Map<string, Record<AccountKind, number>>>();
    readonly clearing = new Map<string, number>();

    account(walletId: string, code: string): Record<AccountKind, number> {

        const assets = this.wallets.get(walletId) ?? new Map<string, Record<AccountKind, number>>();
        this.wallets.set(walletId, assets);
        const accounts = assets.get(code) ?? { available: 0, pending_in: 0, pending_out: 0 };
        assets.set(code, accounts);
        return accounts;
    }

    post(transaction: TransactionRecord, legs: Leg[]): void {

        const { wallet_id: walletId, provider_id: providerId, asset: code } = transaction;
        for (const { account, amount } of legs) {
            if (account === 'clearing') {
                this.clearing.set(`${providerId} ${code}`, (this.clearing.get(`${providerId} ${code}`) ?? 0) + amount);
            }
            else {
                this.account(walletId, code)[account] += amount;
            }
        }
    }

    balances(walletId: string): WalletBalance[] {

        return [...this.wallets.get(walletId) ?? []]
            .map(([code, { available, pending_in: incoming, pending_out: outgoing }]) => ({ asset: code, amount: available, pending_in: incoming, pending_out: outgoing }))
            .sort(byAsset);
    }
}


// Walks the moves and the settlements in time order with running balances, each move decided by the API's own rule as
// it was made; a settlement due at the instant of a move comes first, as the timeline applies what is due before it.
function checkTransactions(transactions: TransactionRecord[], wallets: WalletRecord[], refuse: FixtureRefusal): void {

    const walletsById = new Map(wallets.map((wallet) => [wallet.id, wallet]));
    const ledger = new RunningLedger();
    const settlements: { at: string; transaction: TransactionRecord; legs: Leg[] }[] = [];
    const settleUntil = (until: string) => {

        settlements.sort((a, b) => Number(a.at > b.at) - Number(a.at < b.at));
        let next = settlements[0];
        while (next && next.at <= until) {
            ledger.post(next.transaction, next.legs);
            settlements.shift();
            next = settlements[0];
        }
    };

    for (const [transaction, index] of inTimeOrder(transactions)) {
        const walletId = transaction.wallet_id;
        const wallet = walletsById.get(walletId);
        if (!wallet) {
            refuse('transactions', index, 'wallet_id', `${JSON.stringify(walletId)} names no wallet of this fixture: a transaction loads with its wallet`);
        }

        if (transaction.created_at < wallet.created_at) {
            refuse('transactions', index, 'created_at', `${transaction.created_at} is before its wallet was opened (${wallet.created_at})`);
        }

        settleUntil(transaction.created_at);
        const { type, asset: code, amount, provider_id: providerId } = transaction;
        const provider = Object.hasOwn(payProviders, providerId) ? payProviders[providerId] : undefined;
        const assetStage = provider && Object.hasOwn(provider.assets, code) ? provider.assets[code] : undefined;
        const stage = assetStage === undefined ? undefined : { stage: assetStage };
        const accounts = ledger.account(walletId, code);
        const balances = { wallet: accounts.available, incoming: accounts.pending_in, outgoing: accounts.pending_out, clearing: ledger.clearing.get(`${providerId} ${code}`) ?? 0 };
        const decision = transferDecision(type, { idempotencyKey: '', providerId, asset: code, amount, metadata: {} }, provider, stage, balances);
        if ('refusal' in decision) {
            refuse('transactions', index, decision.refusal.field, `${decision.refusal.message} (${decision.refusal.code}, as of this transaction)`);
        }

        const problem = settlementProblem(transaction, decision.terms);
        if (problem) {
            refuse('transactions', index, problem[0], problem[1]);
        }

        const { made, settlement } = legsOf({ ...transaction, ...settlementFields(transaction) });
        ledger.post(transaction, made.legs);
        if (settlement) {
            settlements.push({ transaction, ...settlement });
        }
    }

    // What is still due after the last move settles too: every instant sorts before U+FFFF.
    settleUntil('\uffff');

    // A wallet's balances, when given, must be what its transactions add up to.
    wallets.forEach((wallet, index) => {

        const totals = ledger.balances(wallet.id);
        const given = wallet.balances;
        const shown = given?.map(({ asset: code, amount, pending_in: incoming, pending_out: outgoing }) => ({ asset: code, amount, pending_in: incoming, pending_out: outgoing })).sort(byAsset);
        if (shown && JSON.stringify(shown) !== JSON.stringify(totals)) {
            refuse('wallets', index, 'balances', `${JSON.stringify(given)} is not what its transactions add up to: ${JSON.stringify(totals)}`);
        }
    });
}


const wallets: FixtureCollection<WalletRecord, object, { accounts: AccountRow[] }> = {
    schema: recordSchema<WalletRecord>({
        owner_id: visibleText(200).required(),
        balances: Joi.array().items(Joi.object({
            asset: asset.required(),
            amount: Joi.number().integer().min(0).max(maxBalance).required(),
            pending_in: Joi.number().integer().min(0).max(maxBalance).default(0),
            pending_out: Joi.number().integer().min(0).max(maxBalance).default(0)
        }))
    }),
    references: {},
    // One wallet per caller; a stored wallet of the same id must be this one, as its transactions move it.
    unique: [['owner_id']],
    matchStored: true,
    toRow: ({ balances, ...row }) => row,
    // A wallet's balances are those of its ledger accounts, by asset and kind, as the API shows them.
    reads: ['accounts'],
    fromRow(row, { accounts }) {

        const ledger = new RunningLedger();
        const id = String(row.id);
        for (const account of accounts.filter(({ wallet_id: walletId }) => walletId === id)) {
            ledger.account(id, account.asset)[account.kind] += Number(account.balance);
        }

        return { id: row.id, owner_id: row.owner_id, balances: ledger.balances(id), created_at: row.created_at };
    }
};

const transactions: FixtureCollection<TransactionRecord, { wallets?: WalletRecord[] }> = {
    schema: recordSchema<TransactionRecord>({
        wallet_id: recordId.required(),
        type: Joi.string().valid('deposit', 'withdrawal').required(),
        asset: asset.required(),
        amount: Joi.number().integer().min(1).max(maxAmount).required(),
        provider_id: recordId.required(),
        status: Joi.string().valid('pending', 'completed', 'failed').default('completed'),
        settles_at: utcTimestamp(),
        settled_at: utcTimestamp().allow(null),
        failure_code: Joi.string().valid('returned').allow(null),
        metadata: metadataSchema.default({})
    }),
    references: { wallet_id: () => 'wallets', provider_id: () => 'providers' },
    // A stored transaction of the same id is the same move, or the balances checked would not be those stored.
    matchStored: true,
    toRow: (value) => ({ ...value, ...settlementFields(value), metadata: storedMetadata(value.metadata) }),
    fromRow: (row) => recordOf(row, ['id', 'wallet_id', 'type', 'asset', 'amount', 'provider_id', 'status', 'created_at', 'settles_at', 'settled_at', 'failure_code', 'metadata'], readers),
    // Walked in time order with the API's rule for each move: provider, asset, stage and running balances.
    check: (records, { wallets: loaded = [] }, refuse) => checkTransactions(records, loaded, refuse)
};


export const payFixture: FixtureSpec = { wallets, transactions };

