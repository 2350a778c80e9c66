import Fs from 'node:fs';
import Path from 'node:path';

import { payDatabaseFile } from '../../config';
import { migrate, namespaceMigrations } from './migrate';
import { closeDatabase, memory } from './open';
import { recordPayKeys, type PayKeys } from './pay-credentials';
import { openPayDatabase, payMigrationsApplied } from './pay-database';


// The commands that make and re-key a pay database file. Their declarations name no engine type, so the package's
// public types need none of better-sqlite3's.

/** The three settings that point the service at a pay database and its key pair. */
export interface PayCredentials {
    PAY_DB_URL: string;
    PAY_DB_PUBLISHABLE_KEY: string;
    PAY_DB_SECRET_KEY: string;
}


/** Creates (or upgrades) the pay database, records a fresh key pair in it (retiring any earlier one) and returns the three settings. */
export function provisionPay(url: string): PayCredentials {

    const file = payDatabaseFile(url);
    if (file === memory) {
        throw new Error('PAY_DB_URL must name a file to provision: an in-memory pay database would vanish when this command exits');
    }

    Fs.mkdirSync(Path.dirname(file), { recursive: true });
    const db = openPayDatabase(file, false);
    let keys: PayKeys;
    try {
        migrate(db, namespaceMigrations('pay'));
        keys = recordPayKeys(db);
    }
    finally {
        closeDatabase(db);
    }

    return credentials(file, keys);
}


/** Records a new key pair in a provisioned pay database, retiring the old pair, and returns the three settings. */
export function rotatePayKeys(url: string): PayCredentials {

    const file = payDatabaseFile(url);
    if (!Fs.existsSync(file)) {
        throw new Error(`There is no pay database at ${file}: run \`localgate provision pay\` first`);
    }

    const db = openPayDatabase(file, true);
    try {
        if (!payMigrationsApplied(db)) {
            throw new Error(`The pay database at ${file} is not provisioned: run \`localgate provision pay\` first`);
        }

        return credentials(file, recordPayKeys(db));
    }
    finally {
        closeDatabase(db);
    }
}


function credentials(file: string, keys: PayKeys): PayCredentials {

    return { PAY_DB_URL: file, PAY_DB_PUBLISHABLE_KEY: keys.publishableKey, PAY_DB_SECRET_KEY: keys.secretKey };
}
