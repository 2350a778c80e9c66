import type { RecordContext } from '../clock';
import { FixtureError, fixtureBody, fixtureFormat, fixtureNamespaces, fixtureRows, type FixtureRows } from '../fixtures';
import type { Namespace } from '../namespaces/namespace';
import type { PayAccess } from '../namespaces/pay/store';
import { fixtureSpecs } from './demo';
import { payHealth, type DataSet, type ImmediateRecords, type NamespaceDatabase, type NamespaceHealth, type PayDatabase, type RecordsDatabase, type SeedCheck, type WaitingRecords } from './engine';
import { appliedMigrationNames, shippedMigrationNames } from './migrations';


/** The databases of one data set by namespace, one per namespace the settings place, each on its own engine. */
export type NamespaceDatabases = Record<string, NamespaceDatabase>;


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


/** A data set made of one database per namespace and pay: the default one, and (on SQLite in memory) each instance's. */
export class NamespacesDataSet implements DataSet {

    private readonly stores = new Map<string, unknown>();
    private readonly specs: ReturnType<typeof fixtureSpecs>;

    constructor(protected readonly namespaces: readonly Namespace[], protected databases: NamespaceDatabases, protected readonly payDatabase: PayDatabase, protected readonly context: RecordContext) {

        this.specs = fixtureSpecs(namespaces);
    }

    /** What makes pay ready to load records into, in the words of whoever made the data set. */
    protected get payAdvice(): string {

        return 'run `npx localgate provision pay` first';
    }

    store<Store>(namespace: Namespace<Store>): Store {

        let store = this.stores.get(namespace.name);
        if (store === undefined) {
            store = this.databases[namespace.name].store(this.context);
            this.stores.set(namespace.name, store);
        }

        // The database made it with the factory of this very namespace.
        return store as Store;
    }

    get pay(): PayAccess {

        return this.payDatabase.access;
    }

    async health(): Promise<Record<string, NamespaceHealth>> {

        const health: Record<string, NamespaceHealth> = {};
        for (const { name, readiness } of this.namespaces) {
            health[name] = readiness === 'provisioned' ? await payHealth(this.pay, this.payDatabase.engine, this.payDatabase.storage) : await this.databases[name].health();
        }

        return health;
    }

    /**
     * Every record is checked before any is stored. Each namespace's rows then go in one transaction, nested so that a
     * failure in any rolls back all: those of databases that can wait first, holding theirs open, then the immediate
     * ones, which cannot wait inside a transaction. Only a failed commit on a database server can leave a load half done.
     */
    async loadFixture(fixture: unknown, origin: string): Promise<Record<string, number>> {

        const loads = this.fixtureLoads(fixture, origin, await this.payDatabase.records());
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
            const loads = { ...this.fixtureLoads(fixture, origin, await this.payDatabase.records()), seed: true };
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

        const health = await this.health();
        const migrations: Record<string, string[]> = {};
        const records: Record<string, Record<string, unknown>> = {};
        const pay = await this.payDatabase.records();
        for (const namespace of this.namespaces) {
            const database = this.databases[namespace.name] ?? pay;
            if (!namespace.fixture || !database) {
                continue;
            }

            const { name } = namespace;
            const collections = Object.entries(namespace.fixture.collections);
            const tables = await database.exportRows([...new Set(collections.flatMap(([collection, definition]) => [collection, ...definition.reads ?? []]))]);
            migrations[name] = appliedMigrationNames(health[name]!.engine, namespace, health[name]!.schema_version!);
            records[name] = Object.fromEntries(collections.map(([collection, definition]) => [collection, tables[collection]!.map((row) => definition.fromRow(row, tables))]));
        }

        return { localgate: { format: fixtureFormat, migrations }, ...records };
    }

    async close(): Promise<void> {

        await Promise.all([...Object.values(this.databases).map((database) => database.close()), this.payDatabase.close()]);
    }

    /** The database of a namespace, for the engine's own tests and tools. */
    database(namespace: string): NamespaceDatabase {

        return this.databases[namespace];
    }

    /** A fixture checked and made into rows, per namespace, by the kind of transaction that stores them; pay's go to its records. */
    protected fixtureLoads(fixture: unknown, origin: string, pay: RecordsDatabase | null): FixtureLoads {

        const loads: FixtureLoads = { counts: {}, waiting: [], immediate: [] };
        const { records } = fixtureBody(fixture, origin, shippedMigrationNames(this.namespaces));
        for (const [namespace, collections] of fixtureNamespaces(records, origin, this.specs)) {
            // A namespace with fixture collections and no database the settings place is pay.
            const database = this.databases[namespace] ?? pay;
            if (!database) {
                throw new NoPayForFixture(`${origin}: pay: this data set has no pay namespace ready to load wallets into (${this.payAdvice})`);
            }

            const rows = fixtureRows(namespace, collections, this.specs[namespace]!, origin, this.context);
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

    // Stores hold the databases they were made over: replaced databases need new ones.
    protected forgetStores(): void {

        this.stores.clear();
    }
}
