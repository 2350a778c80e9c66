import type { DatabaseSettings } from '../settings';
import { DomainError } from '../../errors';
import { namespaceMigrations, paySchema } from '../migrations';
import { mintPayKeys, payCredentials, type PayCredentials, type PayKeys } from '../pay-keys';
import { always } from '../../always';
import { PgDatabase } from './database';
import { appliedMigrations, describeUrl, migrate } from './migrate';
import { migrationsApplied, payRecord, recordPayKeys, schemaOccupied } from './pay-credentials';


// The commands that make and re-key the pay schema on a PostgreSQL database; every running process sees the result
// on its next pay request.

/** Creates (or upgrades) the pay schema, records the key pair in it (retiring any earlier one) and returns the three settings. */
export async function provisionPostgresPay(url: string, database: DatabaseSettings, keys: PayKeys): Promise<PayCredentials> {

    const db = new PgDatabase(url, 'pay', database);
    try {
        if (await foreignToPay(db)) {
            throw new Error(`The schema pay of the database at ${describeUrl(url)} holds tables but no pay migrations: it belongs to something else, so pay is not provisioned there; point PAY_DB_URL at another database`);
        }

        await migrate(db, namespaceMigrations('postgres', paySchema));
        await recordPayKeys(db, keys);
        return payCredentials(url, keys);
    }
    catch (err) {
        throw located(err, url);
    }
    finally {
        await db.close();
    }
}


/** Records a fresh key pair in a provisioned pay schema, retiring the old pair, and returns the three settings. */
export async function rotatePostgresPayKeys(url: string, database: DatabaseSettings): Promise<PayCredentials> {

    const db = new PgDatabase(url, 'pay', database);
    try {
        // Keys and migrations are checked and the new pair recorded in one transaction: a provision running at the same time waits.
        const keys = await db.transaction(async (tx) => {

            const record = await tx.row(payRecord).catch(() => undefined);
            if (!record || !migrationsApplied(record)) {
                return null;
            }

            const fresh = mintPayKeys();
            await recordPayKeys(tx, fresh);
            return fresh;
        }).catch((err: unknown) => {

            throw located(err, url);
        });

        if (!keys) {
            throw new Error(`The pay database at ${describeUrl(url)} is not provisioned: run \`npx localgate provision pay\` first`);
        }

        return payCredentials(url, keys);
    }
    finally {
        await db.close();
    }
}


// Tables in the pay schema but none of its migrations: another application's schema of that name.
async function foreignToPay(db: PgDatabase): Promise<boolean> {

    if (!always(await db.row(schemaOccupied, db.schema), 'the schema\'s tables').occupied) {
        return false;
    }

    return await appliedMigrations(db).then((rows) => rows.length === 0, () => true);
}


// A database that does not answer (or refuses the login) is named in the command's one line, never its password.
function located(err: unknown, url: string): unknown {

    if (err instanceof DomainError) {
        return new Error(`Cannot use the pay database at ${describeUrl(url)}: ${err.message}`);
    }

    return err;
}
