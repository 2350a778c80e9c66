import Crypto from 'node:crypto';
import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';
import Sqlite from 'better-sqlite3';

import { mintToken, provisionPay } from '../../lib';
import { expectLedgerExact, type PaySql } from '../helpers/ledger';
import { measured, send, type Reply } from '../helpers/pg-processes';
import { freshDatabase, schemaQuery, skipWithoutPostgres } from '../helpers/postgres';
import { spawnServer, type SpawnedServer } from '../helpers/processes';
import { seeded } from '../helpers/seeded';
import { tempDir } from '../helpers/server';
import { until } from '../helpers/until';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


// A bank test of pay's ledger, after Jepsen's: four `localgate start` processes on one pay database (PostgreSQL, then
// a SQLite file), two on the wall clock and two on frozen clocks three days back, take a seeded mix of instant and
// pending deposits and withdrawals for six wallets, some sent twice at once with one Idempotency-Key to two
// processes. The frozen clocks are moved forward as the load goes (settlements by clock moves, racing the wall
// clock's for the same pending moves), and one wall-clock process is killed with SIGKILL mid-way and started again.
// Then: every acknowledged move is in the ledger once, every refused one is absent, a move whose answer the kill lost
// is there at most once (and a retry with its key says which), every pending move settled exactly once, no wallet
// account ever went below zero, and every balance is the sum of its entries and of the client's acknowledged moves.
// LOCALGATE_TEST_MEASURE=1 prints the figures.

const day = 24 * 60 * 60 * 1000;
const subjects = ['ada', 'bea', 'cyd', 'dov', 'eli', 'fox'];
const assets = ['USD', 'EUR'];
// Moves, clients sending them at once, the answers after which the victim is killed, clock steps and their length.
const total = 300;
const clients = 16;
const killAt = 120;
const clockSteps = 16;
const clockStep = '6h';

type Direction = 'deposit' | 'withdraw';

interface Move {
    key: string;
    subject: string;
    direction: Direction;
    provider: 'sandbox' | 'bank-transfer';
    asset: string;
    amount: number;
    /** Sent twice at once, to two processes, with the one key. */
    twice: boolean;
}

/** An answer as the client got it, or none: the connection broke as the process it went to was killed. */
type Answer = Reply | 'lost';

interface StoredMove {
    id: string;
    key: string;
    type: string;
    amount: number;
    status: string;
    pending: boolean;
}

/** The pay database the processes share, as the test reaches it. */
interface Bank {
    /** The settings every process starts with (each adds a data directory of its own, and maybe a clock). */
    env: NodeJS.ProcessEnv;
    sql: PaySql;
    /** The instant of the database's clock (PostgreSQL's, for wall-clock records there) as an ISO string. */
    now: () => Promise<string>;
    close: () => Promise<void>;
}


/** A fresh pay database on PostgreSQL, provisioned. */
async function postgresBank(secret: string): Promise<Bank> {

    const database = await freshDatabase();
    const credentials = await provisionPay(database.url, { poolMax: 1, connectTimeoutMs: 5000, statementTimeoutMs: 10_000 });
    const sql: PaySql = (text, ...params) => schemaQuery(database.url, 'pay', text, params);
    return {
        // Small pools whose requests wait for a connection rather than answer 503: other tests share the server.
        env: { ...credentials, AUTH_JWT_SECRET: secret, SEED: 'none', DB_POOL_MAX: '4', DB_CONNECT_TIMEOUT_MS: '30000' },
        sql,
        now: async () => String((await sql(`SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS now`))[0]!.now),
        close: () => database.drop()
    };
}


/** A fresh pay file, provisioned. */
async function sqliteBank(secret: string): Promise<Bank> {

    const credentials = await provisionPay(Path.join(tempDir(), 'pay.db'));
    const sql: PaySql = (text, ...params) => {

        const db = new Sqlite(credentials.PAY_DB_URL, { readonly: true });
        try {
            return Promise.resolve(db.prepare(text).all(...params) as Record<string, unknown>[]);
        }
        finally {
            db.close();
        }
    };

    return { env: { ...credentials, AUTH_JWT_SECRET: secret, SEED: 'none' }, sql, now: () => Promise.resolve(new Date().toISOString()), close: () => Promise.resolve() };
}


