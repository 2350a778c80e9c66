import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';
import type { Server } from '@hapi/hapi';
import Sqlite from 'better-sqlite3';

import { mintToken, provisionPay } from '../../lib';
import { binPath, spawnServer, type SpawnedServer } from '../helpers/processes';
import { seeded } from '../helpers/seeded';
import { tempDir, testServer } from '../helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


// Invariants of the ledger under concurrent deposits and withdrawals, through real HTTP: one server in this
// process, then several server processes sharing one pay file. Assertions hold for any interleaving.

type Direction = 'deposit' | 'withdraw';

interface Reply {
    status: number;
    text: string;
    replayed: boolean;
}

interface Order {
    base: string;
    subject: string;
    direction: Direction;
    asset: string;
    amount: number;
    key: string;
}

const assets = ['USD', 'MIT'];


/** A ledger that many HTTP clients can drive: where its servers listen and how to mint their tokens. */
interface Ledger {
    bases: string[];
    file: string;
    secret: string;
    /** The assets of every transaction made so far, as answered with 201. */
    moved: Set<string>;
}


async function provisioned(): Promise<{ file: string; pay: { url: string; publishableKey: string; secretKey: string } }> {

    const credentials = await provisionPay(Path.join(tempDir(), 'pay.db'));
    return {
        file: credentials.PAY_DB_URL,
        pay: { url: credentials.PAY_DB_URL, publishableKey: credentials.PAY_DB_PUBLISHABLE_KEY, secretKey: credentials.PAY_DB_SECRET_KEY }
    };
}


async function send(ledger: Ledger, order: Order): Promise<Reply> {

    const res = await fetch(`${order.base}/v1/pay/gateway/${order.direction}`, {
        method: 'POST',
        headers: {
            authorization: `Bearer ${mintToken(ledger.secret, order.subject)}`,
            'content-type': 'application/json',
            'idempotency-key': order.key
        },
        body: JSON.stringify({ provider_id: 'sandbox', asset: order.asset, amount: order.amount })
    });

    if (res.status === 201) {
        ledger.moved.add(order.asset);
    }

    return { status: res.status, text: await res.text(), replayed: res.headers.get('idempotent-replayed') === 'true' };
}


async function balances(ledger: Ledger, subject: string): Promise<Record<string, number>> {

    const res = await fetch(`${ledger.bases[0]}/v1/pay/wallet`, { headers: { authorization: `Bearer ${mintToken(ledger.secret, subject)}` } });
    expect(res.status).to.equal(200);
    const wallet = await res.json() as { balances: { asset: string; amount: number }[] };
    return Object.fromEntries(wallet.balances.map((balance) => [balance.asset, balance.amount]));
}


/** Many deposits and withdrawals for a few callers at once, some sent twice with the same key; checks every answer and the totals. */
async function mixedLoad(ledger: Ledger, subjects: string[], count: number, seed: number): Promise<void> {

    const random = seeded(seed);
    const orders: Order[] = [];
    for (let i = 0; i < count; ++i) {
        const direction: Direction = random() < 0.55 ? 'deposit' : 'withdraw';
        const order = {
            base: ledger.bases[i % ledger.bases.length]!,
            subject: subjects[Math.floor(random() * subjects.length)]!,
            direction,
            asset: assets[Math.floor(random() * assets.length)]!,
            amount: 1 + Math.floor(random() * (direction === 'deposit' ? 500 : 400)),
            key: Crypto.randomUUID()
        };
        orders.push(order);
        if (i % 7 === 0) {
            // A client retry with the same key, through another server when there are several.
            orders.push({ ...order, base: ledger.bases[(i + 1) % ledger.bases.length]! });
        }
    }

    const replies = await Promise.all(orders.map((order) => send(ledger, order)));

    // Every answer is a transaction or a refusal for want of funds, and all answers to one key are the same bytes.
    const byKey = new Map<string, { order: Order; replies: Reply[] }>();
    for (const [i, reply] of replies.entries()) {
        const order = orders[i]!;
        expect([201, 409], reply.text).to.include(reply.status);
        if (reply.status === 409) {
            expect(JSON.parse(reply.text).code).to.equal('insufficient_funds');
        }

        const group = byKey.get(order.key) ?? { order, replies: [] };
        group.replies.push(reply);
        byKey.set(order.key, group);
    }

    const net: Record<string, Record<string, number>> = {};
    for (const { order, replies: answers } of byKey.values()) {
        expect(new Set(answers.map((answer) => answer.text)).size).to.equal(1);
        expect(answers.filter((answer) => answer.replayed)).to.have.length(answers.length - 1);
        if (answers[0]!.status === 201) {
            expect(JSON.parse(answers[0]!.text).amount).to.equal(order.amount);
            net[order.subject] ??= {};
            net[order.subject]![order.asset] = (net[order.subject]![order.asset] ?? 0) + (order.direction === 'deposit' ? order.amount : -order.amount);
        }
    }

    expect(byKey.size).to.equal(count);
    // Deposits never want for funds, so exactly the callers who deposited hold a net movement.
    expect(Object.keys(net).sort()).to.equal([...new Set(orders.filter((order) => order.direction === 'deposit').map((order) => order.subject))].sort());

    for (const subject of subjects) {
        const held = await balances(ledger, subject);
        for (const asset of assets) {
            expect(held[asset] ?? 0, `${subject} ${asset}`).to.equal(net[subject]?.[asset] ?? 0);
        }
    }

    expectSoundLedger(ledger);
}


