import type { DatabaseSettings } from '../../config';
import { DomainError } from '../../errors';
import type { PayKeys } from '../sqlite/pay-credentials';
import type { PayCredentials } from '../sqlite/provision';
import { PgDatabase } from './database';
import { describeUrl, migrate } from './migrate';
import { payRecord, recordPayKeys } from './pay-credentials';
import { migrationsApplied } from './pay-readiness';


// The commands that make and re-key the pay schema on a PostgreSQL database; every running process sees the result
// on its next pay request.

/** Creates (or upgrades) the pay schema, records a fresh key pair in it (retiring any earlier one) and returns the three settings. */
export async function provisionPostgresPay(url: string, database: DatabaseSettings): Promise<PayCredentials> {

    const db = new PgDatabase(url, 'pay', database);
    try {
        await migrate(db);
        return credentials(url, await recordPayKeys(db));
    }
    catch (err) {
        throw located(err, url);
    }
    finally {
        await db.close();
    }
}


/** Records a new key pair in a provisioned pay schema, retiring the old pair, and returns the three settings. */
export async function rotatePostgresPayKeys(url: string, database: DatabaseSettings): Promise<PayCredentials> {

    const db = new PgDatabase(url, 'pay', database);
    try {
        // Keys and migrations are checked and the new pair recorded in one transaction: a provision running at the same time waits.
        const keys = await db.transaction(async (tx) => {

            const record = await tx.row(payRecord).catch(() => undefined);
            return record && migrationsApplied(record) ? await recordPayKeys(tx) : null;
        }).catch((err: unknown) => {

            throw located(err, url);
        });

        if (!keys) {
            throw new Error(`The pay database at ${describeUrl(url)} is not provisioned: run \`localgate provision pay\` first`);
        }

        return credentials(url, keys);
    }
    finally {
        await db.close();
    }
}


// A database that does not answer (or refuses the login) is named in the command's one line, never its password.
function located(err: unknown, url: string): unknown {

    if (err instanceof DomainError) {
        return new Error(`Cannot use the pay database at ${describeUrl(url)}: ${err.message}`);
    }

    return err;
}


function credentials(url: string, keys: PayKeys): PayCredentials {

    return { PAY_DB_URL: url, PAY_DB_PUBLISHABLE_KEY: keys.publishableKey, PAY_DB_SECRET_KEY: keys.secretKey };
}
