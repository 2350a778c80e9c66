import type { RecordContext } from '../record-context';
import type { AttemptOutcome, ClaimedAttempt, DisabledReason, HeldLease, StoredEndpoint, StoredEvent, TypePattern } from '../outbox';
import type { FixtureRows } from '../fixtures';
import type { Namespace } from '../namespace';
import type { EngineName } from './settings';


// The seam between the HTTP layer and an engine: routes and instances see only these interfaces.

export type NamespaceState = 'ready' | 'unavailable' | 'unconfigured' | 'configured';

export type { EngineName } from './settings';

export interface NamespaceHealth {
    state: NamespaceState;
    engine: EngineName;
    schema_version: number | null;
    storage: 'file' | 'memory' | 'server';
}

interface NamespaceDatabaseBase {

    /** The namespace's state, engine, schema version and storage, as /health shows them. */
    health(): Promise<NamespaceHealth>;

    /** The store of this database's own namespace, made by the namespace's factory for this engine. */
    store(context: RecordContext): unknown;

    /** The event log of this database, for a namespace that writes events (its migrations made the tables). */
    eventLog(namespace: string, context: RecordContext): EventLog;

    /** Closes the database (or its pool). */
    close(): Promise<void>;
}

/** Rows as a database holds them, per table, each table in list order (created_at, id). */
export type StoredRows = Record<string, Record<string, unknown>[]>;

/**
 * A seed file's load stores rows only into tables that hold none yet, checked inside each of its transactions before
 * any row is stored. The first of them (the others are nested in it) also shuts out other processes seeding the same
 * databases until it ends: on PostgreSQL it takes the migration lock; SQLite's immediate transaction holds the write
 * lock already.
 */
export type SeedCheck = 'first' | 'nested';

interface RecordsBase {

    /** Every row of each table, in list order, all read in one snapshot (for an export). */
    exportRows(tables: string[]): Promise<StoredRows>;
}

/**
 * Records whose transactions can wait: `within` runs inside the fixture's transaction, last, and a throw there rolls
 * it back. Answers the rows added, or null (nothing stored, `within` not run) for a seed that finds rows stored.
 */
export interface WaitingRecords extends RecordsBase {
    readonly transactions: 'waiting';
    storeFixture(rows: FixtureRows, within: () => Promise<void>, seed?: SeedCheck): Promise<number | null>;
}

/** Records whose transactions cannot wait (nothing awaits inside one): `within` is synchronous. */
export interface ImmediateRecords extends RecordsBase {
    readonly transactions: 'immediate';
    storeFixture(rows: FixtureRows, within: () => void, seed?: SeedCheck): number | null;
}

/** Where a fixture's rows are stored and an export's are read: a namespace's database, or pay's. */
export type RecordsDatabase = WaitingRecords | ImmediateRecords;

/** A namespace's database whose transactions can wait. */
export interface WaitingDatabase extends NamespaceDatabaseBase, WaitingRecords { }

/** A namespace's database whose transactions cannot wait. */
export interface ImmediateDatabase extends NamespaceDatabaseBase, ImmediateRecords { }

/** One namespace's database, on whichever engine the settings place it. */
export type NamespaceDatabase = WaitingDatabase | ImmediateDatabase;

/** Why a namespace is not ready, as its 501 says it: no usable settings or database, keys other than the recorded pair, or no schema yet. */
export type ReadinessGap = 'unconfigured' | 'keys_differ' | 'no_schema';

/** Whether a namespace is ready, with its store when it is, or why not. */
export type Readiness<Store> = { ready: true; store: Store } | { ready: false; configured: boolean; gap: ReadinessGap };

/**
 * The events and webhook outbox of one namespace's database (one whose descriptor says `events`): the log its changes
 * wrote, the data set's endpoints (the same in each such database) and the deliveries of its events to them.
 */
export interface EventLog {

    /** The namespace whose database this is. */
    readonly namespace: string;

    /** Events after a position (null: from the oldest kept), of the types asked for (null: all), in position order, at most `limit`. */
    list(after: number | null, types: TypePattern[] | null, limit: number): Promise<StoredEvent[]>;

    /** The position of the event with this id, or null when this database holds none. */
    positionOf(id: string): Promise<number | null>;

    /** The position of the last event this database holds, 0 when none. */
    lastPosition(): Promise<number>;

    /** Replaces the endpoints (and drops the deliveries to the ones removed), in one transaction. */
    replaceEndpoints(endpoints: StoredEndpoint[]): Promise<void>;

    /** The endpoints, in their order, with their counts in this database. */
    endpoints(): Promise<StoredEndpoint[]>;

    /** The earliest instant a pending delivery's next attempt falls due, or null. */
    nextDue(): Promise<Date | null>;

    /** How many pending deliveries have their next attempt due at or before `until`. */
    countDue(until: Date): Promise<number>;

    /**
     * Claims the attempts due at or before `until`, earliest first (ties by event position, then endpoint order), at
     * most `limit`: each is leased until `leaseUntil` (the wall clock), so that no other process claims it meanwhile.
     */
    claimDue(until: Date, limit: number, leaseUntil: Date): Promise<ClaimedAttempt[]>;

    /**
     * Renews the leases of attempts claimed and not made yet until `leaseUntil`, in one statement: each only while its
     * delivery still awaits that attempt under the lease held (its claim's, or the renewal's before). Answers those
     * renewed: one recorded since, or claimed by another process once its lease had passed, is not.
     */
    renewLeases(held: HeldLease[], leaseUntil: Date): Promise<HeldLease[]>;

