import Joi from 'joi';

import { recordId, utcTimestamp, visibleText } from '../../fields';
import type { FixtureSpec } from '../../fixtures';
import { maxAmount, maxBalance } from './rules';


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
function recordOf(row: Record<string, unknown>, fields: string[]): Record<string, unknown> {

    return Object.fromEntries(fields.map((field) => [field, field === 'amount' ? Number(row[field]) : row[field]]));
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
        toRow: (value) => value,
        fromRow: (row) => recordOf(row, ['id', 'wallet_id', 'type', 'asset', 'amount', 'provider_id', 'status', 'created_at']),
        check: (transactions, { wallets = [] }, refuse) => {

            // Deposits and withdrawals add up per wallet and asset; a wallet's balances, when given, must be those sums.
            const sums = new Map<string, Map<string, number>>(wallets.map((wallet) => [wallet.id as string, new Map()]));
            transactions.forEach((transaction, index) => {

                const sum = sums.get(transaction.wallet_id as string);
                if (!sum) {
                    return refuse('transactions', index, 'wallet_id', `${JSON.stringify(transaction.wallet_id)} names no wallet of this fixture: a transaction loads with its wallet`);
                }

                const amount = transaction.amount as number;
                const total = (sum.get(transaction.asset as string) ?? 0) + (transaction.type === 'deposit' ? amount : -amount);
                return sum.set(transaction.asset as string, total);
            });

            wallets.forEach((wallet, index) => {

                const totals = [...sums.get(wallet.id as string)!].map(([code, amount]) => ({ asset: code, amount })).sort(byAsset);
                const overdrawn = totals.find((balance) => balance.amount < 0 || balance.amount > maxBalance);
                if (overdrawn) {
                    refuse('wallets', index, 'balances', `its ${overdrawn.asset} transactions add up to ${overdrawn.amount}, outside 0 to ${maxBalance}`);
                }

                const given = wallet.balances as { asset: string; amount: number }[] | undefined;
                if (given && JSON.stringify(given.map(({ asset: code, amount }) => ({ asset: code, amount })).sort(byAsset)) !== JSON.stringify(totals)) {
                    refuse('wallets', index, 'balances', `${JSON.stringify(given)} is not what its transactions add up to: ${JSON.stringify(totals)}`);
                }
            });
        }
    }
};

