import type { DatabaseSettings } from '../../config';
import type { FixtureRows } from '../../fixtures';
import { demoData } from '../demo';
import type { NamespaceHealth } from '../engine';
import { PgDatabase } from './database';
import { collectionsEmpty, insertFixtureRows } from './fixtures';
import { describeUrl, migrate, schemaVersion, underMigrationLock } from './migrate';


/** One namespace's schema on a PostgreSQL database, with its pool. */
export class PgNamespace {

    readonly kind = 'async';

    private constructor(readonly db: PgDatabase) { }

    /** Opens the pool of a namespace's schema, migrates it, and loads the demo data once when asked and it has none. */
    static async open(namespace: string, url: string, settings: DatabaseSettings, seed: boolean): Promise<PgNamespace> {

        const db = new PgDatabase(url, namespace, settings);
        try {
            await migrate(db);
            const demo = seed ? demoData(namespace) : null;
            if (demo) {
                await underMigrationLock(db, async (tx) => {

                    if (await collectionsEmpty(tx, Object.keys(demo.collections))) {
                        await insertFixtureRows(tx, demo.rows());
                    }
                });
            }
        }
        catch (err) {
            await db.close();
            throw startError(err, namespace, url);
        }

        return new PgNamespace(db);
    }

    /** Ready with its schema version, or unavailable when the database does not answer. */
    async health(): Promise<NamespaceHealth> {

        try {
            return { state: 'ready', engine: 'postgres', schema_version: await schemaVersion(this.db), storage: 'server' };
        }
        catch {
            return { state: 'unavailable', engine: 'postgres', schema_version: null, storage: 'server' };
        }
    }

    /** Stores fixture rows in one transaction; `within` runs inside it, last: a throw there rolls this load back too. */
    storeFixture(rows: FixtureRows, within: () => Promise<void>): Promise<number> {

        return this.db.transaction(async (tx) => {

            const inserted = await insertFixtureRows(tx, rows);
            await within();
            return inserted;
        });
    }

    close(): Promise<void> {

        return this.db.close();
    }
}


// A database that cannot be reached at start stops it with one line naming where it is (never the password).
function startError(err: unknown, namespace: string, url: string): Error {

    const failure = err as Error;
    if (failure.name === 'MigrationError') {
        return failure;
    }

    return new Error(`Cannot open the ${namespace} schema on PostgreSQL at ${describeUrl(url)}: ${failure.message}`);
}
