import type { Namespace } from '../namespace';


// The settings storage reads, declared here so that storage imports nothing of config.ts: config's Settings has
// every field below, each decided there once.

/** Where a database of each engine is, as the settings name it. */
export interface EngineLocations {
    /** A file; none: the data directory's file, or memory. */
    sqlite: { file?: string };
    postgres: { url: string };
}

/** The engines, by name: the keys of the table (storage/engines.ts). */
export type EngineName = keyof EngineLocations;

/** Where a database is: its engine and what the engine needs to find it. */
export type Location<Engine extends EngineName = EngineName> = { [Name in Engine]: { engine: Name } & EngineLocations[Name] }[Engine];

/** Where PAY_DB_URL puts pay's database: always named, so never the data directory's file. */
export type PayLocation = Required<Location>;

export type Storage = 'file' | 'memory';

export interface PaySettings {
    url?: string;
    publishableKey?: string;
    secretKey?: string;
}

/** How the service talks to a PostgreSQL server: per pool, per process. */
export interface DatabaseSettings {
    poolMax: number;
    connectTimeoutMs: number;
    statementTimeoutMs: number;
}

export interface StorageSettings {
    storage: Storage;
    dataDir: string;
    pay: PaySettings;
    database: DatabaseSettings;
    /** Whether the demo data is loaded into empty databases on start. */
    seed: boolean;
    /** A fixture file (an export, say) loaded into the databases on start instead: SEED=<path>. */
    seedFile?: string;
    fixtureCacheMib: number;
    memoryPay: boolean;
    /** EVENTS_KEPT: the events each event-writing database keeps, besides those with a delivery still pending. */
    eventsKept: number;
    /** The server's namespaces, each one registered unit: the one list every place that goes through them reads. */
    namespaces: readonly Namespace[];
    /**
     * Decided from the namespaces: those every data set has a database for, placed by the settings (<NAME>_DB_URL,
     * DATABASE_URL, DATA_DIR). Pay is apart, as its database is provisioned on its own (PAY_DB_URL and its keys).
     */
    placedNamespaces: readonly Namespace[];
    /** Decided from the settings above: where each placed namespace's database is, by name. */
    placements: Record<string, Location>;
    /** Decided from PAY_DB_URL: where pay's database is, when it is set. */
    payLocation?: PayLocation;
}

/** What a settings block hands an engine to open a namespace's database. */
export type OpenSettings = Pick<StorageSettings, 'storage' | 'dataDir' | 'seed' | 'database' | 'eventsKept'>;