/** The seeded mix: a quarter each of instant and pending deposits and withdrawals; a bank transfer ending in 99 fails as it settles. */
function plan(seed: number): Move[] {

    const random = seeded(seed);
    const moves: Move[] = [];
    for (let i = 0; i < total; ++i) {
        const roll = random();
        const direction: Direction = roll < 0.5 ? 'deposit' : 'withdraw';
        const provider = roll < 0.25 || (roll >= 0.5 && roll < 0.75) ? 'sandbox' : 'bank-transfer';
        const base = 1 + Math.floor(random() * (direction === 'deposit' ? 6 : 5));
        const amount = base * 100 + (provider === 'bank-transfer' && random() < 0.2 ? 99 : Math.floor(random() * 99));
        moves.push({ key: Crypto.randomUUID(), subject: subjects[Math.floor(random() * subjects.length)]!, direction, provider, asset: assets[Math.floor(random() * assets.length)]!, amount, twice: i % 9 === 0 });
    }

    return moves;
}


function payload(move: Move): object {

    return { provider_id: move.provider, asset: move.asset, amount: move.amount, metadata: { move: move.key } };
}


async function sendMove(server: SpawnedServer, secret: string, move: Move): Promise<Answer> {

    try {
        return await send(`${server.url}/v1/pay/gateway/${move.direction}`, secret, move.subject, payload(move), { 'idempotency-key': move.key });
    }
    catch {
        return 'lost';
    }
}


