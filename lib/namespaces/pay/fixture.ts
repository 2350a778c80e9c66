import Joi from 'joi';

import { recordId, utcTimestamp, visibleText } from '../../fields';
import { recordOf, type FixtureRefusal, type FixtureSpec } from '../../fixtures';
import { maxAmount, maxBalance, transferRefusal, type ProviderTerms } from './rules';
import type { TransactionType } from './store';


// Pay records as the API shows them, each transaction with the wallet it moved. Balances are not stored as given: the
// ledger is written as the API writes it (an account per wallet and asset, a clearing account per provider and asset,
// two entries per transaction), so a wallet's balances must be exactly what its transactions add up to.

function record(keys: Joi.PartialSchemaMap): Joi.ObjectSchema {

    return Joi.object({ id: recordId.min(1), created_at: utcTimestamp(), ...keys });
}

const asset = Joi.string().pattern(/^[A-Z]{3,12}$/).messages({ 'string.pattern.base': '{{#label}} must be a currency code or token symbol in upper case (USD, MIT)' });

// Balances are listed by asset, in code point order as the API lists them.
function byAsset(a: { asset: string }, b: { asset: string }): number {

    return Number(a.asset > b.asset) - Number(a.asset < b.asset);
}

// Reads back what PostgreSQL gives as text (bigint) as a number.
const readers = { amount: (row: Record<string, unknown>) => Number(row.amount) };

// The deposit currencies every provider row of the migrations moves, and the stage of each token type they ship.
const currencies = ['EUR', 'GBP', 'JPY', 'KES', 'USD'];
const tokenStages: Record<string, string> = { MIT: 'live', MXT: 'pilot', NST: 'planned' };

/** A provider as the migrations fix it: its terms, and the stage of each asset it moves (null for a currency). */
export interface FixtureProvider extends ProviderTerms {
    assets: Record<string, string | null>;
}

/** The providers the pay migrations ship, which fixtures move money through (a fixture adds none). */
export const payProviders: Record<string, FixtureProvider> = {
    sandbox: {
        status: 'active', supports_deposit: true, supports_withdrawal: true,
        assets: { ...Object.fromEntries(currencies.map((code) => [code, null])), ...tokenStages }
    },
    'legacy-bank': { status: 'disabled', supports_deposit: true, supports_withdrawal: true, assets: { EUR: null, USD: null } }
};


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
function inTimeOrder(transactions: Record<string, unknown>[]): [Record<string, unknown>, number][] {

    return transactions.map((transaction, index) => [transaction, index] as [Record<string, unknown>, number]).sort(([a], [b]) => byTimeOrder(a, b));
}


// Walks the transactions in time order with running balances, each decided by the API's own rule as it was made.
function checkTransactions(transactions: Record<string, unknown>[], wallets: Record<string, unknown>[], refuse: FixtureRefusal): void {

    const walletsById = new Map(wallets.map((wallet) => [wallet.id as string, wallet]));
    const sums = new Map<string, Map<string, number>>(wallets.map((wallet) => [wallet.id as string, new Map()]));
    const clearing = new Map<string, number>();
    for (const [transaction, index] of inTimeOrder(transactions)) {
        const walletId = transaction.wallet_id as string;
        const wallet = walletsById.get(walletId);
        if (!wallet) {
            refuse('transactions', index, 'wallet_id', `${JSON.stringify(walletId)} names no wallet of this fixture: a transaction loads with its wallet`);
        }

        if (String(transaction.created_at) < String(wallet.created_at)) {
            refuse('transactions', index, 'created_at', `${String(transaction.created_at)} is before its wallet was opened (${String(wallet.created_at)})`);
        }

        const { type, asset: code, amount, provider_id: providerId } = transaction as { type: TransactionType; asset: string; amount: number; provider_id: string };
        const provider = Object.hasOwn(payProviders, providerId) ? payProviders[providerId] : undefined;
        const stage = provider && Object.hasOwn(provider.assets, code) ? { stage: provider.assets[code]! } : undefined;
        const sum = sums.get(walletId)!;
        const balances = { wallet: sum.get(code) ?? 0, clearing: clearing.get(`${providerId} ${code}`) ?? 0 };
        const refusal = transferRefusal(type, { idempotencyKey: '', providerId, asset: code, amount }, provider, stage, balances);
        if (refusal) {
            refuse('transactions', index, refusal.field!, `${refusal.message} (${refusal.code}, as of this transaction)`);
        }

        const signed = type === 'deposit' ? amount : -amount;
        sum.set(code, balances.wallet + signed);
        clearing.set(`${providerId} ${code}`, balances.clearing - signed);
    }

    // A wallet's balances, when given, must be what its transactions add up to.
    wallets.forEach((wallet, index) => {

        const totals = [...sums.get(wallet.id as string)!].map(([code, amount]) => ({ asset: code, amount })).sort(byAsset);
        const given = wallet.balances as { asset: string; amount: number }[] | undefined;
        if (given && JSON.stringify(given.map(({ asset: code, amount }) => ({ asset: code, amount })).sort(byAsset)) !== JSON.stringify(totals)) {
            refuse('wallets', index, 'balances', `${JSON.stringify(given)} is not what its transactions add up to: ${JSON.stringify(totals)}`);
        }
    });
}


export const payFixture: FixtureSpec = {
    wallets: {
        schema: record({
            owner_id: visibleText(200).required(),
            balances: Joi.array().items(Joi.object({
                asset: asset.required(),
                amount: Joi.number().integer().min(0).max(maxBalance).required()
            }))
        }),
        references: {},
        // One wallet per caller; a stored wallet of the same id must be this one, as its transactions move it.
        unique: [['owner_id']],
        matchStored: true,
        toRow: ({ balances, ...row }) => row,
        // A wallet's balances are those of its ledger accounts, by asset, as the API shows them.
        reads: ['accounts'],
        fromRow: (row, { accounts }) => ({
            id: row.id,
            owner_id: row.owner_id,
            balances: accounts!.filter((account) => account.wallet_id === row.id)
                .map((account) => ({ asset: account.asset as string, amount: Number(account.balance) }))
                .sort(byAsset),
            created_at: row.created_at
        })
    },
    transactions: {
        schema: record({
            wallet_id: recordId.required(),
            type: Joi.string().valid('deposit', 'withdrawal').required(),
            asset: asset.required(),
            amount: Joi.number().integer().min(1).max(maxAmount).required(),
            provider_id: recordId.required(),
            status: Joi.string().valid('completed').default('completed')
        }),
        references: { wallet_id: () => 'wallets', provider_id: () => 'providers' },
        // A stored transaction of the same id is the same move, or the balances checked would not be those stored.
        matchStored: true,
        toRow: (value) => value,
        fromRow: (row) => recordOf(row, ['id', 'wallet_id', 'type', 'asset', 'amount', 'provider_id', 'status', 'created_at'], readers),
        // Walked in time order with the API's rule for each move: provider, asset, stage and running balances.
        check: (transactions, { wallets = [] }, refuse) => checkTransactions(transactions, wallets, refuse)
    }
};

