import type { RecordContext } from '../../clock';
import type { Settings } from '../../config';
import { fixtureNamespaces, fixtureRows } from '../../fixtures';
import type { CommerceStore } from '../../namespaces/commerce/store';
import type { LogisticsStore } from '../../namespaces/logistics/store';
import { sections, type PayAccess, type PayStatus, type PayStore } from '../../namespaces/pay/store';
import type { DataSet, DataSnapshot, Engine, InstanceData, InstanceDataOptions, NamespaceHealth } from '../engine';
import { SqliteCommerceStore } from './commerce';
import { storeFixtureRows } from './fixtures';
import { fixtureSpecs, namespaceFile, namespaceImage, namespaces, openNamespace, prepareDataDir, seedDemo, type Namespace } from './images';
import { SqliteLogisticsStore } from './logistics';
import { schemaVersion } from './migrate';
import { closeDatabase, openCopy, type Database } from './open';
import { SqlitePayStore } from './pay';
import { PayReadiness } from './pay-readiness';


type Databases = Record<Namespace, Database>;

// What a snapshot holds: each database serialized, pay's too when the instance has one.
interface SqliteSnapshot extends DataSnapshot {
    images: Record<Namespace | 'pay', Buffer | undefined>;
}

const emptyPay: PayStatus = { configured: false, schema_ready: false, sections };


/** The SQLite database of a namespace of a data set this engine opened (its tests look inside). */
export function sqliteDatabase(data: DataSet, namespace: Namespace): Database {

    return (data as SqliteDataSet).database(namespace);
}


/** The SQLite engine: one database per namespace, in files of DATA_DIR or in memory. */
export class SqliteEngine implements Engine {

    constructor(private readonly settings: Pick<Settings, 'storage' | 'dataDir' | 'seed' | 'pay' | 'memoryPay'>) { }

    openDefault(context: RecordContext): DataSet {

        const { storage, dataDir, seed } = this.settings;
        if (storage === 'memory' && this.settings.memoryPay) {
            return new SqliteDataSet(openImages((namespace) => namespaceImage(namespace, seed)), new MemoryPay(openPayImage(), context), context, 'memory');
        }

        const opened: Partial<Databases> = {};
        const pay = new PayReadiness(this.settings.pay, context);
        try {
            if (storage === 'file') {
                prepareDataDir(dataDir);
            }

            for (const namespace of namespaces) {
                if (storage === 'memory') {
                    opened[namespace] = openCopy(namespaceImage(namespace, seed));
                    continue;
                }

                const db = openNamespace(namespaceFile(dataDir, namespace), namespace);
                opened[namespace] = db;
                if (seed) {
                    seedDemo(db, namespace);
                }
            }

            pay.upgrade();
        }
        catch (err) {
            Object.values(opened).forEach(closeDatabase);
            pay.close();
            throw err;
        }

        return new SqliteDataSet(opened as Databases, pay, context, storage);
    }

    createInstance(options: InstanceDataOptions): InstanceData {

        const images = {
            commerce: namespaceImage('commerce', options.seed),
            logistics: namespaceImage('logistics', options.seed),
            weather: namespaceImage('weather', options.seed),
            pay: options.pay ? namespaceImage('pay', false) : undefined
        };

        const pay = images.pay ? new MemoryPay(openCopy(images.pay), options.context) : new NoPay();
        const data = new SqliteInstanceData(openImages((namespace) => images[namespace]), pay, options.context, { images, bytes: 0 });
        if (options.fixture) {
            try {
                data.loadFixture(options.fixture.records, options.fixture.origin);
            }
            catch (err) {
                data.close();
                throw err;
            }

            data.settle();
        }

        return data;
    }
}


/** The stores of one set of namespace databases, each made on first use. */
class SqliteDataSet implements DataSet {

    private commerceStore: CommerceStore | null = null;
    private logisticsStore: LogisticsStore | null = null;

    constructor(protected databases: Databases, public readonly pay: PayAccess & { close(): void }, protected readonly context: RecordContext, private readonly storage: 'file' | 'memory') { }

    get commerce(): CommerceStore {

        this.commerceStore ??= new SqliteCommerceStore(this.databases.commerce, this.context);
        return this.commerceStore;
    }

    get logistics(): LogisticsStore {

        this.logisticsStore ??= new SqliteLogisticsStore(this.databases.logistics, this.context);
        return this.logisticsStore;
    }

