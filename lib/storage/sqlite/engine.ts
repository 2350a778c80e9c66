import type { RecordContext } from '../../clock';
import type { Settings } from '../../config';
import { fixtureNamespaces, fixtureRows, type FixtureRows } from '../../fixtures';
import type { CommerceStore } from '../../namespaces/commerce/store';
import type { LogisticsStore } from '../../namespaces/logistics/store';
import { sections, type PayAccess, type PayStatus, type PayStore } from '../../namespaces/pay/store';
import { payHealth, type DataSet, type DataSnapshot, type Engine, type InstanceData, type InstanceDataOptions, type NamespaceHealth } from '../engine';
import { SqliteCommerceStore } from './commerce';
import { storeFixtureRows } from './fixtures';
import { fixtureSpecs, namespaceFile, namespaceImage, namespaces, openNamespace, prepareDataDir, seedDemo, type Namespace } from './images';
import { SqliteLogisticsStore } from './logistics';
import { schemaVersion } from './migrate';
import { closeDatabase, openCopy, type Database } from './open';
import { SqlitePayStore } from './pay';
import { PayReadiness } from './pay-readiness';


type Databases = Record<Namespace, Database>;

/** Pay as an SQLite data set holds it: closed with the data set, at once. */
type SqlitePay = PayAccess & { close(): void };

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

    openDefault(context: RecordContext): Promise<DataSet> {

        return Promise.resolve(this.openDefaultNow(context));
    }

    private openDefaultNow(context: RecordContext): DataSet {

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
                data.loadFixtureNow(options.fixture.records, options.fixture.origin);
            }
            catch (err) {
                data.closeNow();
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

    constructor(protected databases: Databases, public readonly pay: SqlitePay, protected readonly context: RecordContext, private readonly storage: 'file' | 'memory') { }

    get commerce(): CommerceStore {

        this.commerceStore ??= new SqliteCommerceStore(this.databases.commerce, this.context);
        return this.commerceStore;
    }

    get logistics(): LogisticsStore {

        this.logisticsStore ??= new SqliteLogisticsStore(this.databases.logistics, this.context);
        return this.logisticsStore;
    }

    async health(): Promise<Record<string, NamespaceHealth>> {

        const health: Record<string, NamespaceHealth> = {};
        for (const namespace of namespaces) {
            health[namespace] = sqliteHealth(this.databases[namespace], this.storage);
        }

        health.pay = await payHealth(this.pay, 'sqlite', payStorage(this.pay, this.storage));
        return health;
    }

    loadFixture(fixture: unknown, origin: string): Promise<Record<string, number>> {

        return Promise.resolve(this.loadFixtureNow(fixture, origin));
    }

    /** Loads a fixture, all or nothing, before the call returns. */
    loadFixtureNow(fixture: unknown, origin: string): Record<string, number> {

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

    close(): Promise<void> {

        this.closeNow();
        return Promise.resolve();
    }

    /** Closes every database before the call returns. */
    closeNow(): void {

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
class MemoryPay implements SqlitePay {

    private payStore: PayStore | null = null;

    constructor(private db: Database, private readonly context: RecordContext) { }

    status(): Promise<PayStatus> {

        return Promise.resolve({ configured: true, schema_ready: true, sections });
    }

    schemaVersion(): Promise<number> {

        return Promise.resolve(schemaVersion(this.db));
    }

    store(): Promise<PayStore> {

        this.payStore ??= new SqlitePayStore(this.db, this.context);
        return Promise.resolve(this.payStore);
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
export class NoPay implements SqlitePay {

    status(): Promise<PayStatus> {

        return Promise.resolve(emptyPay);
    }

    schemaVersion(): Promise<null> {

        return Promise.resolve(null);
    }

    store(): Promise<null> {

        return Promise.resolve(null);
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



/** The health of an SQLite namespace database. */
export function sqliteHealth(db: Database, storage: 'file' | 'memory'): NamespaceHealth {

    try {
        return { state: 'ready', engine: 'sqlite', schema_version: schemaVersion(db), storage };
    }
    catch {
        return { state: 'unavailable', engine: 'sqlite', schema_version: null, storage };
    }
}



/** One namespace of a data set whose other namespaces may be on another engine: a file (or memory) of its own. */
export class SqliteNamespace {

    readonly kind = 'sync';

    constructor(readonly db: Database, private readonly storage: 'file' | 'memory') { }

    health(): Promise<NamespaceHealth> {

        return Promise.resolve(sqliteHealth(this.db, this.storage));
    }

    /** Stores fixture rows in one immediate transaction; `within` runs inside it, last. */
    storeFixture(rows: FixtureRows, within: () => void): number {

        return storeFixtureRows(this.db, rows, within);
    }

    close(): Promise<void> {

        closeDatabase(this.db);
        return Promise.resolve();
    }
}


/** Opens a namespace on SQLite: the file a setting names, else its file in DATA_DIR, else memory; seeded when asked. */
export function openSqliteNamespace(namespace: Namespace, file: string | undefined, settings: Pick<Settings, 'storage' | 'dataDir' | 'seed'>): SqliteNamespace {

    if (!file && settings.storage === 'memory') {
        return new SqliteNamespace(openCopy(namespaceImage(namespace, settings.seed)), 'memory');
    }

    if (!file) {
        prepareDataDir(settings.dataDir);
    }

    const db = openNamespace(file ?? namespaceFile(settings.dataDir, namespace), namespace);
    if (settings.seed) {
        seedDemo(db, namespace);
    }

    return new SqliteNamespace(db, 'file');
}


/** Pay on SQLite: in memory when asked, else the file PAY_DB_URL names, followed as it is provisioned. */
export function openSqlitePay(settings: Pick<Settings, 'storage' | 'pay' | 'memoryPay'>, context: RecordContext): { access: PayAccess; close(): Promise<void>; storage: 'file' | 'memory' } {

    const pay: SqlitePay = settings.storage === 'memory' && settings.memoryPay ? new MemoryPay(openPayImage(), context) : new PayReadiness(settings.pay, context);
    if (pay instanceof PayReadiness) {
        try {
            pay.upgrade();
        }
        catch (err) {
            pay.close();
            throw err;
        }
    }

    return {
        access: pay,
        close: () => Promise.resolve(pay.close()),
        storage: payStorage(pay, settings.storage)
    };
}


// Pay's storage: the file its settings name, else where the data set keeps its databases.
function payStorage(pay: SqlitePay, storage: 'file' | 'memory'): 'file' | 'memory' {

    return pay instanceof PayReadiness && pay.hasFile ? 'file' : storage;
}
