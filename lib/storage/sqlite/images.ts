import Fs from 'node:fs';
import Path from 'node:path';

import { SettingError } from '../../config';
import { demoData } from '../demo';
import { namespaceMigrations as shippedMigrations, type Migration } from '../migrations';
import { migrate } from './migrate';
import { closeDatabase, openDatabase, quickCheck, type Database, type OpenOptions } from './open';
import { collectionsEmpty, storeFixtureRows } from './fixtures';


export const memory = ':memory:';

/** The namespaces every data set has a database for; pay is apart, as its database is provisioned on its own. */
export const namespaces = ['commerce', 'logistics', 'weather'] as const;

export type Namespace = typeof namespaces[number];

export { fixtureSpecs } from '../demo';


/** Where a namespace's database file lives in a data directory. */
export function namespaceFile(dataDir: string, namespace: string): string {

    return Path.resolve(dataDir, `${namespace}.db`);
}



/** The SQLite migrations shipped for a namespace. */
export function namespaceMigrations(namespace: string): Migration[] {

    return shippedMigrations('sqlite', namespace);
}


/** Opens a namespace database, checks it, and brings its schema up to date. */
export function openNamespace(file: string, namespace: string, options: OpenOptions = {}): Database {

    const db = openDatabase(file, options);
    try {
        const problems = quickCheck(db);
        if (problems.length) {
            throw new Error(`Database ${db.name} failed its integrity check: ${problems.join('; ')}`);
        }

        migrate(db, namespaceMigrations(namespace));
    }
    catch (err) {
        closeDatabase(db);
        throw err;
    }

    return db;
}


// Data sets in memory are made many times in one process: each namespace is migrated, and seeded or not, once into an
// image, and every new data set gets its own copy of that image.
const images = new Map<string, Buffer>();


/** The image of a namespace database in memory: migrated, with the demo data when seeded. */
export function namespaceImage(namespace: string, seeded: boolean): Buffer {

    const key = `${namespace}:${seeded}`;
    let image = images.get(key);
    if (!image) {
        const db = openNamespace(memory, namespace, namespace === 'pay' ? { synchronous: 'FULL' } : {});
        try {
            if (seeded) {
                seedDemo(db, namespace);
            }

            image = db.serialize();
        }
        finally {
            closeDatabase(db);
        }

        images.set(key, image);
    }

    return image;
}


/** Loads the shipped demo data of a namespace into a database that has none of it yet; returns the rows added. */
export function seedDemo(db: Database, namespace: string): number {

    const demo = demoData(namespace);
    if (!demo || !collectionsEmpty(db, Object.keys(demo.collections))) {
        return 0;
    }

    return storeFixtureRows(db, demo.rows());
}


/** Creates the data directory if needed and checks it can be read and written; names DATA_DIR when not. */
export function prepareDataDir(dataDir: string): void {

    try {
        Fs.mkdirSync(dataDir, { recursive: true });
        Fs.accessSync(dataDir, Fs.constants.R_OK | Fs.constants.W_OK);
    }
    catch (err) {
        throw new SettingError('DATA_DIR', `is not a readable and writable directory: ${dataDir} (${(err as NodeJS.ErrnoException).code})`);
    }
}
