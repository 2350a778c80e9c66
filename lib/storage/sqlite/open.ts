import Assert from 'node:assert';

import Sqlite from 'better-sqlite3';

import { errnoCode, errorMessage, restated } from '../../errno';
import { always } from '../../always';


export type Database = Sqlite.Database;

declare module '../../namespace' {
    interface EngineHandles {
        sqlite: Database;
    }
}

/** The file name that opens a database in memory. */
export const memory = ':memory:';

export interface OpenOptions {
    synchronous?: 'NORMAL' | 'FULL';
    fileMustExist?: boolean;
}

const synchronousLevels = { NORMAL: 1, FULL: 2 };


/** Opens one namespace database (a file, or memory) with the pragmas every connection needs, asserting each took effect. */
export function openDatabase(file: string, options: OpenOptions = {}): Database {

    try {
        const db = new Sqlite(file, { fileMustExist: Boolean(options.fileMustExist) });
        try {
            applyPragmas(db, db.memory, options);
        }
        catch (err) {
            db.close();
            throw err;
        }

        return db;
    }
    catch (err) {
        // What SQLite says of a file that does not open (not a database, read-only, missing) names the file; its code
        // stays. A damaged file also says what to do.
        throw restated(err, (found) => (isDamage(err) ? damageMessage(file, found) : `${file}: ${found}`));
    }
}


// SQLite's codes for a file that is damaged or holds no database (SQLITE_CORRUPT and its extended codes, SQLITE_NOTADB).
const damageCodes = /^SQLITE_(?:CORRUPT|NOTADB)(?:_|$)/;


/** Whether an SQLite failure says that a database file is damaged. */
export function isDamage(err: unknown): boolean {

    return damageCodes.test(String(errnoCode(err)));
}


/** What a refusal of a damaged database file says: the file, what SQLite found, and what to do. */
export function damageMessage(file: string, found: string): string {

    return `${file}: ${found}: stop every localgate that uses this file, then put back a copy of it, or move it away (with any -wal and -shm file beside it) so that the namespace starts anew`;
}


/** What SQLite's full integrity check finds wrong with a database file, opened read-only: none when it is sound. */
export function integrityProblems(file: string): string[] {

    try {
        const db = new Sqlite(file, { readonly: true, fileMustExist: true });
        try {
            return db.prepare<[], string>('PRAGMA integrity_check').pluck().all().filter((result) => result !== 'ok');
        }
        finally {
            db.close();
        }
    }
    catch (err) {
        return [errorMessage(err)];
    }
}


/** How many rows the connection has inserted, updated or deleted since it opened: unchanged, its image still holds. */
export function changesSinceOpen(db: Database): number {

    return always(db.prepare<[], number>('SELECT total_changes()').pluck().get(), 'total_changes()');
}


/**
 * A private copy in memory of a database image this process made: only the pragmas that act on such a copy are set.
 * Nothing else can open it, so busy_timeout has no one to wait for, and it has no journal file to sync.
 */
export function openCopy(image: Buffer): Database {

    const db = new Sqlite(image);
    db.exec('PRAGMA foreign_keys = ON; PRAGMA trusted_schema = OFF');
    return db;
}


function applyPragmas(db: Database, inMemory: boolean, options: OpenOptions): void {

    const synchronous = options.synchronous ?? 'NORMAL';

    // busy_timeout first, so that switching the journal mode waits for another writer instead of failing.
    db.pragma('busy_timeout = 5000');
    db.pragma('journal_mode = WAL');

    db.pragma(`synchronous = ${synchronous}`);
    db.pragma('foreign_keys = ON');
    db.pragma('trusted_schema = OFF');

    Assert.equal(db.pragma('busy_timeout', { simple: true }), 5000, 'busy_timeout was not applied');
    Assert.equal(db.pragma('journal_mode', { simple: true }), inMemory ? 'memory' : 'wal', 'journal_mode was not applied');

    Assert.equal(db.pragma('synchronous', { simple: true }), synchronousLevels[synchronous], 'synchronous was not applied');
    Assert.equal(db.pragma('foreign_keys', { simple: true }), 1, 'foreign_keys was not applied');
    Assert.equal(db.pragma('trusted_schema', { simple: true }), 0, 'trusted_schema was not applied');
}


/** Runs SQLite's own consistency check; returns the problems it reports, none when the file is sound. */
export function quickCheck(db: Database): string[] {

    return db.prepare<[], string>('PRAGMA quick_check').pluck().all().filter((result) => result !== 'ok');
}


/** Checkpoints the write-ahead log into the main file and closes the connection. */
export function closeDatabase(db: Database): void {

    if (!db.open) {
        return;
    }

    if (db.name !== memory) {
        db.pragma('wal_checkpoint(TRUNCATE)');
    }

    db.close();
}
