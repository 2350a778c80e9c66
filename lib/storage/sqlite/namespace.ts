import type { RecordContext } from '../../record-context';
import type { StorageSettings } from '../settings';
import type { FixtureRows } from '../../fixtures';
import type { Namespace } from '../../namespace';
import type { EventLog, ImmediateDatabase, NamespaceHealth, SeedCheck, StoredRows } from '../engine';
import { noStores } from '../no-stores';
import { always } from '../../always';
import { eventWriter, SqliteEventLog } from './events';
import { namespaceFile, openNamespace, prepareDataDir } from './files';
import { exportRows, fixturePosting, seedDemo, storeFixtureRows } from './fixtures';
import { namespaceImage } from './images';
import { schemaVersion } from './migrate';
import { changesSinceOpen, closeDatabase, memory, openCopy, openDatabase, type Database } from './open';


// What an open copy in memory holds beyond its database's bytes (SQLite's page cache, the prepared statements), as
// measured for the demo's databases after their first list reads (docs/operations.md, INSTANCE_POOL_MIB).
const connectionBytes = 232 * 1024;

// What a copy closed before it was ever opened gives: a connection already closed, whose use throws as the copy's
// own would have after close().
let closedConnection: Database | undefined;


/**
 * One namespace's SQLite database: a file, or a copy in memory that can be serialized and replaced. A copy given as
 * its image alone is opened when first used: a test that never reads a namespace never pays for its connection.
 */
export class SqliteNamespace implements ImmediateDatabase {

    readonly transactions = 'immediate';

    // The bytes the database last was, and its change count then (-1: never serialized, the image is unknown).
    private changesAtImage: number;
    private connection: Database | null;
    // The image an instance's copy was made from, while its connection still holds nothing else outside its
    // transaction: rolling that back puts the image back, connection and statements kept. Null once it cannot.
    private pristine: Buffer | null;

    // `eventsKept` (EVENTS_KEPT) reaches the event writer of each connection the database opens.
    constructor(private readonly namespace: Pick<Namespace, 'name' | 'stores' | 'fixture'>, db: Database | null, private readonly storage: 'file' | 'memory', private image?: Buffer, private readonly eventsKept?: number) {

        this.connection = db && this.connected(db);
        this.changesAtImage = image ? 0 : -1;
        this.pristine = image ?? null;
    }

    /** The connection; a copy not opened yet is opened from its image now, inside a transaction it can roll back. */
    get db(): Database {

        if (!this.connection) {
            this.connection = this.connected(openCopy(this.heldImage()));
            if (this.pristine) {
                this.connection.exec('BEGIN');
            }
        }

        return this.connection;
    }

    health(): Promise<NamespaceHealth> {

        try {
            return Promise.resolve({ state: 'ready', engine: 'sqlite', schema_version: schemaVersion(this.db), storage: this.storage });
        }
        catch {
            return Promise.resolve({ state: 'unavailable', engine: 'sqlite', schema_version: null, storage: this.storage });
        }
    }

    storeFixture(rows: FixtureRows, within: () => void, seed?: SeedCheck): number | null {

        const db = this.db;
        return storeFixtureRows(db, rows, { within, post: fixturePosting(db, this.namespace.fixture?.posting), seed });
    }

    exportRows(tables: string[]): Promise<StoredRows> {

        return Promise.resolve(exportRows(this.db, tables));
    }

    store(context: RecordContext): unknown {

        return (this.namespace.stores ?? noStores).sqlite(this.db, context);
    }

    eventLog(namespace: string, context: RecordContext): EventLog {

        return new SqliteEventLog(namespace, this.db, context);
    }

    /** The database as bytes; an unchanged database gives the image it was copied from, with no copy made. */
    serialize(): Buffer {

        if (!this.connection) {
            return this.heldImage();
        }

        const changes = changesSinceOpen(this.connection);
        if (changes !== this.changesAtImage) {
            // A copy serializes what is committed: its changes are, from now on, and it no longer rolls back to its image.
            if (this.connection.inTransaction) {
                this.connection.exec('COMMIT');
            }

            this.pristine = null;
            this.image = this.db.serialize();
            this.changesAtImage = changes;
        }

        return this.heldImage();
    }

    // A database is made over a connection or an image: one without a connection holds its image, and a serialized one
    // has kept what it gave.
    private heldImage(): Buffer {

        return always(this.image, `the image of ${this.namespace.name}`);
    }

    /** Replaces the database with a copy of an image; stores made over the old one are stale. */
    replace(image: Buffer): void {

        if (this.connection) {
            closeDatabase(this.connection);
        }

        this.connection = null;
        this.image = image;
        this.changesAtImage = 0;
        this.pristine = null;
    }

    /** The image a copy not opened yet holds, and nothing else; null once the connection is open. */
    get startingImage(): Buffer | null {

        return this.connection ? null : this.heldImage();
    }

    /** Whether the connection is open: a copy not opened yet holds its image and nothing else. */
    get opened(): boolean {

        return this.connection !== null;
    }

    /** The memory the copy holds: none until it is opened (the image is shared), else its bytes and its connection's. */
    get heldBytes(): number {

        return this.connection ? this.serialize().length + connectionBytes : 0;
    }

    /** True when rollBack() can put the copy back as it was made: its one transaction is still open (or it never opened). */
    get rollsBack(): boolean {

        return this.pristine !== null && (this.connection === null || this.connection.inTransaction);
    }

    /** Rolls a copy whose rollsBack holds back to the image it was made from, keeping its connection and statements. */
    rollBack(): void {

        if (this.connection) {
            this.connection.exec('ROLLBACK');
            // Its events and endpoints are the image's again: what the connection's writer knew of them is gone.
            eventWriter(this.connection).forget();
            this.connection.exec('BEGIN');
            this.changesAtImage = changesSinceOpen(this.connection);
        }
    }

    // Gives a new connection its event writer, keeping the events the settings ask for, before any store writes.
    private connected(db: Database): Database {

        eventWriter(db, this.eventsKept);
        return db;
    }

    close(): Promise<void> {

        if (this.connection) {
            closeDatabase(this.connection);
        }
        else {
            closedConnection ??= closedMemoryConnection();
            this.connection = closedConnection;
        }

        return Promise.resolve();
    }
}


/** Opens a namespace on SQLite: the file a setting names, else its file in DATA_DIR, else memory; seeded when asked. */
export function openSqliteNamespace(namespace: Namespace, file: string | undefined, settings: Pick<StorageSettings, 'storage' | 'dataDir' | 'seed'> & Partial<Pick<StorageSettings, 'eventsKept'>>): SqliteNamespace {

    if (!file && settings.storage === 'memory') {
        return new SqliteNamespace(namespace, openCopy(namespaceImage(namespace, settings.seed)), 'memory', undefined, settings.eventsKept);
    }

    if (!file) {
        prepareDataDir(settings.dataDir);
    }

    const db = openNamespace(file ?? namespaceFile(settings.dataDir, namespace.name), namespace);
    if (settings.seed) {
        seedDemo(db, namespace);
    }

    return new SqliteNamespace(namespace, db, 'file', undefined, settings.eventsKept);
}


function closedMemoryConnection(): Database {

    const db = openDatabase(memory);
    closeDatabase(db);
    return db;
}
