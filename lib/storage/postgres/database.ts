import Pg from 'pg';

import type { DatabaseSettings } from '../settings';
import { engineError, isRetryable } from './errors';


/** An SQL text with a statement name, typed by its parameters and rows: prepared once per connection under that name. */
export interface Query<Params extends unknown[], Row> {
    readonly name: string;
    readonly text: string;
    /** The positional values of the text, for a statement that takes one named row. */
    readonly values?: (params: Params) => unknown[];
    readonly types?: [Params, Row];
}

/** Names an SQL text and marks it with the types of its parameters and rows. */
export function sql<Params extends unknown[] = [], Row = never>(name: string, text: string): Query<Params, Row> {

    return { name, text };
}

/**
 * An INSERT of one named row: its columns become $1, $2, … in order, so that a store passes an object whose fields
 * cannot be transposed. `rest` follows the VALUES list (ON CONFLICT, RETURNING).
 */
export function insertRow<Row extends object, Out = never>(name: string, table: string, columns: readonly (keyof Row & string)[], rest = ''): Query<[Row], Out> {

    const text = `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map((_, index) => `$${index + 1}`).join(', ')}) ${rest}`;
    return { name, text: text.trim(), values: ([row]) => columns.map((column) => row[column]) };
}

/** What a store runs its statements on: the pool, or the one connection of a transaction. */
export interface Runner {
    rows<Params extends unknown[], Row>(query: Query<Params, Row>, ...values: Params): Promise<Row[]>;
    row<Params extends unknown[], Row>(query: Query<Params, Row>, ...values: Params): Promise<Row | undefined>;
    exec(text: string): Promise<void>;
}


// Serialization failures and deadlocks are retried this many times in all, with a short random pause between tries.
const maxAttempts = 5;


/** The pool of one namespace's schema on a PostgreSQL database: every connection's search_path is that schema. */
declare module '../../namespace' {
    interface EngineHandles {
        postgres: PgDatabase;
    }
}


export class PgDatabase implements Runner {

    readonly pool: Pg.Pool;

    constructor(readonly url: string, readonly schema: string, settings: DatabaseSettings) {

        this.pool = new Pg.Pool({
            connectionString: url,
            max: settings.poolMax,
            connectionTimeoutMillis: settings.connectTimeoutMs,
            // The server stops a statement that runs too long; the client gives up a little later, should the server not answer at all.
            statement_timeout: settings.statementTimeoutMs,
            query_timeout: settings.statementTimeoutMs + settings.connectTimeoutMs,
            idle_in_transaction_session_timeout: settings.statementTimeoutMs,
            application_name: `localgate ${schema}`,
            options: `-c search_path=${schema},public`
        });

        // An idle connection the server dropped is an error of the pool, not of a request: the next request reconnects.
        this.pool.on('error', () => undefined);
    }

    async rows<Params extends unknown[], Row>(query: Query<Params, Row>, ...values: Params): Promise<Row[]> {

        try {
            return (await this.pool.query<Row & Pg.QueryResultRow>({ name: query.name, text: query.text, values: positional(query, values) })).rows;
        }
        catch (err) {
            throw engineError(err);
        }
    }

    async row<Params extends unknown[], Row>(query: Query<Params, Row>, ...values: Params): Promise<Row | undefined> {

        return (await this.rows(query, ...values))[0];
    }

    async exec(text: string): Promise<void> {

        try {
            await this.pool.query(text);
        }
        catch (err) {
            throw engineError(err);
        }
    }

    /**
     * Runs work in one transaction on one connection and commits it; a serialization failure or deadlock runs it again
     * from the start, a bounded number of times. Any failure rolls back; the store sees domain errors only.
     *
     * The transaction is read committed whatever the database's default_transaction_isolation: the stores decide under
     * row and advisory locks, and read after taking them what the holder committed. Under a serializable default, a
     * snapshot taken before the lock would miss it (migrations applied twice) and every waiter on a hot row would fail
     * to serialize until its retries ran out. Work that wants one snapshot sets its own level first.
     */
    async transaction<T>(work: (tx: Runner) => Promise<T>): Promise<T> {

        for (let i = 1; ; ++i) {
            try {
                return await this.once(work);
            }
            catch (err) {
                if (!isRetryable(err) || i === maxAttempts) {
                    throw engineError(err);
                }

                await pause(i);
            }
        }
    }

    /** Ends every connection of the pool. */
    async close(): Promise<void> {

        await this.pool.end();
    }

    private async once<T>(work: (tx: Runner) => Promise<T>): Promise<T> {

        const client = await this.pool.connect();
        let broken: unknown;
        try {
            await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
            const result = await work(new ClientRunner(client));
            await client.query('COMMIT');
            return result;
        }
        catch (err) {
            broken = await client.query('ROLLBACK').then(() => undefined, (failure: unknown) => failure);
            throw err;
        }
        finally {
            // A connection whose rollback failed is in no known state: it leaves the pool.
            client.release(broken instanceof Error ? broken : undefined);
        }
    }
}


/** Statements on the one connection of a transaction; failures stay raw until the transaction decides on a retry. */
class ClientRunner implements Runner {

    constructor(private readonly client: Pg.PoolClient) { }

    async rows<Params extends unknown[], Row>(query: Query<Params, Row>, ...values: Params): Promise<Row[]> {

        return (await this.client.query<Row & Pg.QueryResultRow>({ name: query.name, text: query.text, values: positional(query, values) })).rows;
    }

    async row<Params extends unknown[], Row>(query: Query<Params, Row>, ...values: Params): Promise<Row | undefined> {

        return (await this.rows(query, ...values))[0];
    }

    async exec(text: string): Promise<void> {

        await this.client.query(text);
    }
}


function positional<Params extends unknown[]>(query: Query<Params, unknown>, values: Params): unknown[] {

    return query.values ? query.values(values) : values;
}


function pause(attempt: number): Promise<void> {

    return new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
}
