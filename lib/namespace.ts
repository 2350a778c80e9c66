import type { Plugin } from '@hapi/hapi';
import type Joi from 'joi';

import type { RecordContext } from './record-context';
import type { TimedStore } from './transitions';
import type { FixtureSpec } from './fixtures';


// What a namespace declares, below both the namespaces (which declare it) and storage (which reads it): this module
// imports neither, so that the engines name no namespace.

/**
 * Each engine's handle on a namespace's database, added by its own folder (storage/sqlite/open.ts,
 * storage/postgres/database.ts), so that these declarations, and the package's public types, name no driver's types.
 */
export interface EngineHandles {
    readonly [engine: string]: unknown;
}

/**
 * How a namespace's store is made over each engine's database. PostgreSQL's factory is loaded as a namespace is
 * placed there, so that a start on SQLite never requires `pg`.
 */
export interface StoreFactories<Store> {
    sqlite(db: EngineHandles['sqlite'], context: RecordContext): Store;
    postgres(): Promise<(db: EngineHandles['postgres'], context: RecordContext) => Store>;
}

/** How an engine writes its nth parameter (1-based): ? for SQLite, $n for PostgreSQL. */
export type Placeholder = (n: number) => string;

/**
 * What a namespace posts after a fixture's rows are stored, in the same transaction: for each added record of one
 * collection, in an order, the steps it takes (pay: each transaction to the ledger, in the order its check walked
 * them, its move and, once settled, its settlement).
 */
export interface FixturePosting {
    readonly collection: string;
    order(a: Record<string, unknown>, b: Record<string, unknown>): number;
    /** The statements of the posting by name, in an engine's placeholders. */
    statements(placeholder: Placeholder): Record<string, string>;
    /** What posting one record runs, in order: each statement by name, with its parameters. */
    steps(row: Record<string, unknown>): [statement: string, params: unknown[]][];
}


/**
 * How a namespace's database becomes ready, its readiness policy: `migrated` where the settings place it as the server
 * starts (its <NAME>_DB_URL, else DATABASE_URL, else the data directory), and ready from then on; `provisioned` on its
 * own, by a command that records a key pair (pay): ready once its database records the settings' pair and every
 * migration (storage/readiness.ts), followed without a restart. In memory a provisioned namespace is migrated as it is
 * made, so ready.
 */
export type Readiness = 'migrated' | 'provisioned';

/**
 * An event type a namespace writes: what it says happened, in one line, and the schema of its `data`, which is the
 * response schema of the record it announces (so that a field added to the record reaches the event's schema).
 */
export interface EventTypeSpec {
    readonly description: string;
    readonly data: Joi.ObjectSchema;
}

/** A migration body every event-writing namespace shares: migrations/<engine>/outbox/<name>.sql. */
export type OutboxMigration = 'events' | 'endpoint_state';

/**
 * A namespace as one registered unit: what registration, the settings, /health, the demo loader, fixtures and export,
 * the console's live log and the OpenAPI tags read of it. A server's namespaces are one list (`Settings.namespaces`).
 */
export interface Namespace<Store = unknown> {

    /** Its name: the /v1/<name> prefix, the OpenAPI tag, the database's file or schema and its <NAME>_DB_URL. */
    readonly name: string;

    /** What it holds, in the OpenAPI tag's words. */
    readonly description: string;

    /** Its routes, registered under /v1/<name>. */
    readonly plugin: Plugin<void>;

    readonly readiness: Readiness;

    /** The folder that holds its migrations as <engine>/<name>/NNN_name.sql. */
    readonly migrations: string;

    /**
     * The collections a fixture or an export fills in it, its demo data file (a fixture of them), loaded into empty
     * databases unless the settings say not to, and what it posts after a fixture's rows are stored (pay's ledger).
     */
    readonly fixture?: { collections: FixtureSpec; demo?: string; posting?: FixturePosting };

    /** Its store over each engine's database; none for a namespace that keeps no records. */
    readonly stores?: StoreFactories<Store>;

    /**
     * Whether its changes write events: the outbox migrations (the tables of storage's EventLog, one body for every
     * namespace) spliced into its own at the versions named here, recorded as NNN_<outbox migration>.
     */
    readonly events?: { readonly migrations: Readonly<Record<number, OutboxMigration>> };

    /** The event types its changes write, by type: what the event catalogue and the AsyncAPI document list of it. */
    readonly eventTypes?: Readonly<Record<string, EventTypeSpec>>;

    /** The event types of its transitions (records that move with the clock), each one of `eventTypes`: what a move of the clock counts. */
    readonly transitions?: readonly string[];

    /** Whether the console's live log shows its success bodies (error bodies are always shown). */
    readonly liveBodies: boolean;

    /**
     * Its store as the timeline sees it, when its records move with time (pending moves, bookings, offers). What is
     * pending must be rows of the store's database, and `nextDue()` must answer from them alone: an instance's
     * database still the image it was copied from, in which the store once found nothing pending, is not asked again
     * until a request opens it (data-set/timed-stores.ts).
     */
    timed?(store: Store): TimedStore;

    /** The first read a test makes of it, run on an instance made ahead so that its statements are prepared. */
    warmUp?(store: Store): Promise<unknown>;
}

/** What a namespace's database is made from: its name, its migrations (the outbox's among them), and its collections with their demo data. */
export type NamespaceSchema = Pick<Namespace, 'name' | 'migrations' | 'fixture' | 'events'>;
