import { isPostgresUrl, usesPostgres, type DatabaseSettings, type Settings } from '../config';
import type { Engine } from './engine';
import { chosenPayKeys, type PayCredentials, type PayKeys } from './pay-keys';
import { provisionPay as provisionSqlitePay, rotatePayKeys as rotateSqlitePayKeys } from './sqlite/provision';
import { SqliteEngine } from './sqlite/engine';


export type { PayCredentials, PayKeys } from './pay-keys';

const defaultDatabase: DatabaseSettings = { poolMax: 1, connectTimeoutMs: 5000, statementTimeoutMs: 10_000 };


/**
 * The engine the settings name. Instances are always SQLite in memory; the default data set is SQLite in DATA_DIR
 * unless settings place a namespace elsewhere (PostgreSQL, or an SQLite file of its own).
 */
export function createEngine(settings: Settings): Engine {

    const sqlite = new SqliteEngine(settings);
    if (!usesPostgres(settings) && !Object.keys(settings.namespaceUrls).length) {
        return sqlite;
    }

    // The composed data set and the PostgreSQL code (with `pg`) load only when settings ask for them: a start on the
    // SQLite default never pays for requiring them.
    return {
        openDefault: async (context) => (await import('./composed')).openComposed(settings, context),
        createInstance: (options) => sqlite.createInstance(options)
    };
}


/**
 * Creates (or upgrades) the pay database or schema, records a key pair (retiring any earlier one) and returns the
 * three settings: the pair given, which must look like a minted one, or a fresh one when none is given. Refuses a
 * database that holds tables but no pay migrations.
 */
export async function provisionPay(url: string, database: DatabaseSettings = defaultDatabase, keys: Partial<PayKeys> = {}): Promise<PayCredentials> {

    const pair = chosenPayKeys(keys);
    return isPostgresUrl(url) ? (await import('./postgres/provision')).provisionPostgresPay(url, database, pair) : provisionSqlitePay(url, pair);
}


/** Records a new key pair in a provisioned pay database or schema, retiring the old pair, and returns the three settings. */
export function rotatePayKeys(url: string, database: DatabaseSettings = defaultDatabase): Promise<PayCredentials> {

    return isPostgresUrl(url) ? import('./postgres/provision').then((postgres) => postgres.rotatePostgresPayKeys(url, database)) : Promise.resolve().then(() => rotateSqlitePayKeys(url));
}
