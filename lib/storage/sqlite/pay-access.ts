import type { RecordContext } from '../../clock';
import type { Settings } from '../../config';
import { sections, type PayAccess, type PayStatus, type PayStore } from '../../namespaces/pay/store';
import type { FixtureRows } from '../../fixtures';
import type { ImmediateRecords, PayDatabase, RecordsDatabase, SeedCheck, StoredRows } from '../engine';
import { paySchema } from '../migrations';
import { exportRows, storePayFixtureRows } from './fixtures';
import { namespaceImage } from './images';
import { schemaVersion } from './migrate';
import { SqliteNamespace } from './namespace';
import { openCopy, type Database } from './open';
import { SqlitePayStore } from './pay';
import { PayReadiness } from './pay-readiness';


const emptyPay: PayStatus = { configured: false, schema_ready: false, sections };


/** Pay in memory, migrated when made: always ready. Its copy keeps its image as every namespace's copy does. */
export class MemoryPay implements PayAccess, PayDatabase, ImmediateRecords {

    readonly engine = 'sqlite';
    readonly storage = 'memory';
    readonly transactions = 'immediate';
    private payStore: { db: Database; store: PayStore } | null = null;

    constructor(readonly copy: SqliteNamespace, private readonly context: RecordContext) { }

    get access(): PayAccess {

        return this;
    }

    status(): Promise<PayStatus> {

        return Promise.resolve({ configured: true, schema_ready: true, sections });
    }

    schemaVersion(): Promise<number> {

        return Promise.resolve(schemaVersion(this.copy.db));
    }

    store(): Promise<PayStore> {

        // A copy replaced since has a new connection, which needs a store of its own.
        const db = this.copy.db;
        if (this.payStore?.db !== db) {
            this.payStore = { db, store: new SqlitePayStore(db, this.context) };
        }

        return Promise.resolve(this.payStore.store);
    }

    records(): Promise<RecordsDatabase> {

        return Promise.resolve(this);
    }

    storeFixture(rows: FixtureRows, within: () => void, seed?: SeedCheck): number | null {

        return storePayFixtureRows(this.copy.db, rows, within, seed);
    }

    exportRows(tables: string[]): Promise<StoredRows> {

        return this.copy.exportRows(tables);
    }

    close(): Promise<void> {

        return this.copy.close();
    }
}


/** An instance made without pay: not configured, as an unprovisioned service. */
export class NoPay implements PayAccess, PayDatabase {

    readonly engine = 'sqlite';
    readonly storage = 'memory';

    get access(): PayAccess {

        return this;
    }

    status(): Promise<PayStatus> {

        return Promise.resolve(emptyPay);
    }

    schemaVersion(): Promise<null> {

        return Promise.resolve(null);
    }

    store(): Promise<null> {

        return Promise.resolve(null);
    }

    records(): Promise<null> {

        return Promise.resolve(null);
    }

    close(): Promise<void> {

        return Promise.resolve();
    }
}


/** A fresh copy in memory of the migrated pay database. */
export function openMemoryPay(context: RecordContext): MemoryPay {

    const image = namespaceImage(paySchema, false);
    return new MemoryPay(new SqliteNamespace(paySchema, openCopy(image), 'memory', image), context);
}


/** Pay on SQLite: in memory when asked, else the file PAY_DB_URL names, followed as it is provisioned. */
export function openSqlitePay(settings: Pick<Settings, 'storage' | 'pay' | 'payLocation' | 'memoryPay'>, context: RecordContext): PayDatabase {

    if (settings.storage === 'memory' && settings.memoryPay) {
        return openMemoryPay(context);
    }

    const { publishableKey, secretKey } = settings.pay;
    const file = settings.payLocation?.engine === 'sqlite' ? settings.payLocation.file : undefined;
    const pay = new PayReadiness({ file, publishableKey, secretKey }, context);
    try {
        pay.upgrade();
    }
    catch (err) {
        pay.close();
        throw err;
    }

    // Pay's storage: the file its settings name, else where the data set keeps its databases.
    return {
        access: pay,
        engine: 'sqlite',
        storage: pay.hasFile ? 'file' : settings.storage,
        records: () => Promise.resolve(payRecords(pay.database())),
        close: () => Promise.resolve(pay.close())
    };
}


/** The records of a pay database, null when there is none ready. */
export function payRecords(db: Database | null): ImmediateRecords | null {

    return db && {
        transactions: 'immediate',
        storeFixture: (rows, within, seed) => storePayFixtureRows(db, rows, within, seed),
        exportRows: (tables) => Promise.resolve(exportRows(db, tables))
    };
}
