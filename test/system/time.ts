import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { mintToken, provisionPay } from '../../lib';
import { count, measured, provisionPayWithCli, query, send, startAll, stopAll, withDatabase, type Database } from '../helpers/pg-processes';
import { skipWithoutPostgres } from '../helpers/postgres';
import { spawnServer, statusCounts, type SpawnedServer } from '../helpers/processes';
import { tempDir } from '../helpers/server';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


// Time across processes and restarts, through real HTTP: pending bank transfers made over four `localgate start`
// processes on one PostgreSQL database settle exactly once each, by a move of the frozen clocks or by the wall clock's
// poll, also when one process is killed with SIGKILL as it applies them; and a server on files stopped with transfers
// pending applies what fell due at its next start, before its first answer. LOCALGATE_TEST_MEASURE=1 prints what
// each run applied where.

const skip = skipWithoutPostgres('test/system/time.ts');
const start = '2030-01-01T00:00:00.000Z';
const deposits = 300;
const payers = 10;

interface Movement {
    subject: string;
    amount: number;
    key: string;
}

interface ClockAnswer {
    now: string;
    frozen: string | null;
    applied: Record<string, number>;
    attempted: number;
    remaining: number;
}

interface Transaction {
    id: string;
    type: string;
    amount: number;
    status: string;
    settles_at: string;
    settled_at: string | null;
    failure_code: string | null;
}


/** 300 deposits over ten payers; no amount ends in 99, so every one of them completes when it settles. */
function depositPlan(): Movement[] {

    return Array.from({ length: deposits }, (_, i) => ({ subject: `payer-${i % payers}`, amount: 100 * (i + 1) + (i % 50), key: Crypto.randomUUID() }));
}


function admin(secret: string): Record<string, string> {

    return { authorization: `Bearer ${mintToken(secret, 'time-admin', 3600, { admin: true })}`, 'content-type': 'application/json' };
}


async function moveClock(server: SpawnedServer, secret: string, move: { advance: string } | { now: string }): Promise<ClockAnswer> {

    const res = await fetch(`${server.url}/_clock`, { method: 'PUT', headers: admin(secret), body: JSON.stringify(move) });
    const text = await res.text();
    expect(res.status, text).to.equal(200);
    return JSON.parse(text) as ClockAnswer;
}


async function readClock(server: SpawnedServer, secret: string): Promise<{ now: string; frozen: string | null }> {

    const res = await fetch(`${server.url}/_clock`, { headers: admin(secret) });
    expect(res.status).to.equal(200);
    return await res.json() as { now: string; frozen: string | null };
}


/** Sends the plan's deposits through bank-transfer at once, spread over the servers: every one answers pending. */
async function depositAll(servers: SpawnedServer[], secret: string, plan: Movement[]): Promise<void> {

    const replies = await Promise.all(plan.map((movement, i) => {

        const payload = { provider_id: 'bank-transfer', asset: 'USD', amount: movement.amount };
        return send(`${servers[i % servers.length]!.url}/v1/pay/gateway/deposit`, secret, movement.subject, payload, { 'idempotency-key': movement.key });
    }));

    expect(statusCounts(replies)).to.equal({ '201': deposits });
    expect(new Set(replies.map((reply) => reply.body.status))).to.equal(new Set(['pending']));
}


/** Four processes started at once with the same settings: the last is the one a test kills, the others survive it. */
async function fourProcesses(env: NodeJS.ProcessEnv): Promise<{ all: SpawnedServer[]; victim: SpawnedServer; survivors: [SpawnedServer, SpawnedServer, SpawnedServer] }> {

    const all = await startAll(env, 4);
    const [first, second, third, victim] = all;
    if (!first || !second || !third || !victim) {
        await stopAll(all);
        throw new Error(`${all.length} processes started, not 4`);
    }

    return { all, victim, survivors: [first, second, third] };
}


/** Waits, looking every 10 ms, until the database holds at least so many completed transactions; answers how many it saw. */
async function completedAtLeast(database: Database, least: number, timeoutMs: number): Promise<number> {

    const started = performance.now();
    for (;;) {
        const completed = await count(database.url, `SELECT count(*) FROM pay.transactions WHERE status = 'completed'`);
        if (completed >= least) {
            return completed;
        }

        if (performance.now() - started > timeoutMs) {
            throw new Error(`${completed} of ${least} transactions completed after ${timeoutMs} ms`);
        }

        await new Promise((resolve) => setTimeout(resolve, 10));
    }
}


