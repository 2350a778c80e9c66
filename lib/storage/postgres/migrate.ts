import { errorMessage } from '../../errno';

import { MigrationError, verifyApplied, type AppliedMigration, type Migration } from '../migrations';
import type { PgDatabase, Runner } from './database';
import { sqlState } from './errors';


// One lock for every namespace of a database: processes starting at once take turns, so that each migration (and
// the extension the logistics schema needs) is applied once, and the demo data is loaded once.
const migrationLock = 'SELECT pg_advisory_xact_lock(7206115, 1)';


/** The migrations recorded in a namespace's schema, oldest first; none when it was never migrated. */
export async function appliedMigrations(db: Runner): Promise<AppliedMigration[]> {

    try {
        return await db.rows({ name: '', text: 'SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version' });
    }
    catch (err) {
        // No table yet (42P01), or no schema of that name (3F000): a namespace never migrated.
        if (['42P01', '3F000'].includes(sqlState(err) ?? '')) {
            return [];
        }

        throw err;
    }
}


/** The highest applied migration version, 0 for a schema never migrated. */
export async function schemaVersion(db: Runner): Promise<number> {

    const rows = await appliedMigrations(db);
    return rows.at(-1)?.version ?? 0;
}


/**
 * Creates the namespace's schema and applies its pending migrations, one transaction each under the migration lock;
 * refuses edited migrations and schemas newer than the code. Returns the versions applied.
 */
export async function migrate(db: PgDatabase, migrations: Migration[]): Promise<number[]> {

    const where = `schema ${db.schema} of ${describeUrl(db.url)}`;
    await db.transaction(async (tx) => {

        await lockMigrations(tx);
        await tx.exec(`CREATE SCHEMA IF NOT EXISTS ${db.schema}`);
        await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
            version integer PRIMARY KEY,
            name text NOT NULL,
            checksum text NOT NULL,
            applied_at text NOT NULL
        )`);
    });

    verifyApplied(await appliedMigrations(db), migrations, { subject: `The ${where}`, name: `the ${where}`, elsewhere: 'another database' });
    const applied: number[] = [];
    for (const migration of migrations) {
        try {
            const done = await db.transaction(async (tx) => {

                await lockMigrations(tx);
                // Checked under the lock: another process starting on the same database may have applied it meanwhile.
                if ((await appliedMigrations(tx)).some((row) => row.version === migration.version)) {
                    return false;
                }

                await tx.exec(migration.sql);
                await tx.rows({ name: '', text: 'INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES ($1, $2, $3, $4)' },
                    migration.version, migration.name, migration.checksum, new Date().toISOString());
                return true;
            });

            if (done) {
                applied.push(migration.version);
            }
        }
        catch (err) {
            // Every earlier migration is applied by now: the schema stays at the one before.
            throw new MigrationError(`Migration ${migration.file} failed and was rolled back (${where} stays at version ${migration.version - 1}): ${errorMessage(err)}`);
        }
    }

    return applied;
}


/** Runs work under the migration lock, in one transaction: what several processes must do once (loading demo data). */
export function underMigrationLock<T>(db: PgDatabase, work: (tx: Runner) => Promise<T>): Promise<T> {

    return db.transaction(async (tx) => {

        await lockMigrations(tx);
        return await work(tx);
    });
}


/** Takes the migration lock in a transaction, until it ends: what several processes must do once waits for it. */
export async function lockMigrations(tx: Runner): Promise<void> {

    await tx.exec(migrationLock);
}


/** A database URL without its password, for messages. */
export function describeUrl(url: string): string {

    try {
        const parsed = new URL(url);
        parsed.password = '';
        return `${parsed.host}${parsed.pathname}`;
    }
    catch {
        return 'the database';
    }
}