/** Moves a process's frozen clock; answers how many transitions the move applied. */
async function moveClock(server: SpawnedServer, secret: string, to: { advance: string } | { now: string }): Promise<number> {

    const res = await fetch(`${server.url}/_clock`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${mintToken(secret, 'clock', 3600, { admin: true })}`, 'content-type': 'application/json' },
        body: JSON.stringify(to)
    });
    const text = await res.text();
    expect(res.status, text).to.equal(200);
    return Object.values((JSON.parse(text) as { applied: Record<string, number> }).applied).reduce((sum, n) => sum + n, 0);
}


async function wallet(server: SpawnedServer, secret: string, subject: string): Promise<{ asset: string; amount: number; pending_in: number; pending_out: number }[]> {

    const reply = await send(`${server.url}/v1/pay/wallet`, secret, subject);
    expect(reply.status, reply.text).to.equal(200);
    return reply.body.balances as { asset: string; amount: number; pending_in: number; pending_out: number }[];
}


/** The transactions of the ledger by the key each move carried in its metadata. */
async function storedByKey(bank: Bank): Promise<Map<string, StoredMove[]>> {

    const byKey = new Map<string, StoredMove[]>();
    for (const row of await bank.sql('SELECT id, type, amount, status, created_at, settles_at, metadata FROM transactions')) {
        const key = String((JSON.parse(String(row.metadata)) as { move?: string }).move);
        const stored = { id: String(row.id), key, type: String(row.type), amount: Number(row.amount), status: String(row.status), pending: row.created_at !== row.settles_at };
        byKey.set(key, [...byKey.get(key) ?? [], stored]);
    }

    return byKey;
}


async function bankTest(bank: Bank, secret: string, seed: number): Promise<void> {

    const started = performance.now();
    const frozenAt = new Date(Date.now() - 3 * day).toISOString();
    const dirs = [tempDir(), tempDir(), tempDir(), tempDir()];
    const envOf = (i: number) => ({ ...bank.env, DATA_DIR: dirs[i], ...(i >= 2 ? { CLOCK: frozenAt } : {}) });
    const servers = await Promise.all(dirs.map((_, i) => spawnServer(envOf(i))));
    const running = new Set(servers);
    try {
        const [wall, victim, ...frozen] = servers as [SpawnedServer, SpawnedServer, SpawnedServer, SpawnedServer];

        // Every wallet starts with funds in both assets, through the first process, acknowledged.
        const moves: Move[] = subjects.flatMap((subject) => assets.map((asset) => ({ key: Crypto.randomUUID(), subject, direction: 'deposit' as const, provider: 'sandbox' as const, asset, amount: 2000, twice: false })));
        const answers = new Map<string, Answer[]>();
        for (const move of moves) {
            const answer = await sendMove(wall, secret, move);
            expect(answer !== 'lost' && answer.status).to.equal(201);
            answers.set(move.key, [answer]);
        }

        moves.push(...plan(seed));
        const live = [...servers];
        let next = subjects.length * assets.length;
        let answered = 0;
        let done = false;
        let killedAt = 0;
        const client = async (): Promise<void> => {

            while (next < moves.length) {
                const i = next++;
                const move = moves[i]!;
                // A key sent twice goes to the wall-clock processes (to the survivor twice, once one is killed): a key's
                // retention is read on the clock of the process that reads it, so a key a frozen clock three days behind
                // wrote is past its 24 hours for the wall clock, which prunes it, and a second send then moves again.
                const walls = live.filter((server) => !frozen.includes(server));
                const targets = move.twice ? [walls[i % walls.length]!, walls[(i + 1) % walls.length]!] : [live[i % live.length]!];
                answers.set(move.key, await Promise.all(targets.map((target) => sendMove(target, secret, move))));
                answered += 1;
                if (killedAt === 0 && answered >= killAt) {
                    killedAt = answered;
                    live.splice(live.indexOf(victim), 1);
                    running.delete(victim);
                    process.kill(victim.pid, 'SIGKILL');
                }
            }
        };

        // A condition for until: so many answers in, or the load over.
        const reached = (count: number) => {

            return () => done || answered >= count;
        };

        // The frozen clocks take turns to step forward as the answers come, settling what falls due on the way.
        let clockSettled = 0;
        let clockMoves = 0;
        const clock = async (): Promise<void> => {

            for (let i = 1; i <= clockSteps && !done; ++i) {
                await until(`${i * total / clockSteps} answers`, reached(i * total / clockSteps), { timeoutMs: 60_000 });
                clockSettled += await moveClock(frozen[i % 2]!, secret, { advance: clockStep });
                clockMoves += 1;
            }
        };

        // Balances read through the API as the load goes: none is ever below zero.
        let samples = 0;
        const sampler = async (): Promise<void> => {

            while (!done) {
                const seen = answered;
                for (const balance of await wallet(wall, secret, subjects[samples % subjects.length]!)) {
                    expect(Math.min(balance.amount, balance.pending_in, balance.pending_out), JSON.stringify(balance)).to.be.at.least(0);
                }

                samples += 1;
                await until('more answers', reached(seen + 10), { timeoutMs: 60_000 });
            }
        };

        const load = Promise.all(Array.from({ length: clients }, client)).finally(() => {

            done = true;
        });
        await Promise.all([load, clock(), sampler()]);
        const loadMs = Math.round(performance.now() - started);
        expect(killedAt).to.equal(killAt);

        // The killed process starts again on its data directory; under the wall clock it applies what fell due as it
        // starts (on PostgreSQL the survivor's poll has been applying it all along): then nothing due is pending.
        const restarted = await spawnServer(envOf(1));
        running.add(restarted);
        const now = await bank.now();
        const dueWaitMs = await until('the wall clock to settle every move due by now', async () => {

            return (await bank.sql('SELECT id FROM transactions WHERE status = \'pending\' AND settles_at <= ?', now)).length === 0;
        }, { timeoutMs: 15_000, everyMs: 100 });

        // Every answer is a transaction, a refusal for want of funds, or lost to the kill; the answers to one key are
        // the same bytes. A move with no answer is in the ledger at most once, and a retry with its key says which.
        let stored = await storedByKey(bank);
        let indeterminate = 0;
        let resolvedPresent = 0;
        for (const move of moves) {
            const got = answers.get(move.key)!;
            const determinate = got.filter((answer): answer is Reply => answer !== 'lost');
            expect(new Set(determinate.map((answer) => answer.text)).size, `${move.key} ${determinate.map((answer) => `${answer.replayed} ${answer.text}`).join(' / ')}`).to.be.at.most(1);
            expect(determinate.filter((answer) => !answer.replayed).length, move.key).to.be.at.most(1);
            const found = stored.get(move.key) ?? [];
            expect(found.length, move.key).to.be.at.most(1);
            if (determinate.length === 0) {
                indeterminate += 1;
                const retry = await sendMove(wall, secret, move);
                expect(retry !== 'lost' && [201, 409].includes(retry.status), JSON.stringify(retry)).to.be.true();
                expect((retry as Reply).replayed, move.key).to.equal(found.length === 1);
                resolvedPresent += found.length;
                answers.set(move.key, [retry]);
            }
        }

        stored = await storedByKey(bank);
        const acknowledged: Move[] = [];
        for (const move of moves) {
            const answer = answers.get(move.key)!.find((got): got is Reply => got !== 'lost')!;
            const found = stored.get(move.key) ?? [];
            if (answer.status === 201) {
                expect(found.map(({ id, amount }) => ({ id, amount })), move.key).to.equal([{ id: answer.body.id!, amount: move.amount }]);
                acknowledged.push(move);
            }
            else {
                expect([answer.status, answer.body.code], move.key).to.equal([409, 'insufficient_funds']);
                expect(found, move.key).to.equal([]);
            }
        }

        expect([...stored.keys()].sort()).to.equal(acknowledged.map((move) => move.key).sort());

        // The last clock move, past every settlement: each pending move settled exactly once, by one mechanism or the other.
        const madePending = acknowledged.filter((move) => stored.get(move.key)![0]!.pending).length;
        const wallSettled = madePending - clockSettled - (await bank.sql('SELECT id FROM transactions WHERE status = \'pending\'')).length;
        clockSettled += await moveClock(frozen[0], secret, { now: new Date(Date.now() + 4 * day).toISOString() });
        clockMoves += 1;
        expect(await bank.sql('SELECT id FROM transactions WHERE status = \'pending\'')).to.equal([]);
        expect(clockSettled + wallSettled).to.equal(madePending);
        expect(clockSettled).to.be.above(0);
        expect(wallSettled).to.be.above(0);
        const entries = await bank.sql('SELECT t.id, t.created_at, t.settles_at, count(e.id) AS n FROM transactions t LEFT JOIN entries e ON e.transaction_id = t.id GROUP BY t.id, t.created_at, t.settles_at');
        expect(entries.filter((row) => Number(row.n) !== (row.created_at === row.settles_at ? 2 : 4))).to.equal([]);

        // No wallet account was ever below zero: the running sum of its entries, in the order they were written
        // (each under its account's lock), never drops under it.
        const [{ negative }] = await bank.sql(`SELECT count(*) AS negative FROM (SELECT sum(e.amount) OVER (PARTITION BY e.account_id ORDER BY e.id) AS running
            FROM entries e JOIN accounts a ON a.id = e.account_id WHERE a.wallet_id IS NOT NULL) runs WHERE running < 0`) as [{ negative: unknown }];
        expect(Number(negative)).to.equal(0);
        await expectLedgerExact(bank.sql);

        // Every wallet's balance, read through the API of each live process, is what its acknowledged moves make, as settled.
        stored = await storedByKey(bank);
        let checked = 0;
        for (const subject of subjects) {
            const expected = new Map<string, number>();
            for (const move of acknowledged.filter((candidate) => candidate.subject === subject)) {
                const { status } = stored.get(move.key)![0]!;
                if (status === 'completed') {
                    expected.set(move.asset, (expected.get(move.asset) ?? 0) + (move.direction === 'deposit' ? move.amount : -move.amount));
                }
            }

            for (const server of [...running]) {
                const balances = await wallet(server, secret, subject);
                expect(balances.map(({ asset, amount, pending_in: incoming, pending_out: outgoing }) => [asset, amount, incoming, outgoing]), subject)
                    .to.equal([...expected].sort(([a], [b]) => a.localeCompare(b)).map(([asset, amount]) => [asset, amount, 0, 0]));
                checked += balances.length;
            }
        }

        measured('bank test', {
            processes: servers.length, restarts: 1, moves: moves.length, sentTwice: moves.filter((move) => move.twice).length, acknowledged: acknowledged.length,
            refused: moves.length - acknowledged.length, kills: 1, killedAt, indeterminate, resolvedPresent, madePending, clockSettled, wallSettled, clockMoves,
            samples, balancesChecked: checked, loadMs, dueWaitMs, ms: Math.round(performance.now() - started)
        });
    }
    finally {
        await Promise.all([...running].map((server) => server.stop()));
    }
}


describe('pay ledger bank test: four processes, clocks frozen and wall, one killed', { timeout: 60_000 }, () => {

    it('keeps every acknowledged move once, no refused one, no balance below zero, on PostgreSQL', { skip: skipWithoutPostgres('the bank test on PostgreSQL') }, async () => {

        const secret = Crypto.randomBytes(32).toString('hex');
        const bank = await postgresBank(secret);
        try {
            await bankTest(bank, secret, 40);
        }
        finally {
            await bank.close();
        }
    });

    it('keeps every acknowledged move once, no refused one, no balance below zero, on a SQLite file', async () => {

        const secret = Crypto.randomBytes(32).toString('hex');
        await bankTest(await sqliteBank(secret), secret, 41);
    });
});
