import Code from '@hapi/code';
import type { Server } from '@hapi/hapi';

import type { TimedStore } from '../../lib/transitions';
import { payNamespace } from '../../lib/namespaces/pay';


const { expect } = Code;


/** Runs one statement on a pay database, `?` marking each parameter on both engines, and returns its rows. */
export type PaySql = (text: string, ...params: unknown[]) => Promise<Record<string, unknown>[]>;


/**
 * The pay store of a server's default data set, or of one of its instances, as the timeline sees it: through the pay
 * descriptor's `timed` hook.
 */
export async function timedPay(server: Server, instanceId?: string): Promise<TimedStore> {

    const { localgate } = server.app;
    const readiness = await (instanceId === undefined ? localgate.data : localgate.instances.find(instanceId)?.data)?.readiness(payNamespace);
    if (!readiness?.ready || !payNamespace.timed) {
        throw new Error('Pay is not ready on this server, or its descriptor has no timed hook');
    }

    return payNamespace.timed(readiness.store);
}


/**
 * Asserts that a pay ledger is exact: the entries of every transaction sum to zero, every account's balance is the sum
 * of its entries, and each wallet's available, pending_in and pending_out per asset are what its transactions make:
 * completed moves count in available, a pending deposit in pending_in, a pending withdrawal in pending_out (and out of
 * available), a failed move nowhere.
 */
export async function expectLedgerExact(sql: PaySql): Promise<void> {

    expect(await sql('SELECT transaction_id FROM entries GROUP BY transaction_id HAVING sum(amount) <> 0'), 'unbalanced transactions').to.equal([]);
    expect(await sql(`SELECT a.id FROM accounts a LEFT JOIN entries e ON e.account_id = a.id
        GROUP BY a.id, a.balance HAVING a.balance <> coalesce(sum(e.amount), 0)`), 'accounts off their entries').to.equal([]);

    const expected = new Map<string, number>();
    const add = (key: string, amount: number) => expected.set(key, (expected.get(key) ?? 0) + amount);
    for (const { wallet_id: walletId, type, asset, amount, status } of await sql('SELECT wallet_id, type, asset, amount, status FROM transactions')) {
        const key = `${String(walletId)} ${String(asset)}`;
        const signed = type === 'deposit' ? Number(amount) : -Number(amount);
        if (status === 'completed') {
            add(`${key} available`, signed);
        }
        else if (status === 'pending' && type === 'deposit') {
            add(`${key} pending_in`, Number(amount));
        }
        else if (status === 'pending') {
            add(`${key} available`, signed);
            add(`${key} pending_out`, Number(amount));
        }
    }

    const held = (await sql('SELECT wallet_id, asset, kind, balance FROM accounts WHERE wallet_id IS NOT NULL'))
        .map(({ wallet_id: walletId, asset, kind, balance }) => [`${String(walletId)} ${String(asset)} ${String(kind)}`, Number(balance)] as const);
    const nonZero = (entries: Iterable<readonly [string, number]>) => [...entries].filter(([, amount]) => amount !== 0).sort(([a], [b]) => a.localeCompare(b));
    expect(nonZero(held), 'wallet balances').to.equal(nonZero(expected));
}
