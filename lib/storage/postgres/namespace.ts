import type { RecordContext } from '../../record-context';
import { errorMessage } from '../../errno';
import type { DatabaseSettings } from '../settings';
import type { FixtureRows } from '../../fixtures';
import type { Namespace } from '../../namespace';
import { demoData } from '../demo';
import type { EventLog, NamespaceHealth, SeedCheck, StoredRows, WaitingDatabase } from '../engine';
import { noStores } from '../no-stores';
import { MigrationError, namespaceMigrations } from '../migrations';
import { PgDatabase } from './database';
import { eventWriter, PgEventLog } from './events';
import { collectionsEmpty, exportRows, insertFixtureRows, postFixtureRows, seedMayLoad } from './fixtures';
import { describeUrl, migrate, schemaVersion, underMigrationLock } from './migrate';


/** One namespace's schema on a PostgreSQL database, with its pool. */
export class PgNamespace implements WaitingDatabase {

    readonly transactions = 'waiting';

    private constructor(readonly db: PgDatabase, private readonly namespace: Namespace, private readonly makeStore: (db: PgDatabase, context: RecordContext) => unknown) { }

    /** A namespace's schema over a pool opened and migrated already (a provisioned namespace's). */
    static async over(namespace: Namespace, db: PgDatabase): Promise<PgNamespace> {

        return new PgNamespace(db, namespace, await storeFactory(namespace));
    }

    /**
     * Opens the pool of a namespace's schema, migrates it, and loads the demo data once when asked and it has none;
     * `eventsKept` (EVENTS_KEPT) reaches the pool's event writer.
     */
    static async open(namespace: Namespace, url: string, settings: DatabaseSettings, seed: boolean, eventsKept?: number): Promise<PgNamespace> {

        const db = new PgDatabase(url, namespace.name, settings);
        eventWriter(db, eventsKept);
        let makeStore;
        try {
            makeStore = await storeFactory(namespace);
            await migrate(db, namespaceMigrations('postgres', namespace));
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
            throw startError(err, namespace.name, url);
        }

        return new PgNamespace(db, namespace, makeStore);
    }

    async health(): Promise<NamespaceHealth> {

        try {
            return { state: 'ready', engine: 'postgres', schema_version: await schemaVersion(this.db), storage: 'server' };
        }
        catch {
            return { state: 'unavailable', engine: 'postgres', schema_version: null, storage: 'server' };
        }
    }

    storeFixture(rows: FixtureRows, within: () => Promise<void>, seed?: SeedCheck): Promise<number | null> {

        return this.db.transaction(async (tx) => {

            if (seed && !await seedMayLoad(tx, rows, seed)) {
                return null;
            }

            const added = await insertFixtureRows(tx, rows);
            await postFixtureRows(tx, added, this.namespace.fixture?.posting);
            await within();
            return added.length;
        });
    }

    exportRows(tables: string[]): Promise<StoredRows> {

        return exportRows(this.db, tables);
    }

    store(context: RecordContext): unknown {

        return this.makeStore(this.db, context);
    }

    eventLog(namespace: string, context: RecordContext): EventLog {

        return new PgEventLog(namespace, this.db, context);
    }

    close(): Promise<void> {

        return this.db.close();
    }
}


// The namespace's store factory on PostgreSQL, loaded as it is placed there.
function storeFactory(namespace: Namespace): Promise<(db: PgDatabase, context: RecordContext) => unknown> {

    return (namespace.stores ?? noStores).postgres();
}


// A database that cannot be reached at start stops it with one line naming where it is (never the password).
function startError(err: unknown, namespace: string, url: string): Error {

    if (err instanceof MigrationError) {
        return err;
    }

    return new Error(`Cannot open the ${namespace} schema on PostgreSQL at ${describeUrl(url)}: ${errorMessage(err)}`);
}
