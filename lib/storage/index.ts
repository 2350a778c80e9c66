import Fs from 'node:fs';
import Path from 'node:path';

import { openDefaultDataSet } from './default';
import type { Engine, InstanceDataOptions } from './engine';
import { engineOf, payLocation } from './engines';
import { FixtureImages } from './fixture-images';
import { chosenPayKeys, type PayCredentials, type PayKeys } from './pay-keys';
import type { DatabaseSettings, StorageSettings } from './settings';
import { wallContext } from '../record-context';
import { createSqliteInstance } from './sqlite/engine';
import type { SqliteSnapshot } from './sqlite/instance';
import { namedDamage, removeDatabaseFiles } from './sqlite/files';


export type { PayCredentials, PayKeys } from './pay-keys';

const defaultDatabase: DatabaseSettings = { poolMax: 1, connectTimeoutMs: 5000, statementTimeoutMs: 10_000 };


/**
 * The engine the settings name. Instances are always SQLite in memory; the default data set is SQLite in DATA_DIR
 * unless settings place a namespace elsewhere (PostgreSQL, or an SQLite file of its own). The images of fixtures
 * loaded into instances are kept within FIXTURE_CACHE_MIB.
 */
export function createEngine(settings: StorageSettings): Engine {

    // Instances are SQLite's: the images and the copies they start from are its own.
    const fixtureImages = new FixtureImages<SqliteSnapshot>(settings.fixtureCacheMib * 2 ** 20);
    return {
        namespaces: settings.namespaces,
        openDefault: (context) => openDefaultDataSet(settings, context),
        createInstance: (options: InstanceDataOptions<SqliteSnapshot>) => createSqliteInstance(settings, options, fixtureImages),
        hasFixtureImage: (key) => fixtureImages.has(key)
    };
}


/**
 * Where the settings keep the namespaces' databases, in words for the start banner: in memory, in a directory or file,
 * or on a PostgreSQL database (host, port and name, never a password); one place for all, else each namespace's.
 */
export async function databasesWhere(settings: StorageSettings): Promise<string> {

    const placements = Object.entries(settings.placements);
    const places: string[] = [];
    for (const [, location] of placements) {
        places.push(await engineOf(location).describe(location, settings));
    }

    return new Set(places).size === 1 ? String(places[0]) : placements.map(([namespace], index) => `${namespace} ${places[index]}`).join(', ');
}


/**
 * Loads a fixture into the default data set, as `localgate seed` does, and returns the records added per namespace.
 * A load refused (or databases that do not open) removes the SQLite files and data directory the attempt created, so
 * nothing new is left behind.
 */
export async function seedDefaultDataSet(settings: StorageSettings, fixture: unknown, origin: string): Promise<Record<string, number>> {

    const absent = absentDatabaseFiles(settings);
    try {
        const data = await createEngine({ ...settings, seed: false, seedFile: undefined }).openDefault(wallContext());
        try {
            return await data.loadFixture(fixture, origin);
        }
        finally {
            await data.close();
        }
    }
    catch (err) {
        removeDatabaseFiles(absent);
        throw err;
    }
}


/**
 * A failure of the default data set's first steps after it opened (its event positions, the timeline's catch-up, the
 * deliveries left pending), with the database it means named where the failure is a damaged file's.
 */
export function startupFailure(settings: Pick<StorageSettings, 'placements' | 'payLocation' | 'dataDir'>, err: unknown): unknown {

    const placed = Object.entries(settings.placements).flatMap(([namespace, location]) => engineOf(location).files(location, namespace, settings.dataDir));
    const pay = settings.payLocation ? engineOf(settings.payLocation).files(settings.payLocation, 'pay', settings.dataDir) : [];
    return namedDamage(err, [...placed, ...pay]);
}


/**
 * Creates (or upgrades) the pay database or schema, records a key pair (retiring any earlier one) and returns the
 * three settings: the pair given (printable, 8 to 1024 characters each), or a fresh one when none is given. Refuses a
 * database that holds tables but no pay migrations.
 */
export async function provisionPay(url: string, database: DatabaseSettings = defaultDatabase, keys: Partial<PayKeys> = {}): Promise<PayCredentials> {

    const pair = chosenPayKeys(keys);
    // A URL that names no place is a rejection, as every other failure of the command.
    const location = payLocation(url);
    return await engineOf(location).provisionPay(location, database, pair);
}


/** Records a new key pair in a provisioned pay database or schema, retiring the old pair, and returns the three settings. */
export async function rotatePayKeys(url: string, database: DatabaseSettings = defaultDatabase): Promise<PayCredentials> {

    const location = payLocation(url);
    return await engineOf(location).rotatePayKeys(location, database);
}


/**
 * The SQLite database files the settings place (each namespace's, in DATA_DIR or where it is named) that do not exist
 * yet, then DATA_DIR itself when it does not: what opening the default data set would create.
 */
export function absentDatabaseFiles(settings: Pick<StorageSettings, 'placements' | 'dataDir'>): string[] {

    const files = Object.entries(settings.placements).flatMap(([namespace, location]) => engineOf(location).files(location, namespace, settings.dataDir));

    return [...files, Path.resolve(settings.dataDir)].filter((path) => !Fs.existsSync(path));
}
