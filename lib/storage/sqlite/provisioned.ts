import Fs from 'node:fs';

import { restated } from '../../errno';
import type { StorageSettings } from '../settings';
import type { Namespace } from '../../namespace';
import type { NamespaceHealth } from '../engine';
import { ProvisionedNamespace, type ProvisionedContents, type ProvisionedSource } from '../readiness';
import { appliedMigrations, migrate, namespaceMigrations, schemaVersion } from './migrate';
import { SqliteNamespace } from './namespace';
import { closeDatabase, damageMessage, isDamage, memory, quickCheck, type Database } from './open';
import { openPayDatabase, payContents } from './pay-database';


/**
 * A provisioned namespace's database file, followed as it appears, disappears, is replaced or changes without a
 * restart. The connection is kept once the file opens; its mark is the file's identity and SQLite's data_version,
 * which changes when another connection (another process's `provision pay` or `rotate-keys`, a hand edit) commits,
 * so a request costs a stat and one pragma, and the database is read again only after such a change.
 */
interface OpenFile {
    connection: Database;
    /** PRAGMA data_version, prepared once. */
    version: { get(): unknown };
    database: SqliteNamespace;
}


class SqliteProvisionedSource implements ProvisionedSource {

    readonly engine = 'sqlite';
    private db: OpenFile | null = null;
    private identity = '';
    private failedOpen = false;

    constructor(private readonly namespace: Namespace, private readonly file: string | null, readonly storage: NamespaceHealth['storage'], private readonly eventsKept?: number) { }

    /** Applies pending migrations at startup, but only to a database that was provisioned before. */
    upgrade(): void {

        const db = this.connect()?.connection;
        if (!db) {
            return;
        }

        try {
            const problems = quickCheck(db);
            if (problems.length) {
                throw new Error(damageMessage(`Pay database ${this.file}`, `failed its integrity check: ${problems.join('; ')}`));
            }

            if (readable(() => appliedMigrations(db).length, 0)) {
                migrate(db, namespaceMigrations(this.namespace));
            }
        }
        catch (err) {
            throw isDamage(err) ? restated(err, (found) => damageMessage(`Pay database ${this.file}`, found)) : err;
        }
    }

    mark(): string | null {

        const open = this.connect();
        if (!open) {
            // A file that does not open is tried again on the next request.
            return this.failedOpen ? null : this.identity;
        }

        // A file written over in place with something that is no database reads as no mark: read again, unconfigured.
        return readable(() => `${this.identity}:${String(open.version.get())}`, null);
    }

    read(): Promise<{ contents: ProvisionedContents; database: SqliteNamespace } | null> {

        const open = this.connect();
        const contents = open && readable(() => payContents(open.connection), null);
        return Promise.resolve(contents && { contents, database: open.database });
    }

    schemaVersion(): Promise<number | null> {

        const open = this.connect();
        return Promise.resolve(open ? readable(() => schemaVersion(open.connection), null) : null);
    }

    close(): Promise<void> {

        if (this.db) {
            closeDatabase(this.db.connection);
            this.db = null;
        }

        return Promise.resolve();
    }

    private connect(): OpenFile | null {

        if (!this.file) {
            return null;
        }

        // A file removed or replaced since the connection opened is a different database: start over.
        const identity = fileIdentity(this.file);
        if (identity !== this.identity) {
            void this.close();
            this.identity = identity;
        }

        this.failedOpen = false;
        if (!identity) {
            return null;
        }

        if (!this.db) {
            try {
                const connection = openPayDatabase(this.file, true);
                this.db = { connection, version: connection.prepare('PRAGMA data_version').pluck(), database: new SqliteNamespace(this.namespace, connection, 'file', undefined, this.eventsKept) };
            }
            catch {
                this.failedOpen = true;
                return null;
            }
        }

        return this.db;
    }
}


/**
 * A provisioned namespace (pay) on SQLite: the file PAY_DB_URL names, followed as it is provisioned, with the keys
 * the settings give; without a file and both keys (or in memory, which is never provisioned), never configured.
 */
export function openSqliteProvisioned(namespace: Namespace, settings: Pick<StorageSettings, 'storage' | 'pay' | 'payLocation'> & Partial<Pick<StorageSettings, 'eventsKept'>>): ProvisionedNamespace {

    const { publishableKey, secretKey } = settings.pay;
    const file = settings.payLocation?.engine === 'sqlite' ? settings.payLocation.file : undefined;
    const followed = file && file !== memory && publishableKey && secretKey ? file : null;
    // Its storage: the file its settings name, else where the data set keeps its databases.
    const source = new SqliteProvisionedSource(namespace, followed, followed ? 'file' : settings.storage, settings.eventsKept);
    try {
        source.upgrade();
    }
    catch (err) {
        void source.close();
        throw err;
    }

    return new ProvisionedNamespace(source, { publishableKey: publishableKey ?? '', secretKey: secretKey ?? '' });
}


// Which file a path names right now: device, inode and birth time; empty when there is none, or when it cannot be read
// (a directory in the way, no permission), which then reads as no pay database rather than failing the request.
function fileIdentity(file: string): string {

    try {
        const stat = Fs.statSync(file, { throwIfNoEntry: false });
        return stat ? `${stat.dev}:${stat.ino}:${stat.birthtimeMs}` : '';
    }
    catch {
        return '';
    }
}


// A database that is not ours (another application's schema_migrations, say) reads as not provisioned.
function readable<T>(read: () => T, fallback: T): T {

    try {
        return read();
    }
    catch {
        return fallback;
    }
}
