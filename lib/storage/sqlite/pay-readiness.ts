import Fs from 'node:fs';

import type { RecordContext } from '../../clock';
import type { PayAccess, PayStatus, PayStore } from '../../namespaces/pay/store';
import type { PayKeys } from '../pay-keys';
import { payKeysDiffer, payStatus } from '../pay-status';
import { paySchema } from '../migrations';
import { appliedMigrations, migrate, namespaceMigrations, schemaVersion } from './migrate';
import { closeDatabase, memory, quickCheck, type Database } from './open';
import { SqlitePayStore } from './pay';
import { openPayDatabase, payContents } from './pay-database';


/** Where pay's database file is (as settings decided it from PAY_DB_URL), and the keys that guard it. */
export interface PayFileSettings extends Partial<PayKeys> {
    file?: string;
}


/**
 * Follows the pay database as its file appears, disappears or gets its schema, without a restart.
 * The connection is kept once the file opens, so the check per request is a stat and, once ready, one query.
 */
export class PayReadiness implements PayAccess {

    private db: Database | null = null;
    private payStore: PayStore | null = null;
    private ready = false;
    private identity = '';
    private readonly file: string | null;
    private readonly keys: PayKeys;

    constructor(settings: PayFileSettings, private readonly context: RecordContext) {

        // An in-memory pay database is never provisioned, so it is never configured either.
        const complete = settings.file && settings.publishableKey && settings.secretKey;
        this.file = complete && settings.file !== memory ? settings.file! : null;
        this.keys = { publishableKey: settings.publishableKey ?? '', secretKey: settings.secretKey ?? '' };
    }

    /** True when the settings name pay's database (a file to follow), false when pay has none. */
    get hasFile(): boolean {

        return this.file !== null;
    }

    /** Applies pending pay migrations at startup, but only to a database that was provisioned before. */
    upgrade(): void {

        const db = this.connect();
        if (!db) {
            return;
        }

        const problems = quickCheck(db);
        if (problems.length) {
            throw new Error(`Pay database ${this.file} failed its integrity check: ${problems.join('; ')}`);
        }

        if (readable(() => appliedMigrations(db).length, 0)) {
            migrate(db, namespaceMigrations(paySchema));
        }
    }

    /** The status record, re-read from the file on every call. */
    status(): Promise<PayStatus> {

        return Promise.resolve(this.statusNow());
    }

    keysDiffer(): Promise<boolean> {

        const db = this.connect();
        return Promise.resolve(payKeysDiffer(db && readable(() => payContents(db, this.ready), null), this.keys));
    }

    private statusNow(): PayStatus {

        // Re-read on every call: a provision or a rotation made while the server runs counts at once.
        const db = this.connect();
        const status = payStatus(db && readable(() => payContents(db, this.ready), null), this.keys);
        this.ready = status.schema_ready;
        return status;
    }

    schemaVersion(): Promise<number | null> {

        const db = this.connect();
        return Promise.resolve(db ? readable(() => schemaVersion(db), null) : null);
    }

    /** The store of the pay database when its schema is ready, else null; a new connection gets a new store. */
    store(): Promise<PayStore | null> {

        if (!this.statusNow().schema_ready) {
            return Promise.resolve(null);
        }

        this.payStore ??= new SqlitePayStore(this.db!, this.context);
        return Promise.resolve(this.payStore);
    }

    /** The pay database when its schema is ready, else null (for the engine's own tests). */
    database(): Database | null {

        return this.statusNow().schema_ready ? this.db : null;
    }

    /** Closes the connection, if one is open. */
    close(): void {

        if (this.db) {
            closeDatabase(this.db);
            this.db = null;
            this.payStore = null;
        }

        this.ready = false;
    }

    private connect(): Database | null {

        if (!this.file) {
            return null;
        }

        // A file removed or replaced since the connection opened is a different database: start over.
        const identity = fileIdentity(this.file);
        if (identity !== this.identity) {
            this.close();
            this.identity = identity;
        }

        if (!identity) {
            return null;
        }

        if (!this.db) {
            try {
                this.db = openPayDatabase(this.file, true);
            }
            catch {
                return null;
            }
        }

        return this.db;
    }
}


// Which file a path names right now: device, inode and birth time; empty when there is none.
function fileIdentity(file: string): string {

    const stat = Fs.statSync(file, { throwIfNoEntry: false });
    return stat ? `${stat.dev}:${stat.ino}:${stat.birthtimeMs}` : '';
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