/**
 * Each deposit of the plan settled once: completed at its own due instant, with exactly the four entries a settled
 * deposit posts (clearing into pending_in as it was made, pending_in into available as it settled), every wallet's
 * balance its deposits' sum with nothing pending, read in the database and through a process's API.
 */
async function expectSettledOnce(database: Database, server: SpawnedServer, secret: string, plan: Movement[]): Promise<void> {

    expect(await count(database.url, 'SELECT count(*) FROM pay.transactions')).to.equal(deposits);
    const statuses = await query<{ status: string; n: number }>(database.url, 'SELECT status, count(*)::int AS n FROM pay.transactions GROUP BY status');
    expect(statuses).to.equal([{ status: 'completed', n: deposits }]);
    expect(await count(database.url, 'SELECT count(*) FROM pay.transactions WHERE settled_at IS DISTINCT FROM settles_at')).to.equal(0);

    // Per transaction: four entries summing to zero, the pending_in account back at zero, the available one up by the amount.
    const wrong = await query(database.url, `SELECT t.id FROM pay.transactions t
        JOIN pay.entries e ON e.transaction_id = t.id JOIN pay.accounts a ON a.id = e.account_id
        GROUP BY t.id, t.amount
        HAVING count(*) <> 4 OR sum(e.amount) <> 0
            OR coalesce(sum(e.amount) FILTER (WHERE a.wallet_id IS NOT NULL AND a.kind = 'pending_in'), 0) <> 0
            OR coalesce(sum(e.amount) FILTER (WHERE a.wallet_id IS NOT NULL AND a.kind = 'available'), 0) <> t.amount
            OR coalesce(sum(e.amount) FILTER (WHERE a.wallet_id IS NULL), 0) <> -t.amount`);
    expect(wrong).to.equal([]);
    expect(await count(database.url, 'SELECT count(*) FROM pay.entries')).to.equal(4 * deposits);
    expect(await count(database.url, 'SELECT count(*) FROM pay.accounts a WHERE a.balance <> (SELECT coalesce(sum(amount), 0) FROM pay.entries WHERE account_id = a.id)')).to.equal(0);

    const owed = new Map<string, number>();
    for (const movement of plan) {
        owed.set(movement.subject, (owed.get(movement.subject) ?? 0) + movement.amount);
    }

    for (const [subject, amount] of owed) {
        const wallet = await send(`${server.url}/v1/pay/wallet`, secret, subject);
        expect(wallet.status).to.equal(200);
        expect(wallet.body.balances, subject).to.equal([{ asset: 'USD', amount, pending_in: 0, pending_out: 0 }]);
    }
}


