import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import { payDatabaseFile } from '../../config';
import { memory, namespaceMigrations } from './images';
import { migrate } from './migrate';
import { closeDatabase } from './open';
import { openPayDatabase } from './pay-readiness';


export interface PayCredentials {
    PAY_DB_URL: string;
    PAY_DB_PUBLISHABLE_KEY: string;
    PAY_DB_SECRET_KEY: string;
}


/** Creates (or upgrades) the pay database and returns the three settings that point the service at it, with fresh keys. */
export function provisionPay(url: string): PayCredentials {

    const file = payDatabaseFile(url);
    if (file === memory) {
        throw new Error('PAY_DB_URL must name a file to provision: an in-memory pay database would vanish when this command exits');
    }

    Fs.mkdirSync(Path.dirname(file), { recursive: true });
    const db = openPayDatabase(file, false);
    try {
        migrate(db, namespaceMigrations('pay'));
    }
    finally {
        closeDatabase(db);
    }

    return {
        PAY_DB_URL: file,
        PAY_DB_PUBLISHABLE_KEY: `pk_local_${Crypto.randomBytes(16).toString('hex')}`,
        PAY_DB_SECRET_KEY: `sk_local_${Crypto.randomBytes(24).toString('hex')}`
    };
}
