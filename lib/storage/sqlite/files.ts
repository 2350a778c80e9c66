import Fs from 'node:fs';
import Path from 'node:path';

import { errnoCode, errorMessage, restated } from '../../errno';
import { SettingError } from '../../setting-error';
import type { NamespaceSchema } from '../../namespace';
import { migrate, namespaceMigrations } from './migrate';
import { closeDatabase, damageMessage, integrityProblems, isDamage, openDatabase, quickCheck, type Database, type OpenOptions } from './open';


/** Where a namespace's database file lives in a data directory. */
export function namespaceFile(dataDir: string, namespace: string): string {

    return Path.resolve(dataDir, `${namespace}.db`);
}


/** Opens a namespace database, checks it, and brings its schema up to date. */
export function openNamespace(file: string, namespace: NamespaceSchema, options: OpenOptions = {}): Database {

    const db = openDatabase(file, options);
    try {
        const problems = quickCheck(db);
        if (problems.length) {
            throw new Error(damageMessage(`Database ${db.name}`, `failed its integrity check: ${problems.join('; ')}`));
        }

        migrate(db, namespaceMigrations(namespace));
    }
    catch (err) {
        closeDatabase(db);
        throw isDamage(err) ? restated(err, (found) => damageMessage(file, found)) : err;
    }

    return db;
}


/**
 * A failure at startup after the databases opened (reading event positions, catching up the timeline) that SQLite
 * says is damage names no file: the files given are checked in full, and the failure names the damaged ones and what
 * to do. Any other failure is answered as it is.
 */
export function namedDamage(err: unknown, files: readonly string[]): unknown {

    if (!isDamage(err)) {
        return err;
    }

    const damaged = files.filter((file) => Fs.existsSync(file)).map((file) => ({ file, problems: integrityProblems(file) })).filter(({ problems }) => problems.length > 0);
    const found = errorMessage(err);
    return new Error(damaged.length > 0 ? damaged.map(({ file, problems }) => damageMessage(file, `${found} (its integrity check: ${problems.slice(0, 3).join('; ')})`)).join('; ') : damageMessage(files.join(', '), `${found}, in one of these files`));
}


/** Creates the data directory if needed and checks it can be read and written; names DATA_DIR when not. */
export function prepareDataDir(dataDir: string): void {

    try {
        Fs.mkdirSync(dataDir, { recursive: true });
        Fs.accessSync(dataDir, Fs.constants.R_OK | Fs.constants.W_OK);
    }
    catch (err) {
        throw new SettingError('DATA_DIR', `is not a readable and writable directory: ${dataDir} (${errnoCode(err)})`);
    }
}


/** Removes what `absentDatabaseFiles` (storage/index.ts) listed: each database with its -wal and -shm, then a directory, if left empty. */
export function removeDatabaseFiles(paths: string[]): void {

    for (const path of paths) {
        if (Fs.statSync(path, { throwIfNoEntry: false })?.isDirectory()) {
            if (!Fs.readdirSync(path).length) {
                Fs.rmdirSync(path);
            }

            continue;
        }

        for (const suffix of ['', '-wal', '-shm']) {
            Fs.rmSync(`${path}${suffix}`, { force: true });
        }
    }
}