describe('pending moves settled by four processes on one PostgreSQL database (slow)', { skip, timeout: 180_000 }, () => {

    it('settles 300 deposits exactly once when four frozen clocks advance together and one process is killed with SIGKILL as it applies them', async () => {

        await withDatabase(async (database, env, secret) => {

            const pay = await provisionPayWithCli(database.url, secret);
            const { all: servers, victim, survivors } = await fourProcesses({ ...env, ...pay, SEED: 'none', CLOCK: start, DB_STATEMENT_TIMEOUT_MS: '60000' });
            try {
                const plan = depositPlan();
                await depositAll(servers, secret, plan);
                expect(await count(database.url, `SELECT count(*) FROM pay.transactions WHERE status = 'pending' AND settles_at = '2030-01-03T00:00:00.000Z'`)).to.equal(deposits);

                // Every process advances its own clock three days. The fourth goes first, so that some of what it
                // applies is committed before the others join; it dies once a sixth has settled, in the middle.
                const victimMove = moveClock(victim, secret, { advance: '3d' });
                const victimAnswer = victimMove.then(() => 'answered', () => 'no answer');
                const byVictim = await completedAtLeast(database, 10, 120_000);
                const moves = survivors.map((server) => moveClock(server, secret, { advance: '3d' }));
                const killedAt = await completedAtLeast(database, deposits / 6, 120_000);
                await victim.stop('SIGKILL');
                expect(await victimAnswer).to.equal('no answer');

                const answers = await Promise.all(moves);
                for (const answer of answers) {
                    expect(answer.now).to.equal('2030-01-04T00:00:00.000Z');
                    expect(Object.keys(answer.applied).filter((type) => type !== 'pay.transaction.completed')).to.equal([]);
                }

                // A later move on a survivor finds nothing left: what the dead process held rolled back and was taken.
                const after = await moveClock(survivors[0], secret, { advance: '1s' });
                expect(after.applied).to.equal({});

                const bySurvivors = answers.map((answer) => answer.applied['pay.transaction.completed'] ?? 0);
                const total = bySurvivors.reduce((sum, applied) => sum + applied, 0);
                // What the dead process committed before it died stays applied, and nothing is applied twice.
                expect(deposits - total).to.be.at.least(byVictim);
                measured('300 deposits, four frozen clocks advanced, one killed', { byVictimBeforeOthers: byVictim, killedAt, bySurvivors, byVictim: deposits - total });

                await expectSettledOnce(database, survivors[1], secret, plan);
            }
            finally {
                await stopAll(survivors);
                await victim.stop('SIGKILL');
            }
        });
    });

    it('settles overdue deposits exactly once by the wall clock\'s poll of four processes, one of them killed with SIGKILL meanwhile', async () => {

        await withDatabase(async (database, env, secret) => {

            const pay = await provisionPayWithCli(database.url, secret);
            const shared = { ...env, ...pay, SEED: 'none', DB_STATEMENT_TIMEOUT_MS: '60000' };
            // A fifth process, its clock frozen years back, makes deposits that are overdue on the wall clock as they
            // are written; its own timeline never applies them (a frozen clock moves only when moved).
            const writer = await spawnServer({ ...shared, CLOCK: '2020-01-01T00:00:00.000Z' });
            const { victim, survivors } = await fourProcesses(shared).catch(async (err: unknown) => {

                await writer.stop();
                throw err;
            });
            try {
                const plan = depositPlan();
                const written = depositAll([writer], secret, plan);
                const killedAt = await completedAtLeast(database, deposits / 10, 120_000);
                await victim.stop('SIGKILL');
                await written;

                const settled = await completedAtLeast(database, deposits, 120_000);
                measured('300 overdue deposits settled by the poll, one poller killed', { killedAt, settled });
                expect(await count(database.url, `SELECT count(*) FROM pay.transactions WHERE settles_at <> '2020-01-03T00:00:00.000Z'`)).to.equal(0);
                await expectSettledOnce(database, survivors[0], secret, plan);
            }
            finally {
                await stopAll([...survivors, writer]);
                await victim.stop('SIGKILL');
            }
        });
    });

    it('starts each process at CLOCK again after a restart, where the processes serving one database each keep a clock of their own', async () => {

        await withDatabase(async (database, env, secret) => {

            const first = await spawnServer({ ...env, SEED: 'none', CLOCK: start });
            try {
                expect((await moveClock(first, secret, { advance: '1d' })).now).to.equal('2030-01-02T00:00:00.000Z');
            }
            finally {
                await first.stop();
            }

            // The same data directory and the same CLOCK: on files this would go on from the moved clock.
            const again = await spawnServer({ ...env, SEED: 'none', CLOCK: start });
            try {
                expect(await readClock(again, secret)).to.equal({ now: start, frozen: start });
                expect(Fs.existsSync(Path.join(env.DATA_DIR ?? '', 'clock.json'))).to.be.false();
            }
            finally {
                await again.stop();
            }
        });
    });
});


