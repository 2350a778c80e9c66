import type { RecordContext } from '../clock';
import { placedNamespaces, type PlacedNamespace } from '../config';
import { fixtureNamespaces, fixtureRows, type FixtureRows } from '../fixtures';
import type { CommerceStore } from '../namespaces/commerce/store';
import type { LogisticsStore } from '../namespaces/logistics/store';
import type { PayAccess } from '../namespaces/pay/store';
import { fixtureSpecs } from './demo';
import { payHealth, type DataSet, type ImmediateDatabase, type NamespaceDatabase, type NamespaceHealth, type PayDatabase, type WaitingDatabase } from './engine';


/** The databases of one data set, each on its own engine, and the stores over them. */
export type NamespaceDatabases = Record<PlacedNamespace, NamespaceDatabase>;


interface Load<Database> {
    namespace: string;
    database: Database;
    rows: FixtureRows;
}

interface FixtureLoads {
    counts: Record<string, number>;
    waiting: Load<WaitingDatabase>[];
    immediate: Load<ImmediateDatabase>[];
}


/** A data set made of one database per namespace and pay: the default one, and (on SQLite in memory) each instance's. */
export class NamespacesDataSet implements DataSet {

    private commerceStore: CommerceStore | null = null;
    private logisticsStore: LogisticsStore | null = null;

    constructor(protected databases: NamespaceDatabases, protected readonly payDatabase: PayDatabase, protected readonly context: RecordContext) { }

    get commerce(): CommerceStore {

        this.commerceStore ??= this.databases.commerce.commerceStore(this.context);
        return this.commerceStore;
    }

    get logistics(): LogisticsStore {

        this.logisticsStore ??= this.databases.logistics.logisticsStore(this.context);
        return this.logisticsStore;
    }

    get pay(): PayAccess {

        return this.payDatabase.access;
    }

    async health(): Promise<Record<string, NamespaceHealth>> {

        const health: Record<string, NamespaceHealth> = {};
        for (const namespace of placedNamespaces) {
            health[namespace] = await this.databases[namespace].health();
        }

        health.pay = await payHealth(this.pay, this.payDatabase.engine, this.payDatabase.storage);
        return health;
    }

    /**
     * Every record is checked before any is stored. Each namespace's rows then go in one transaction, nested so that a
     * failure in any rolls back all: those of databases that can wait first, holding theirs open, then the immediate
     * ones, which cannot wait inside a transaction. Only a failed commit on a database server can leave a load half done.
     */
    async loadFixture(fixture: unknown, origin: string): Promise<Record<string, number>> {

        const loads = this.fixtureLoads(fixture, origin);
        const store = async (index: number): Promise<void> => {

            const load = loads.waiting[index];
            if (!load) {
                this.storeImmediate(loads, 0);
                return;
            }

            loads.counts[load.namespace] = await load.database.storeFixture(load.rows, () => store(index + 1));
        };

        await store(0);
        return loads.counts;
    }

    async close(): Promise<void> {

        await Promise.all([...Object.values(this.databases).map((database) => database.close()), this.payDatabase.close()]);
    }

    /** The database of a namespace, for the engine's own tests and tools. */
    database(namespace: PlacedNamespace): NamespaceDatabase {

        return this.databases[namespace];
    }

    /** A fixture checked and made into rows, per namespace, by the kind of transaction that stores them. */
    protected fixtureLoads(fixture: unknown, origin: string, context = this.context): FixtureLoads {

        const loads: FixtureLoads = { counts: {}, waiting: [], immediate: [] };
        for (const [namespace, collections] of fixtureNamespaces(fixture, origin, fixtureSpecs)) {
            const database = this.databases[namespace as PlacedNamespace];
            const rows = fixtureRows(namespace, collections, fixtureSpecs[namespace]!, origin, context);
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
            loads.counts[load.namespace] = load.database.storeFixture(load.rows, () => this.storeImmediate(loads, index + 1));
        }
    }

    // Stores hold the databases they were made over: replaced databases need new ones.
    protected forgetStores(): void {

        this.commerceStore = null;
        this.logisticsStore = null;
    }
}
