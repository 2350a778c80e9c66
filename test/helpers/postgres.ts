import Crypto from 'node:crypto';

import type { Server } from '@hapi/hapi';
import Pg from 'pg';

import { provisionPay, type Options } from '../../lib';
import type { PayKeys } from '../../lib/storage/pay-keys';
import { testServer } from './server';


// The PostgreSQL the tests use: LOCALGATE_TEST_PG_URL, else the one every machine of the project runs.
const pgUrl = process.env.LOCALGATE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

// Decided once by .labrc.js, which asks the server before any test file loads.
const skipped = process.env.LOCALGATE_TEST_PG_LANE === 'skipped';


/**
 * Whether a part of the PostgreSQL lane skips: no server answers and this is not CI (where a missing server fails
 * it). The lab settings print the one line that says so for the whole run; what only names the part for the reader.
 */
export function skipWithoutPostgres(what: string): boolean {

    return skipped;
}


/** The engines a test file that drives routes runs on: SQLite always, PostgreSQL where one answers (always under CI). */
export const engines: ('sqlite' | 'postgres')[] = skipped ? ['sqlite'] : ['sqlite', 'postgres'];


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


/** Runs one statement in a schema of a database on the test server, `?` marking each parameter, and returns its rows. */
export async function schemaQuery(url: string, schema: string, text: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {

    let index = 0;
    const client = new Pg.Client({ connectionString: url });
    await client.connect();
    try {
        await client.query(`SET search_path TO ${schema}`);
        return (await client.query(text.replace(/\?/g, () => `$${++index}`), params)).rows as Record<string, unknown>[];
    }
    finally {
        await client.end();
    }
}


/** A throw-away database on the test server. */
export interface TestDatabase {
    name: string;
    url: string;
    /** Removes the database with every connection to it. */
    drop(): Promise<void>;
}


/** A new database: empty, or a copy of a template database that nobody is connected to. */
export async function freshDatabase(template?: string): Promise<TestDatabase> {

    const name = `localgate_test_${Crypto.randomBytes(6).toString('hex')}`;
    await adminQuery(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
    return {
        name,
        url: databaseUrl(name),
        drop: async () => {

            await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        }
    };
}


/**
 * A test server on SQLite in memory, or on a fresh PostgreSQL database (a copy of the template, when one is named)
 * dropped when the server stops. With pay keys, pay is served from that same database, provisioned with them.
 */
export async function engineServer(engine: 'sqlite' | 'postgres', options: Options = {}, template?: string, pay?: PayKeys): Promise<Server> {

    if (engine === 'sqlite') {
        return testServer(options);
    }

    const database = await freshDatabase(template);
    try {
        const server = await testServer(onDatabase(database, pay ? { pay: { url: database.url, ...pay }, ...options } : options));
        server.ext('onPostStop', () => database.drop());
        return server;
    }
    catch (err) {
        await database.drop();
        throw err;
    }
}


/**
 * A database as a server's start leaves it (migrated, and seeded unless the options say not), for engineServer to
 * copy: a copy costs a fraction of migrating and seeding again. With pay keys, pay is provisioned in it with them.
 * Drop it when done.
 */
export async function templateDatabase(options: Options = {}, pay?: PayKeys): Promise<TestDatabase> {

    const database = await freshDatabase();
    try {
        const server = await testServer(onDatabase(database, options));
        await server.stop();
        if (pay) {
            await provisionPay(database.url, { poolMax: 1, connectTimeoutMs: 5000, statementTimeoutMs: 10_000 }, pay);
        }

        return database;
    }
    catch (err) {
        await database.drop();
        throw err;
    }
}


function onDatabase(database: TestDatabase, options: Options): Options {

    return { databaseUrl: database.url, database: { poolMax: 4 }, ...options };
}


/** Inserts rows below every rule of the API into a namespace's tables on the PostgreSQL database a server keeps it in. */
export async function insertRecords(server: Server, namespace: 'commerce' | 'logistics', table: string, rows: Record<string, unknown>[]): Promise<void> {

    const location = server.app.localgate.settings.placements[namespace];
    if (location?.engine !== 'postgres') {
        throw new Error(`The server keeps ${namespace} on ${location?.engine ?? 'no engine'}, not on PostgreSQL`);
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
