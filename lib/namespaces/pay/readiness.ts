import Fs from 'node:fs';

import { payDatabaseFile, type PaySettings } from '../../config';
import { closeDatabase, memory, namespaceMigrations, openDatabase, type Database } from '../../db';
import { quickCheck } from '../../db/open';
import { appliedMigrations, migrate, schemaVersion } from '../../db/migrate';
import { payKeysMatch, type PayKeys } from './credentials';


export { payDatabaseFile } from '../../config';


export const sections = ['wallet', 'tokens', 'gateway'];

export interface PayStatus {
    configured: boolean;
    schema_ready: boolean;
    sections: string[];
}


/** Opens a pay database with money-grade durability. */
export function openPayDatabase(file: string, fileMustExist: boolean): Database {

    return openDatabase(file, { synchronous: 'FULL', fileMustExist });
}


/** True when every shipped pay migration is recorded in the database with an unchanged checksum. */
export function payMigrationsApplied(db: Database): boolean {

    const applied = new Map(appliedMigrations(db).map((row) => [row.version, row.checksum]));
    return namespaceMigrations('pay').every((migration) => applied.get(migration.version) === migration.checksum);
}


/**
 * Follows the pay database as its file appears, disappears or gets its schema, without a restart.
 * The connection is kept once the file opens, so the check per request is a stat and, until ready, one query.
 */
export class PayReadiness {

    private db: Database | null = null;
    private ready = false;
    private identity = '';
    private readonly file: string | null;
    private readonly keys: PayKeys;

    constructor(settings: PaySettings) {

        const complete = settings.url && settings.publishableKey && settings.secretKey;
        this.file = complete ? payDatabaseFile(settings.url!) : null;
        this.keys = { publishableKey: settings.publishableKey ?? '', secretKey: settings.secretKey ?? '' };
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
            migrate(db, namespaceMigrations('pay'));
        }
    }

    /** The status record, re-read from the files on every call. */
    status(): PayStatus {

        const db = this.connect();
        // Re-read on every call: keys rotated while the server runs retire the old pair at once.
        const configured = db !== null && payKeysMatch(db, this.keys);
        if (configured && !this.ready) {
            this.ready = readable(() => payMigrationsApplied(db), false);
        }

        return { configured, schema_ready: configured && this.ready, sections };
    }

    /** The schema version of a configured pay database, null when there is none or it cannot be read. */
    schemaVersion(): number | null {

        const db = this.connect();
        return db ? readable(() => schemaVersion(db), null) : null;
    }

    /** The pay database when its schema is ready, else null. */
    database(): Database | null {

        return this.status().schema_ready ? this.db : null;
    }

    close(): void {

        if (this.db) {
            closeDatabase(this.db);
            this.db = null;
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

    if (file === memory) {
        return memory;
    }

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
