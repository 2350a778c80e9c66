import type { Plugin } from '@hapi/hapi';

import type { TimedStore } from '../data-set/transitions';
import type { FixtureSpec } from '../fixtures';
import type { StoreFactories } from '../storage/engines';


/**
 * How a namespace's database becomes ready: `migrated` where the settings place it as the server starts (its
 * <NAME>_DB_URL, else DATABASE_URL, else the data directory); `provisioned` on its own, by a command (pay).
 */
export type Readiness = 'migrated' | 'provisioned';

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
     * The collections a fixture or an export fills in it, and its demo data file (a fixture of them), loaded into
     * empty databases unless the settings say not to.
     */
    readonly fixture?: { collections: FixtureSpec; demo?: string };

    /** Its store over each engine's database; none for a namespace that keeps no records. */
    readonly stores?: StoreFactories<Store>;

    /** Whether the console's live log shows its success bodies (error bodies are always shown). */
    readonly liveBodies: boolean;

    /** Its store as the timeline sees it, when its records move with time (pending moves, bookings, offers). */
    timed?(store: Store): TimedStore;

    /** The first read a test makes of it, run on an instance made ahead so that its statements are prepared. */
    warmUp?(store: Store): Promise<unknown>;
}

/** What a namespace's database is made from: its name, its migrations, and its collections with their demo data. */
export type NamespaceSchema = Pick<Namespace, 'name' | 'migrations' | 'fixture'>;
