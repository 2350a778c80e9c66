import Fs from 'node:fs';
import Path from 'node:path';

import { closeDatabase, openDatabase, quickCheck, type Database, type OpenOptions } from './open';
import { migrate, readMigrations, type Migration } from './migrate';
import { fixtureTablesEmpty, isRecord, loadFixture, SeedError, type Fixture } from './seed';
import { SettingError } from '../config';
import { demoDataRoot, migrationsRoot } from '../paths';


export { closeDatabase, openDatabase, type Database } from './open';
export { schemaVersion } from './migrate';
export { SeedError, type Fixture } from './seed';

export const memory = ':memory:';


/** Where a namespace's database lives: a file in the data directory, or memory. */
export function namespaceFile(dataDir: string, namespace: string): string {

    return dataDir === memory ? memory : Path.resolve(dataDir, `${namespace}.db`);
}


// Shipped migrations and demo data do not change while the process runs: read each once.
const shippedMigrations = new Map<string, Migration[]>();
const shippedDemo = new Map<string, Fixture | null>();


/** The migrations shipped for a namespace. */
export function namespaceMigrations(namespace: string): Migration[] {

    let migrations = shippedMigrations.get(namespace);
    if (!migrations) {
        migrations = readMigrations(Path.join(migrationsRoot, namespace));
        shippedMigrations.set(namespace, migrations);
    }

    return migrations;
}


/** Opens a namespace database, checks it, and brings its schema up to date. */
export function openNamespace(file: string | Buffer, namespace: string, options: OpenOptions = {}): Database {

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


// Servers in memory (tests, embedders) are made many times in one process: each namespace is migrated and seeded
// once, and every new server gets its own copy of that image.
const seededImages = new Map<string, Buffer>();


/** A new in-memory database of the namespace, migrated and holding the demo data. */
export function openSeededMemory(namespace: string): Database {

    let image = seededImages.get(namespace);
    if (!image) {
        const db = openNamespace(memory, namespace);
        try {
            seedDemo(db, namespace);
            image = db.serialize();
        }
        finally {
            closeDatabase(db);
        }

        seededImages.set(namespace, image);
    }

    return openNamespace(image, namespace);
}


/** Loads the shipped demo data of a namespace into a database that has none of it yet. */
export function seedDemo(db: Database, namespace: string): number {

    const file = Path.join(demoDataRoot, `${namespace}.json`);
    if (!shippedDemo.has(namespace)) {
        shippedDemo.set(namespace, Fs.existsSync(file) ? readFixture(file) as Fixture : null);
    }

    const fixture = shippedDemo.get(namespace);
    return fixture && fixtureTablesEmpty(db, fixture, file) ? loadFixture(db, fixture, file) : 0;
}


/** Reads a JSON fixture file, naming the file when it is not valid JSON. */
export function readFixture(file: string): unknown {

    try {
        return JSON.parse(Fs.readFileSync(file, 'utf8'));
    }
    catch (err) {
        throw new Error(`Cannot read fixture ${file}: ${(err as Error).message}`);
    }
}


/** Creates the data directory if needed and checks it can be read and written; names DATA_DIR when not. */
export function prepareDataDir(dataDir: string): void {

    if (dataDir === memory) {
        return;
    }

    try {
        Fs.mkdirSync(dataDir, { recursive: true });
        Fs.accessSync(dataDir, Fs.constants.R_OK | Fs.constants.W_OK);
    }
    catch (err) {
        throw new SettingError('DATA_DIR', `is not a readable and writable directory: ${dataDir} (${(err as NodeJS.ErrnoException).code})`);
    }
}


/** Loads a fixture file shaped {"<namespace>": {"<table>": [records]}} into the given databases; returns rows added per namespace. */
export function loadFixtureFile(databases: Record<string, Database>, file: string): Record<string, number> {

    const fixture = readFixture(file);
    if (!isRecord(fixture)) {
        throw new SeedError(`${file} must hold an object keyed by namespace`);
    }

    const entries = Object.entries(fixture as Record<string, Fixture>);
    for (const [namespace, tables] of entries) {
        if (!Object.hasOwn(databases, namespace)) {
            throw new SeedError(`${file}: unknown namespace "${namespace}" (expected one of ${Object.keys(databases).join(', ')})`);
        }

        if (!isRecord(tables)) {
            throw new SeedError(`${file}: "${namespace}" must hold an object keyed by table`);
        }
    }

    const counts: Record<string, number> = {};
    for (const [namespace, tables] of entries) {
        counts[namespace] = loadFixture(databases[namespace]!, tables, `${file} (${namespace})`);
    }

    return counts;
}