    /**
     * Records an attempt's outcome, unless another process recorded that attempt first (answers null then): the
     * delivery delivered, due again, or given up with its event written; the endpoint's counts follow (a delivery
     * ends its given-up deliveries in a row, one given up adds to them). Answers the deliveries the endpoint had
     * given up in a row before this outcome.
     */
    record(outcome: AttemptOutcome): Promise<number | null>;

    /** Disables an endpoint (null: enables it). */
    setDisabled(endpointId: string, disabled: { at: string; reason: DisabledReason } | null): Promise<void>;

    /** Sets the deliveries an endpoint gave up in a row; with `disableAt`, also disables it for that (unless it is disabled). */
    setGivenUpInARow(endpointId: string, count: number, disableAt: string | null): Promise<void>;

    /** Rotates an endpoint's secret: the one it had signs beside the new one until `until`. */
    rotateSecret(endpointId: string, secret: string, until: string): Promise<void>;

    /**
     * Makes the delivery of the event at `position` to each endpoint due at `dueAt` (made for one that had none; left
     * alone while in flight), and claims those of endpoints enabled, leased until `leaseUntil` (the wall clock).
     */
    resend(position: number, endpointIds: string[], dueAt: Date, leaseUntil: Date): Promise<ClaimedAttempt[]>;

    /**
     * Makes the failed and given-up deliveries to an endpoint of the events from `since` on due at `dueAt`, and claims
     * them unless the endpoint is disabled, leased until `leaseUntil` (the wall clock).
     */
    recover(endpointId: string, since: string, dueAt: Date, leaseUntil: Date): Promise<ClaimedAttempt[]>;
}

/** The databases of one data set (the default one, or an instance's) behind the stores of its namespaces. */
export interface DataSetDatabases {

    /** The store of one of the data set's namespaces that is always ready (migrated), made once over its database. */
    store<Store>(namespace: Namespace<Store>): Store;

    /**
     * Whether a namespace is ready, with its store when it is. A migrated namespace always is; a provisioned one's
     * readiness is kept until its engine's mark says its database can have changed.
     */
    readiness<Store>(namespace: Namespace<Store>): Promise<Readiness<Store>>;

    /** Each namespace's state, engine, schema version and storage, as /health shows them. */
    health(): Promise<Record<string, NamespaceHealth>>;

    /** Loads a fixture of API-shaped records, all checked before any is stored; returns the records added per namespace. */
    loadFixture(fixture: unknown, origin: string): Promise<Record<string, number>>;

    /** Every record of every collection, in the API's shape, as a fixture that loads it all back; opened by the localgate object. */
    exportRecords(): Promise<Record<string, unknown>>;

    /** The event logs of the namespaces that write events and are ready, in namespace order. */
    eventLogs(): Promise<EventLog[]>;

    /**
     * The image a namespace's database is still a copy of, unopened (the start instances share), else null: what can
     * be known of it without opening it. Absent where a data set's databases are never such copies.
     */
    startingImage?(namespace: string): object | null;

    /** Closes every database (or pool) of the data set. */
    close(): Promise<void>;
}

/** A copy of an instance's data at one moment, held in memory. */
export interface DataSnapshot {
    readonly bytes: number;
}

/**
 * An instance's data set: it can be copied and put back. Every call answers a promise, so that an engine that keeps
 * instances on a database server fits behind it; SQLite in memory answers at once.
 */
export interface InstanceData extends DataSetDatabases {

    /** A copy of every database of the data set. */
    snapshot(): Promise<DataSnapshot>;

    /** Replaces every database with its copy in the snapshot, keeping the endpoints as they are (their deliveries the snapshot's). */
    restore(snapshot: DataSnapshot): Promise<void>;

    /** Puts every database back as it was when the instance was made, fixture included, keeping the endpoints as they are. */
    reset(): Promise<void>;

    /**
     * Opens every database and prepares the statements the API's reads run first, so that the first request pays for
     * neither; answers the bytes the data set then holds. Made ahead for the instance pool, in idle time.
     */
    prepare(): Promise<number>;

    /**
     * Puts a data set that was handed out back as it was made, keeping its open connections and prepared statements,
     * for the pool to hand out again, and answers the bytes it holds; null (nothing changed) when it cannot, and it
     * must be closed instead.
     */
    recycle(): Promise<number | null>;
}

/** How an instance's data set is made; an engine reads `from` as a copy of its own making (`Snapshot`). */
export interface InstanceDataOptions<Snapshot extends DataSnapshot = DataSnapshot> {
    seed: boolean;
    pay: boolean;
    /**
     * A copy of another instance's data to start from instead of the images (a fork): its records and event log, with
     * none of its endpoints or their deliveries; seed and pay then follow it.
     */
    from?: Snapshot;
    fixture?: { records: unknown; origin: string };
    /** The fixture's image key (fixtureImageKey), when the caller has it already: the fixture is not hashed again. */
    imageKey?: string;
    context: RecordContext;
}

/** An engine keeps data sets: the default one, where settings put it, and instances in memory. */
export interface Engine {

    /** The namespaces of every data set the engine keeps. */
    readonly namespaces: readonly Namespace[];

    /** Opens (and migrates, and seeds unless told not to) the default data set. */
    openDefault(context: RecordContext): Promise<DataSetDatabases>;

    /** A new, migrated, optionally seeded instance data set. */
    createInstance(options: InstanceDataOptions): Promise<InstanceData>;

    /** Whether the image of a fixture is kept under this key (fixtureImageKey), so that an instance from it is a copy. */
    hasFixtureImage(key: string): boolean;
}

