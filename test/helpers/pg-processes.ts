import Crypto from 'node:crypto';
import Fs from 'node:fs';

import Code from '@hapi/code';
import Pg from 'pg';

import { mintToken } from '../../lib';
import { freshDatabase } from './postgres';
import { runCli, spawnServer, type SpawnedServer } from './processes';
import { tempDir } from './server';


// Server processes over one PostgreSQL database, for the process lane: a database per test, the processes that share
// it, SQL on it from the test, and HTTP to the processes with minted tokens.

const { expect } = Code;


export type Database = Awaited<ReturnType<typeof freshDatabase>>;


export interface Reply {
    status: number;
    text: string;
    body: { id?: string; code?: string; total?: number; [key: string]: unknown };
    replayed: boolean;
}


export interface PayKeys {
    PAY_DB_URL: string;
    PAY_DB_PUBLISHABLE_KEY: string;
    PAY_DB_SECRET_KEY: string;
}


export function measured(what: string, numbers: object): void {

    if (process.env.LOCALGATE_TEST_MEASURE === '1') {
        process.stderr.write(`\n  ${what}: ${JSON.stringify(numbers)}\n`);
    }
}


/** Runs SQL with parameters on one database of the test server. */
export async function query<Row extends Pg.QueryResultRow = Record<string, unknown>>(url: string, text: string, values: unknown[] = []): Promise<Row[]> {

    const client = new Pg.Client({ connectionString: url });
    await client.connect();
    try {
        return (await client.query<Row>(text, values)).rows;
    }
    finally {
        await client.end();
    }
}


export async function count(url: string, text: string, values: unknown[] = []): Promise<number> {

    const [row] = await query<{ count: number }>(url, `SELECT (${text})::int AS count`, values);
    return row!.count;
}


export async function send(url: string, secret: string, subject: string, payload?: object, headers: Record<string, string> = {}): Promise<Reply> {

    const res = await fetch(url, {
        method: payload ? 'POST' : 'GET',
        headers: { authorization: `Bearer ${mintToken(secret, subject)}`, 'content-type': 'application/json', ...headers },
        body: payload ? JSON.stringify(payload) : undefined
    });

    const text = await res.text();
    return { status: res.status, text, body: text ? JSON.parse(text) : {}, replayed: res.headers.get('idempotent-replayed') === 'true' };
}


/** A fresh database, a data directory and a secret for the processes of one test; run() gets the settings they share. */
export async function withDatabase(run: (database: Database, env: NodeJS.ProcessEnv, secret: string) => Promise<void>): Promise<void> {

    const database = await freshDatabase();
    const dataDir = tempDir();
    const secret = Crypto.randomBytes(32).toString('hex');
    try {
        // Small pools whose requests wait for a connection rather than answer 503: the in-process lane uses the same
        // PostgreSQL server at the same time, within its 100 connections.
        const pools = { DB_POOL_MAX: '4', DB_CONNECT_TIMEOUT_MS: '30000' };
        await run(database, { DATABASE_URL: database.url, ...pools, AUTH_JWT_SECRET: secret, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent' }, secret);
    }
    finally {
        await database.drop();
        Fs.rmSync(dataDir, { recursive: true, force: true });
    }
}


/** Starts processes at once with the same settings; if any fails to listen, stops the others and throws. */
export async function startAll(env: NodeJS.ProcessEnv, processes = 4): Promise<SpawnedServer[]> {

    const started = await Promise.allSettled(Array.from({ length: processes }, () => spawnServer(env)));
    const servers = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const failed = started.find((result) => result.status === 'rejected');
    if (failed) {
        await stopAll(servers);
        throw failed.reason;
    }

    return servers;
}


export async function stopAll(servers: SpawnedServer[]): Promise<void> {

    const started = performance.now();
    await Promise.all(servers.map((server) => server.stop()));
    measured('stopped', { ms: Math.round(performance.now() - started) });
}


/** Settings, servers, and a guarantee that the servers stop before the database is dropped. */
export async function withServers(env: NodeJS.ProcessEnv, run: (servers: SpawnedServer[]) => Promise<void>, servers?: SpawnedServer[]): Promise<void> {

    const running = servers ?? await startAll(env);
    try {
        await run(running);
    }
    finally {
        await stopAll(running);
    }
}


/** Provisions pay on the database with the CLI and returns the three settings it prints. */
export async function provisionPayWithCli(url: string, secret: string): Promise<PayKeys> {

    const result = await runCli(['provision', 'pay'], { PAY_DB_URL: url, AUTH_JWT_SECRET: secret });
    expect(result.code, result.stderr).to.equal(0);

    const printed: Record<string, string> = {};
    for (const line of result.stdout.split('\n')) {
        const match = /^(PAY_DB_\w+)=(.*)$/.exec(line);
        if (match) {
            // Values are printed shell-quoted when they need it: 'it'\''s'.
            const value = match[2]!;
            printed[match[1]!] = value.startsWith('\'') ? value.slice(1, -1).replaceAll('\'\\\'\'', '\'') : value;
        }
    }

    expect(Object.keys(printed).sort()).to.equal(['PAY_DB_PUBLISHABLE_KEY', 'PAY_DB_SECRET_KEY', 'PAY_DB_URL']);
    expect(printed.PAY_DB_URL).to.equal(url);
    return printed as unknown as PayKeys;
}
