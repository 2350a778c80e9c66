import Fs from 'node:fs';
import Path from 'node:path';
import Url from 'node:url';

import type { PaySettings } from '../../config';
import { closeDatabase, memory, namespaceMigrations, openDatabase, type Database } from '../../db';
import { appliedMigrations, migrate } from '../../db/migrate';


export const sections = ['wallet', 'tokens', 'gateway'];

export interface PayStatus {
    configured: boolean;
    schema_ready: boolean;
    sections: string[];
}


/** The file a PAY_DB_URL names: a plain path, a file: URL, or memory. */
export function payDatabaseFile(url: string): string {

    if (url === memory) {
        return memory;
    }

    if (url.startsWith('file://')) {
        return Url.fileURLToPath(url);
    }

    const path = url.startsWith('file:') ? decodeURIComponent(url.slice('file:'.length).split('?')[0]!) : url;
    return Path.resolve(path);
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
    private readonly file: string | null;

    constructor(settings: PaySettings) {

        const complete = settings.url && settings.publishableKey && settings.secretKey;
        this.file = complete ? payDatabaseFile(settings.url!) : null;
    }

    /** Applies pending pay migrations at startup, but only to a database that was provisioned before. */
    upgrade(): void {

        const db = this.connect();
        if (db && appliedMigrations(db).length) {
            migrate(db, namespaceMigrations('pay'));
        }
    }

    /** The status record, re-read from the files on every call. */
    status(): PayStatus {

        const db = this.connect();
        if (db && !this.ready) {
            this.ready = payMigrationsApplied(db);
        }

        return { configured: db !== null, schema_ready: db !== null && this.ready, sections };
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

        if (this.file !== memory && !Fs.existsSync(this.file)) {
            this.close();
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
