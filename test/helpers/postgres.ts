import Crypto from 'node:crypto';
import ChildProcess from 'node:child_process';

import type { Server } from '@hapi/hapi';
import Pg from 'pg';

import type { Options } from '../../lib';
import { sqliteDatabase } from '../../lib/storage/sqlite/engine';
import { ci } from './browser';
import { testServer } from './server';
import { insertRows } from './sqlite';


// The PostgreSQL the tests use: LOCALGATE_TEST_PG_URL, else the one every machine of the project runs. Each test
// server gets a database of its own, dropped when the server stops.
export const pgUrl = process.env.LOCALGATE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';


// Asked once, synchronously, so that a test file can decide at load time whether its PostgreSQL lane runs.
const reachable = ChildProcess.spawnSync(process.execPath, ['-e', `
    const client = new (require('pg').Client)({ connectionString: process.argv[1], connectionTimeoutMillis: 3000 });
    client.connect().then(() => client.end()).then(() => process.exit(0), () => process.exit(1));
`, pgUrl], { cwd: __dirname, timeout: 10_000 }).status === 0;


/** Whether PostgreSQL tests skip: no server answers and this is not CI (where a missing server fails them). */
export function skipWithoutPostgres(what: string): boolean {

    const skip = !reachable && !ci;
    if (skip) {
        process.stderr.write(`skipping ${what}: no PostgreSQL answers at ${pgUrl} (set LOCALGATE_TEST_PG_URL)\n`);
    }

    return skip;
}


/** The engines a test file that drives routes runs on: SQLite always, PostgreSQL where one answers (always under CI). */
export const engines: ('sqlite' | 'postgres')[] = reachable || ci ? ['sqlite', 'postgres'] : ['sqlite'];


/** The URL of a database on the test server, with another database name. */
export function databaseUrl(name: string): string {

    const url = new URL(pgUrl);
    url.pathname = `/${name}`;
    return url.toString();
}


/** Runs SQL on the test server's maintenance database. */
export async function adminQuery(text: string, url = pgUrl): Promise<Pg.QueryResult> {

    const client = new Pg.Client({ connectionString: url });
    await client.connect();
    try {
        return await client.query(text);
    }
    finally {
        await client.end();
    }
}


/** A new empty database; returns its URL and a drop() that removes it with every connection to it. */
export async function freshDatabase(): Promise<{ name: string; url: string; drop(): Promise<void> }> {

    const name = `localgate_test_${Crypto.randomBytes(6).toString('hex')}`;
    await adminQuery(`CREATE DATABASE ${name}`);
    return {
        name,
        url: databaseUrl(name),
        drop: async () => {

            await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        }
    };
}


/** A test server on SQLite in memory, or on a fresh PostgreSQL database dropped when the server stops. */
export async function engineServer(engine: 'sqlite' | 'postgres', options: Options = {}): Promise<Server> {

    if (engine === 'sqlite') {
        return testServer(options);
    }

    const database = await freshDatabase();
    try {
        const server = await testServer({ databaseUrl: database.url, database: { poolMax: 4 }, ...options });
        server.ext('onPostStop', () => database.drop());
        return server;
    }
    catch (err) {
        await database.drop();
        throw err;
    }
}


/** Inserts rows below every rule of the API into a namespace's tables, on whichever engine the server keeps it. */
export async function insertRecords(server: Server, namespace: 'commerce' | 'logistics', table: string, rows: Record<string, unknown>[]): Promise<void> {

    const location = server.app.localgate.settings.placements[namespace];
    if (location.engine === 'sqlite') {
        insertRows(sqliteDatabase(server.app.localgate.data, namespace), table, rows);
        return;
    }

    const client = new Pg.Client({ connectionString: location.url });
    await client.connect();
    try {
        await client.query(`SET search_path TO ${namespace}`);
        for (const row of rows) {
            const names = Object.keys(row);
            await client.query(`INSERT INTO "${table}" (${names.join(', ')}) VALUES (${names.map((_, index) => `$${index + 1}`).join(', ')})`, Object.values(row));
        }
    }
    finally {
        await client.end();
    }
}
