import Fs from 'node:fs';
import Path from 'node:path';

import { payDatabaseFile } from '../../config';
import { memory, namespaceMigrations } from './images';
import { migrate } from './migrate';
import { closeDatabase } from './open';
import { openPayDatabase, type PayCredentials } from './pay-database';
import { recordPayKeys, type PayKeys } from './pay-credentials';


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

    return { PAY_DB_URL: file, PAY_DB_PUBLISHABLE_KEY: keys.publishableKey, PAY_DB_SECRET_KEY: keys.secretKey };
}