describe('a server on files restarted with moves pending', { timeout: 120_000 }, () => {

    async function filesServer(dataDir: string, env: NodeJS.ProcessEnv, clock: string): Promise<SpawnedServer> {

        return await spawnServer({ ...env, DATA_DIR: dataDir, CLOCK: clock, SEED: 'none' });
    }

    async function transactions(server: SpawnedServer, secret: string, subject: string): Promise<Transaction[]> {

        const list = await send(`${server.url}/v1/pay/wallet/transactions?limit=100`, secret, subject);
        expect(list.status).to.equal(200);
        return (list.body.data as Transaction[]).sort((a, b) => a.amount - b.amount);
    }

    async function payOnFiles(): Promise<{ dataDir: string; env: NodeJS.ProcessEnv; secret: string }> {

        const dataDir = tempDir();
        const secret = Crypto.randomBytes(32).toString('hex');
        const credentials = await provisionPay(Path.join(dataDir, 'pay.db'));
        return { dataDir, secret, env: { ...credentials, AUTH_JWT_SECRET: secret } };
    }

    it('applies what fell due before its first answer when started again with a later CLOCK', async () => {

        const { dataDir, env, secret } = await payOnFiles();
        try {
            const first = await filesServer(dataDir, env, start);
            try {
                // 500 at once, then through bank-transfer: 700 settling in two days, 399 returned, a withdrawal of 200 settling in one.
                const moves = [
                    ['deposit', 'sandbox', 500],
                    ['deposit', 'bank-transfer', 700],
                    ['deposit', 'bank-transfer', 399],
                    ['withdraw', 'bank-transfer', 200]
                ] as const;
                for (const [direction, provider, amount] of moves) {
                    const reply = await send(`${first.url}/v1/pay/gateway/${direction}`, secret, 'restarter', { provider_id: provider, asset: 'USD', amount }, { 'idempotency-key': Crypto.randomUUID() });
                    expect(reply.status, reply.text).to.equal(201);
                }

                const wallet = await send(`${first.url}/v1/pay/wallet`, secret, 'restarter');
                expect(wallet.body.balances).to.equal([{ asset: 'USD', amount: 300, pending_in: 1099, pending_out: 200 }]);
            }
            finally {
                expect(await first.stop()).to.equal(0);
            }

            // Another CLOCK starts over, three days on: the first answer already shows every move settled at its due instant.
            const later = await filesServer(dataDir, env, '2030-01-04T00:00:00.000Z');
            try {
                const settled = await transactions(later, secret, 'restarter');
                expect(settled.map(({ type, amount, status, settles_at, settled_at, failure_code }) => ({ type, amount, status, settles_at, settled_at, failure_code }))).to.equal([
                    { type: 'withdrawal', amount: 200, status: 'completed', settles_at: '2030-01-02T00:00:00.000Z', settled_at: '2030-01-02T00:00:00.000Z', failure_code: null },
                    { type: 'deposit', amount: 399, status: 'failed', settles_at: '2030-01-03T00:00:00.000Z', settled_at: '2030-01-03T00:00:00.000Z', failure_code: 'returned' },
                    { type: 'deposit', amount: 500, status: 'completed', settles_at: start, settled_at: start, failure_code: null },
                    { type: 'deposit', amount: 700, status: 'completed', settles_at: '2030-01-03T00:00:00.000Z', settled_at: '2030-01-03T00:00:00.000Z', failure_code: null }
                ]);

                const wallet = await send(`${later.url}/v1/pay/wallet`, secret, 'restarter');
                expect(wallet.body.balances).to.equal([{ asset: 'USD', amount: 1000, pending_in: 0, pending_out: 0 }]);
                expect(await readClock(later, secret)).to.equal({ now: '2030-01-04T00:00:00.000Z', frozen: '2030-01-04T00:00:00.000Z' });
            }
            finally {
                expect(await later.stop()).to.equal(0);
            }
        }
        finally {
            Fs.rmSync(dataDir, { recursive: true, force: true });
        }
    });

    it('goes on from where the clock stood when started again with the same CLOCK, applying nothing until it is moved', async () => {

        const { dataDir, env, secret } = await payOnFiles();
        try {
            const first = await filesServer(dataDir, env, start);
            try {
                const reply = await send(`${first.url}/v1/pay/gateway/deposit`, secret, 'stayer', { provider_id: 'bank-transfer', asset: 'USD', amount: 700 }, { 'idempotency-key': Crypto.randomUUID() });
                expect(reply.status).to.equal(201);
                expect(await moveClock(first, secret, { advance: '1d' })).to.equal({ now: '2030-01-02T00:00:00.000Z', frozen: '2030-01-02T00:00:00.000Z', applied: {}, attempted: 0, remaining: 0 });
            }
            finally {
                expect(await first.stop()).to.equal(0);
            }

            const again = await filesServer(dataDir, env, start);
            try {
                expect(await readClock(again, secret)).to.equal({ now: '2030-01-02T00:00:00.000Z', frozen: '2030-01-02T00:00:00.000Z' });
                const [pending] = await transactions(again, secret, 'stayer');
                expect(pending).to.include({ status: 'pending', settles_at: '2030-01-03T00:00:00.000Z', settled_at: null });

                expect(await moveClock(again, secret, { advance: '1d' })).to.equal({ now: '2030-01-03T00:00:00.000Z', frozen: '2030-01-03T00:00:00.000Z', applied: { 'pay.transaction.completed': 1 }, attempted: 0, remaining: 0 });
                const wallet = await send(`${again.url}/v1/pay/wallet`, secret, 'stayer');
                expect(wallet.body.balances).to.equal([{ asset: 'USD', amount: 700, pending_in: 0, pending_out: 0 }]);
            }
            finally {
                expect(await again.stop()).to.equal(0);
            }
        }
        finally {
            Fs.rmSync(dataDir, { recursive: true, force: true });
        }
    });
});
