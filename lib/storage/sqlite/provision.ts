import Fs from 'node:fs';
import Path from 'node:path';

import { mintPayKeys, payCredentials, type PayCredentials, type PayKeys } from '../pay-keys';
import { paySchema } from '../migrations';
import { migrate, namespaceMigrations } from './migrate';
import { closeDatabase, memory } from './open';
import { recordPayKeys } from './pay-credentials';
import { foreignToPay, openPayDatabase, payMigrationsApplied } from './pay-database';


// The commands that make and re-key a pay database file. Their declarations name no engine type, so the package's
// public types need none of better-sqlite3's.

/** Creates (or upgrades) the pay database file, records the key pair in it (retiring any earlier one) and returns the three settings. */
export function provisionPay(file: string, keys: PayKeys): PayCredentials {

    if (file === memory) {
        throw new Error('PAY_DB_URL must name a file to provision: an in-memory pay database would vanish when this command exits');
    }

    Fs.mkdirSync(Path.dirname(file), { recursive: true });
    const db = openPayDatabase(file, false);
    try {
        if (foreignToPay(db)) {
            throw new Error(`The database at ${file} holds tables but no pay migrations: it belongs to something else, so pay is not provisioned there; point PAY_DB_URL at a new or empty database`);
        }

        migrate(db, namespaceMigrations(paySchema));
        recordPayKeys(db, keys);
    }
    finally {
        closeDatabase(db);
    }

    return payCredentials(file, keys);
}


/** Records a fresh key pair in a provisioned pay database file, retiring the old pair, and returns the three settings. */
export function rotatePayKeys(file: string): PayCredentials {

    if (!Fs.existsSync(file)) {
        throw new Error(`There is no pay database at ${file}: run \`npx localgate provision pay\` first`);
    }

    const db = openPayDatabase(file, true);
    try {
        if (!payMigrationsApplied(db)) {
            throw new Error(`The pay database at ${file} is not provisioned: run \`npx localgate provision pay\` first`);
        }

        const keys = mintPayKeys();
        recordPayKeys(db, keys);
        return payCredentials(file, keys);
    }
    finally {
        closeDatabase(db);
    }
}
