import type { RecordContext } from '../record-context';
import { FixtureError, fixtureBody, fixtureFormat, fixtureNamespaces, fixtureRows, type FixtureRows } from '../fixtures';
import type { Namespace } from '../namespace';
import { fixtureSpecs } from './demo';
import type { DataSetDatabases, EventLog, ImmediateRecords, NamespaceDatabase, NamespaceHealth, Readiness, SeedCheck, WaitingRecords } from './engine';
import { appliedMigrationNames, shippedMigrationNames } from './migrations';
import type { ProvisionedNamespace } from './readiness';
import { always } from '../always';


/** The databases of one data set by namespace, each on its own engine: those always ready (migrated, or in memory). */
export type NamespaceDatabases = Record<string, NamespaceDatabase>;

/** The provisioned namespaces of a data set whose databases are not always ready, by namespace (pay's file or schema). */
export type ProvisionedNamespaces = Record<string, ProvisionedNamespace>;


interface Load<Database> {
    namespace: string;
    database: Database;
    rows: FixtureRows;
}

interface FixtureLoads {
    counts: Record<string, number>;
    waiting: Load<WaitingRecords>[];
    immediate: Load<ImmediateRecords>[];
    /** A seed file's load: each database stores its rows only while the tables they fill hold none. */
    seed?: boolean;
}


// Thrown through the nested transactions of a seed when one of them finds rows stored: every one rolls back.
class SeedSkipped extends Error {

    constructor() {

        super('the seed finds records stored');
    }
}


// What a database reports it stored: a seed that found rows stored unwinds the whole load.
function stored(count: number | null): number {

    if (count === null) {
        throw new SeedSkipped();
    }

    return count;
}


// The check of a seed's load at a position among its nested transactions: the outermost shuts other processes out.
function seedCheck(loads: FixtureLoads, position: number): SeedCheck | undefined {

    if (!loads.seed) {
        return undefined;
    }

    return position === 0 ? 'first' : 'nested';
}


/** A fixture holds pay records and the data set has no pay ready for them. */
export class NoPayForFixture extends FixtureError {

    constructor(message: string) {

        super(message, 'pay');
    }
}


/**
 * A data set made of one database per namespace: the default one, and (on SQLite in memory) each instance's. A
 * provisioned namespace (pay) is either among the databases (in memory it is migrated as it is made) or followed by
 * its readiness policy until its database is ready.
 */
export class NamespacesDataSet implements DataSetDatabases {

    // Stores by the database they were made over: a provisioned namespace's database can change (a replaced file).
    private stores = new WeakMap<NamespaceDatabase, unknown>();
    private logs = new WeakMap<NamespaceDatabase, EventLog>();
    private readonly specs: ReturnType<typeof fixtureSpecs>;

    // `held`: what else the data set keeps open and closes with its databases (the default data set's position files).
    constructor(protected readonly namespaces: readonly Namespace[], protected databases: NamespaceDatabases, protected readonly provisioned: ProvisionedNamespaces, protected readonly context: RecordContext, private readonly held: { close(): void } | null = null) {

        this.specs = fixtureSpecs(namespaces);
    }

    /** What makes pay ready to load records into, in the words of whoever made the data set. */
    protected get payAdvice(): string {

        return 'run `npx localgate provision pay` first';
    }

    store<Store>(namespace: Namespace<Store>): Store {

        return this.storeOver(namespace, this.database(namespace.name));
    }

    async readiness<Store>(namespace: Namespace<Store>): Promise<Readiness<Store>> {

        const database = this.databases[namespace.name];
        if (database) {
            return { ready: true, store: this.storeOver(namespace, database) };
        }

        // A namespace the data set serves is placed or provisioned.
        const state = await always(this.provisioned[namespace.name], `the database of ${namespace.name}`).readiness();
        return state.ready ? { ready: true, store: this.storeOver(namespace, state.database) } : state;
    }

    async health(): Promise<Record<string, NamespaceHealth>> {

        const health: Record<string, NamespaceHealth> = {};
        for (const { name } of this.namespaces) {
            health[name] = await (this.databases[name] ?? always(this.provisioned[name], `the database of ${name}`)).health();
        }

        return health;
    }

    /**
     * Every record is checked before any is stored. Each namespace's rows then go in one transaction, nested so that a
     * failure in any rolls back all: those of databases that can wait first, holding theirs open, then the immediate
     * ones, which cannot wait inside a transaction. Only a failed commit on a database server can leave a load half done.
     */
    async loadFixture(fixture: unknown, origin: string): Promise<Record<string, number>> {

        const loads = this.fixtureLoads(fixture, origin, await this.readyDatabases());
        await this.storeLoads(loads);
        return loads.counts;
    }

    /**
     * Loads a seed file as the demo is seeded: only when none of the namespaces it fills holds a record yet, so that a
     * start over databases it filled before adds nothing. Each database looks inside the load's own transaction, and
     * the first of them shuts out other processes seeding the same databases until the load ends: two starting at once
     * load it once. Returns the records added per namespace, or null when skipped.
     */
    async loadSeed(fixture: unknown, origin: string): Promise<Record<string, number> | null> {

        try {
            const loads = { ...this.fixtureLoads(fixture, origin, await this.readyDatabases()), seed: true };
            await this.storeLoads(loads);
            return loads.counts;
        }
        catch (err) {
            if (err instanceof SeedSkipped) {
                return null;
            }

            throw err;
        }
    }

