import type { RecordContext } from '../clock';
import type { CommerceStore } from '../namespaces/commerce/store';
import type { LogisticsStore } from '../namespaces/logistics/store';
import type { PayAccess } from '../namespaces/pay/store';


// The seam between the HTTP layer and an engine: routes and instances see only these interfaces.

export type NamespaceState = 'ready' | 'unavailable' | 'unconfigured' | 'configured';

export interface NamespaceHealth {
    state: NamespaceState;
    schema_version: number | null;
    storage: 'file' | 'memory';
}

/** The databases of one data set (the default one, or an instance's) behind the stores of its namespaces. */
export interface DataSet {
    readonly commerce: CommerceStore;
    readonly logistics: LogisticsStore;
    readonly pay: PayAccess;

    /** Each namespace's state, schema version and storage, as /health shows them. */
    health(): Record<string, NamespaceHealth>;

    /** Loads a fixture of API-shaped records, all or nothing; returns the records added per namespace. */
    loadFixture(fixture: unknown, origin: string): Record<string, number>;

    /** Closes every database of the data set. */
    close(): void;
}

/** A copy of an instance's data at one moment, held in memory. */
export interface DataSnapshot {
    readonly bytes: number;
}

/** An instance's data set: in memory, so it can be copied and put back. */
export interface InstanceData extends DataSet {

    /** A copy of every database of the data set. */
    snapshot(): DataSnapshot;

    /** Replaces every database with its copy in the snapshot. */
    restore(snapshot: DataSnapshot): void;

    /** Puts every database back as it was when the instance was made, fixture included. */
    reset(): void;
}

export interface InstanceDataOptions {
    seed: boolean;
    pay: boolean;
    fixture?: { records: unknown; origin: string };
    context: RecordContext;
}

/** An engine keeps data sets: the default one, where settings put it, and instances in memory. */
export interface Engine {

    /** Opens (and migrates, and seeds unless told not to) the default data set. */
    openDefault(context: RecordContext): DataSet;

    /** A new, migrated, optionally seeded instance data set in memory. */
    createInstance(options: InstanceDataOptions): InstanceData;
}
