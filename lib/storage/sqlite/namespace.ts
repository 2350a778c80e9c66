import type { RecordContext } from '../../clock';
import type { Settings } from '../../config';
import type { FixtureRows } from '../../fixtures';
import type { CommerceStore } from '../../namespaces/commerce/store';
import type { LogisticsStore } from '../../namespaces/logistics/store';
import type { ImmediateDatabase, NamespaceHealth } from '../engine';
import { SqliteCommerceStore } from './commerce';
import { namespaceFile, openNamespace, prepareDataDir } from './files';
import { seedDemo, storeFixtureRows } from './fixtures';
import { namespaceImage } from './images';
import { SqliteLogisticsStore } from './logistics';
import { schemaVersion } from './migrate';
import { closeDatabase, openCopy, type Database } from './open';


/** One namespace's SQLite database: a file, or a copy in memory that can be serialized and replaced. */
export class SqliteNamespace implements ImmediateDatabase {

    readonly transactions = 'immediate';

    constructor(public db: Database, private readonly storage: 'file' | 'memory') { }

    health(): Promise<NamespaceHealth> {

        try {
            return Promise.resolve({ state: 'ready', engine: 'sqlite', schema_version: schemaVersion(this.db), storage: this.storage });
        }
        catch {
            return Promise.resolve({ state: 'unavailable', engine: 'sqlite', schema_version: null, storage: this.storage });
        }
    }

    storeFixture(rows: FixtureRows, within: () => void): number {

        return storeFixtureRows(this.db, rows, within);
    }

    commerceStore(context: RecordContext): CommerceStore {

        return new SqliteCommerceStore(this.db, context);
    }

    logisticsStore(context: RecordContext): LogisticsStore {

        return new SqliteLogisticsStore(this.db, context);
    }

    /** The database as bytes. */
    serialize(): Buffer {

        return this.db.serialize();
    }

    /** Replaces the database with a copy of an image; stores made over the old one are stale. */
    replace(image: Buffer): void {

        closeDatabase(this.db);
        this.db = openCopy(image);
    }

    close(): Promise<void> {

        closeDatabase(this.db);
        return Promise.resolve();
    }
}


/** Opens a namespace on SQLite: the file a setting names, else its file in DATA_DIR, else memory; seeded when asked. */
export function openSqliteNamespace(namespace: string, file: string | undefined, settings: Pick<Settings, 'storage' | 'dataDir' | 'seed'>): SqliteNamespace {

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