    async exportRecords(): Promise<Record<string, unknown>> {

        const migrations: Record<string, string[]> = {};
        const records: Record<string, Record<string, unknown>> = {};
        const databases = await this.readyDatabases();
        for (const namespace of this.namespaces) {
            const database = databases[namespace.name];
            if (!namespace.fixture || !database) {
                continue;
            }

            const { name } = namespace;
            const collections = Object.entries(namespace.fixture.collections);
            const tables = await database.exportRows([...new Set(collections.flatMap(([collection, definition]) => [collection, ...definition.reads ?? []]))]);
            const { engine, schema_version: version } = await database.health();
            migrations[name] = appliedMigrationNames(engine, namespace, version);
            records[name] = Object.fromEntries(collections.map(([collection, definition]) => [collection, always(tables[collection], `the rows of ${collection}`).map((row) => definition.fromRow(row, tables))]));
        }

        return { localgate: { format: fixtureFormat, migrations }, ...records };
    }

    async eventLogs(): Promise<EventLog[]> {

        const databases = await this.readyDatabases();
        const logs: EventLog[] = [];
        for (const namespace of this.namespaces) {
            const database = databases[namespace.name];
            if (namespace.events && database) {
                let log = this.logs.get(database);
                if (!log) {
                    log = database.eventLog(namespace.name, this.context);
                    this.logs.set(database, log);
                }

                logs.push(log);
            }
        }

        return logs;
    }

    async close(): Promise<void> {

        await Promise.all([...Object.values(this.databases), ...Object.values(this.provisioned)].map((database) => database.close()));
        this.held?.close();
    }

    /** The database of a namespace, for the engine's own tests and tools. */
    database(namespace: string): NamespaceDatabase {

        return always(this.databases[namespace], `the database of ${namespace}`);
    }

    /** A fixture checked and made into rows, per namespace, by the kind of transaction that stores them, for the ready databases. */
    protected fixtureLoads(fixture: unknown, origin: string, databases: NamespaceDatabases): FixtureLoads {

        const loads: FixtureLoads = { counts: {}, waiting: [], immediate: [] };
        const { records } = fixtureBody(fixture, origin, shippedMigrationNames(this.namespaces));
        for (const [namespace, collections] of fixtureNamespaces(records, origin, this.specs)) {
            // Only a provisioned namespace (pay) can have no ready database.
            const database = databases[namespace];
            if (!database) {
                throw new NoPayForFixture(`${origin}: pay: this data set has no pay namespace ready to load wallets into (${this.payAdvice})`);
            }

            const rows = fixtureRows(namespace, collections, always(this.specs[namespace], `the fixture of ${namespace}`), origin, this.context);
            loads.counts[namespace] = 0;
            if (database.transactions === 'waiting') {
                loads.waiting.push({ namespace, database, rows });
            }
            else {
                loads.immediate.push({ namespace, database, rows });
            }
        }

        return loads;
    }

    /** Stores the immediate loads from `index` on, each transaction nested in the one before. */
    protected storeImmediate(loads: FixtureLoads, index: number): void {

        const load = loads.immediate[index];
        if (load) {
            loads.counts[load.namespace] = stored(load.database.storeFixture(load.rows, () => this.storeImmediate(loads, index + 1), seedCheck(loads, loads.waiting.length + index)));
        }
    }

    /** Stores every load: the waiting ones first, each transaction nested in the one before, the immediate ones inside the last. */
    private async storeLoads(loads: FixtureLoads): Promise<void> {

        const store = async (index: number): Promise<void> => {

            const load = loads.waiting[index];
            if (!load) {
                this.storeImmediate(loads, 0);
                return;
            }

            loads.counts[load.namespace] = stored(await load.database.storeFixture(load.rows, () => store(index + 1), seedCheck(loads, index)));
        };

        await store(0);
    }

    // Stores hold the connections they were made over: replaced databases need new ones.
    protected forgetStores(): void {

        this.stores = new WeakMap();
        this.logs = new WeakMap();
    }

    // The store of a namespace over one of its databases, made once per database by the namespace's factory.
    private storeOver<Store>(namespace: Namespace<Store>, database: NamespaceDatabase): Store {

        let store = this.stores.get(database);
        if (store === undefined) {
            store = database.store(this.context);
            this.stores.set(database, store);
        }

        // The database made it with the factory of this very namespace.
        return store as Store;
    }

    // Every database that is ready now: the placed ones, and each provisioned namespace's once its readiness says so.
    private async readyDatabases(): Promise<NamespaceDatabases> {

        const ready = { ...this.databases };
        for (const [name, provisioned] of Object.entries(this.provisioned)) {
            const state = await provisioned.readiness();
            if (state.ready) {
                ready[name] = state.database;
            }
        }

        return ready;
    }
}