/** Checks the ledger in the file itself: balanced transactions, no negative wallet ever, balances that add up. */
function expectSoundLedger(ledger: Ledger): void {

    const db = new Sqlite(ledger.file, { readonly: true });
    try {
        const unbalanced = db.prepare(`SELECT t.id FROM transactions t
            LEFT JOIN entries e ON e.transaction_id = t.id LEFT JOIN accounts a ON a.id = e.account_id
            GROUP BY t.id
            HAVING count(e.id) <> 2 OR sum(e.amount) <> 0
                OR coalesce(sum(CASE WHEN a.wallet_id IS NOT NULL THEN e.amount END), 0) <> CASE t.type WHEN 'deposit' THEN t.amount ELSE -t.amount END`).all();
        expect(unbalanced).to.equal([]);

        const negative = db.prepare(`SELECT count(*) FROM (
            SELECT sum(e.amount) OVER (PARTITION BY e.account_id ORDER BY e.id) AS running
            FROM entries e JOIN accounts a ON a.id = e.account_id WHERE a.wallet_id IS NOT NULL) WHERE running < 0`).pluck().get();
        expect(negative).to.equal(0);

        const drift = db.prepare(`SELECT a.id FROM accounts a LEFT JOIN entries e ON e.account_id = a.id
            GROUP BY a.id HAVING a.balance <> coalesce(sum(e.amount), 0)`).all();
        expect(drift).to.equal([]);

        const perAsset = db.prepare(`SELECT t.asset,
                (SELECT sum(CASE type WHEN 'deposit' THEN amount ELSE -amount END) FROM transactions WHERE asset = t.asset) AS net,
                (SELECT sum(balance) FROM accounts WHERE wallet_id IS NOT NULL AND asset = t.asset) AS wallets,
                (SELECT sum(balance) FROM accounts WHERE asset = t.asset) AS everything
            FROM (SELECT DISTINCT asset FROM transactions) t`).all() as { asset: string; net: number; wallets: number; everything: number }[];
        expect(perAsset.map((row) => row.asset).sort()).to.equal([...ledger.moved].sort());
        for (const row of perAsset) {
            expect(row.wallets, row.asset).to.equal(row.net);
            expect(row.everything, row.asset).to.equal(0);
        }
    }
    finally {
        db.close();
    }
}