    health(): Record<string, NamespaceHealth> {

        const health: Record<string, NamespaceHealth> = {};
        for (const namespace of namespaces) {
            health[namespace] = { ...databaseHealth(this.databases[namespace]), storage: this.storage };
        }

        const pay = this.pay.status();
        health.pay = {
            state: pay.schema_ready ? 'ready' : (pay.configured ? 'configured' : 'unconfigured'),
            schema_version: this.pay.schemaVersion(),
            storage: this.pay instanceof PayReadiness ? 'file' : 'memory'
        };

        return health;
    }

    loadFixture(fixture: unknown, origin: string): Record<string, number> {

        // Every record is checked before any is stored; then each namespace's rows go in one transaction, nested so
        // that a failure in any of them rolls back all.
        const loads = fixtureNamespaces(fixture, origin, fixtureSpecs).map(([namespace, collections]) => ({
            namespace,
            rows: fixtureRows(namespace, collections, fixtureSpecs[namespace]!, origin, this.context)
        }));

        const counts = Object.fromEntries(loads.map((load) => [load.namespace, 0]));
        const store = (index: number): void => {

            const load = loads[index];
            if (load) {
                counts[load.namespace] = storeFixtureRows(this.databases[load.namespace as Namespace], load.rows, () => store(index + 1));
            }
        };

        store(0);
        return counts;
    }

    close(): void {

        Object.values(this.databases).forEach(closeDatabase);
        this.pay.close();
    }

    /** The database of a namespace, for the engine's own tests and tools. */
    database(namespace: Namespace): Database {

        return this.databases[namespace];
    }

    protected forgetStores(): void {

        this.commerceStore = null;
        this.logisticsStore = null;
    }
}


/** An instance's data set: databases in memory that can be copied out and put back. */
class SqliteInstanceData extends SqliteDataSet implements InstanceData {

    // Until a fixture is loaded, the state at creation is the shared images themselves: no copy per instance.
    constructor(databases: Databases, pay: MemoryPay | NoPay, context: RecordContext, private creation: SqliteSnapshot) {

        super(databases, pay, context, 'memory');
    }

    /** Takes the current state as the one reset() goes back to. */
    settle(): void {

        this.creation = this.snapshot();
    }

    reset(): void {

        this.restore(this.creation);
    }

    snapshot(): SqliteSnapshot {

        const images = {
            commerce: this.databases.commerce.serialize(),
            logistics: this.databases.logistics.serialize(),
            weather: this.databases.weather.serialize(),
            pay: this.pay instanceof MemoryPay ? this.pay.serialize() : undefined
        };

        const bytes = Object.values(images).reduce((sum, image) => sum + (image?.length ?? 0), 0);
        return { images, bytes };
    }

    restore(snapshot: DataSnapshot): void {

        const { images } = snapshot as SqliteSnapshot;
        const databases = openImages((namespace) => images[namespace]!);
        Object.values(this.databases).forEach(closeDatabase);
        this.databases = databases;
        if (this.pay instanceof MemoryPay) {
            this.pay.replace(images.pay!);
        }

        this.forgetStores();
    }
}


/** Pay in memory, migrated when made: always ready. */
class MemoryPay implements PayAccess {

    private payStore: PayStore | null = null;

    constructor(private db: Database, private readonly context: RecordContext) { }

    status(): PayStatus {

        return { configured: true, schema_ready: true, sections };
    }

    schemaVersion(): number {

        return schemaVersion(this.db);
    }

    store(): PayStore {

        this.payStore ??= new SqlitePayStore(this.db, this.context);
        return this.payStore;
    }

    serialize(): Buffer {

        return this.db.serialize();
    }

    replace(image: Buffer): void {

        closeDatabase(this.db);
        this.db = openCopy(image);
        this.payStore = null;
    }

    close(): void {

        closeDatabase(this.db);
    }
}


/** An instance made without pay: not configured, as an unprovisioned service. */
class NoPay implements PayAccess {

    status(): PayStatus {

        return emptyPay;
    }

    schemaVersion(): null {

        return null;
    }

    store(): null {

        return null;
    }

    close(): void { }
}


function openImages(image: (namespace: Namespace) => Buffer): Databases {

    const opened: Partial<Databases> = {};
    for (const namespace of namespaces) {
        opened[namespace] = openCopy(image(namespace));
    }

    return opened as Databases;
}


function openPayImage(): Database {

    return openCopy(namespaceImage('pay', false));
}



function databaseHealth(db: Database): { state: 'ready' | 'unavailable'; schema_version: number | null } {

    try {
        return { state: 'ready', schema_version: schemaVersion(db) };
    }
    catch {
        return { state: 'unavailable', schema_version: null };
    }
}