/** A hundred withdrawals of 10 at once against a balance of 100, spread over the servers: exactly ten succeed. */
async function drainRace(ledger: Ledger, subject: string): Promise<void> {

    const funded = await send(ledger, { base: ledger.bases[0]!, subject, direction: 'deposit', asset: 'USD', amount: 100, key: Crypto.randomUUID() });
    expect(funded.status).to.equal(201);

    const orders = ledger.bases.map((base) => ({ base, subject, direction: 'withdraw' as const, asset: 'USD', amount: 10 }));
    const replies = await Promise.all(Array.from({ length: 100 }, (_, i) => send(ledger, { ...orders[i % orders.length]!, key: Crypto.randomUUID() })));

    expect(replies.filter((reply) => reply.status === 201)).to.have.length(10);
    const refused = replies.filter((reply) => reply.status !== 201);
    expect(refused).to.have.length(90);
    for (const reply of refused) {
        expect(reply.status).to.equal(409);
        expect(JSON.parse(reply.text).code).to.equal('insufficient_funds');
    }

    expect(await balances(ledger, subject)).to.equal({ USD: 0 });
    expectSoundLedger(ledger);
}


/** The same key and body sent many times at once, over all servers: one transaction, the same bytes for everyone. */
async function duplicateBurst(ledger: Ledger, subject: string): Promise<void> {

    const key = Crypto.randomUUID();
    const orders = ledger.bases.map((base) => ({ base, subject, direction: 'deposit' as const, asset: 'MIT', amount: 42, key }));
    const replies = await Promise.all(Array.from({ length: 30 }, (_, i) => send(ledger, orders[i % orders.length]!)));

    expect(replies.map((reply) => reply.status)).to.only.include(201);
    expect(new Set(replies.map((reply) => reply.text)).size).to.equal(1);
    expect(replies.filter((reply) => reply.replayed)).to.have.length(29);
    expect(await balances(ledger, subject)).to.equal({ MIT: 42 });
}


describe('pay ledger under concurrent HTTP requests to one server', { timeout: 30_000 }, () => {

    let server: Server;
    let ledger: Ledger;

    before(async () => {

        const { file, pay } = await provisioned();
        server = await testServer({ pay, port: 0 });
        await server.start();
        ledger = { bases: [server.info.uri], file, secret: server.app.localgate.secret, moved: new Set() };
    });

    after(async () => {

        await server.stop();
    });

    it('lets exactly ten of a hundred concurrent withdrawals of 10 through against a balance of 100', async () => {

        await drainRace(ledger, 'racer');
    });

    it('moves money once for a burst of duplicates of one Idempotency-Key', async () => {

        await duplicateBurst(ledger, 'burster');
    });

    it('keeps every balance non-negative and every transaction balanced under a mixed load', async () => {

        await mixedLoad(ledger, ['ana', 'ben', 'cai', 'dee'], 300, 7);
    });
});


describe('pay ledger shared by several server processes', { timeout: 180_000 }, () => {

    const processes: SpawnedServer[] = [];
    let ledger: Ledger;

    before({ timeout: 120_000 }, async () => {

        expect(Fs.existsSync(Path.join(Path.dirname(binPath), '..', 'dist', 'cli', 'index.js')), 'run `npm run build` first').to.be.true();
        const { file, pay } = await provisioned();
        const secret = Crypto.randomBytes(32).toString('hex');
        const env = {
            PAY_DB_URL: pay.url,
            PAY_DB_PUBLISHABLE_KEY: pay.publishableKey,
            PAY_DB_SECRET_KEY: pay.secretKey,
            AUTH_JWT_SECRET: secret
        };

        // Each process has its own data directory; only the pay file is shared.
        processes.push(...await Promise.all([1, 2, 3].map(() => spawnServer({ ...env, DATA_DIR: tempDir() }))));
        ledger = { bases: processes.map((spawned) => spawned.url), file, secret, moved: new Set() };
    });

    after({ timeout: 60_000 }, async () => {

        await Promise.all(processes.map((spawned) => spawned.stop()));
    });

    it('lets exactly ten of a hundred concurrent withdrawals of 10 through, across processes', async () => {

        await drainRace(ledger, 'racer');
    });

    it('moves money once for duplicates of one Idempotency-Key arriving at different processes', async () => {

        await duplicateBurst(ledger, 'burster');
    });

    it('keeps every balance non-negative and every transaction balanced under a mixed load across processes', async () => {

        await mixedLoad(ledger, ['ana', 'ben', 'cai', 'dee'], 300, 11);
    });
});
