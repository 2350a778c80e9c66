import type { DatabaseSettings, PaySettings } from '../settings';
import type { Namespace } from '../../namespace';
import { namespaceMigrations } from '../migrations';
import { ProvisionedNamespace, type ProvisionedContents, type ProvisionedSource } from '../readiness';
import { always } from '../../always';
import { PgDatabase } from './database';
import { eventWriter } from './events';
import { appliedMigrations, migrate, schemaVersion } from './migrate';
import { PgNamespace } from './namespace';
import { migrationsApplied, payRecord, recordedKeys, schemaOccupied } from './pay-credentials';


/**
 * A provisioned namespace's schema (pay's) on a PostgreSQL database, followed as it gets provisioned or re-keyed
 * without a restart. PostgreSQL gives no mark that costs less than the read itself (a LISTEN channel fed by triggers
 * would, see docs/architecture.md), so the recorded keys and the applied migrations are read in one query each time
 * readiness is asked, and each process sees a `localgate provision pay` or `rotate-keys` at once. A database that
 * does not answer is pay unconfigured, never a failed start.
 */
class PgProvisionedSource implements ProvisionedSource {

    readonly engine = 'postgres';
    readonly storage = 'server';
    private database: PgNamespace | null = null;

    constructor(private readonly namespace: Namespace, private readonly db: PgDatabase | null) { }

    mark(): null {

        return null;
    }

    async read(): Promise<{ contents: ProvisionedContents; database: PgNamespace } | null> {

        const db = this.db;
        if (!db) {
            return null;
        }

        const contents = await readContents(db);
        if (!contents) {
            return null;
        }

        this.database ??= await PgNamespace.over(this.namespace, db);
        return { contents, database: this.database };
    }

    async schemaVersion(): Promise<number | null> {

        if (!this.db) {
            return null;
        }

        try {
            return await schemaVersion(this.db);
        }
        catch {
            return null;
        }
    }

    async close(): Promise<void> {

        await this.db?.close();
    }

}


// What the schema holds; null when the database does not answer.
async function readContents(db: PgDatabase): Promise<ProvisionedContents | null> {

    try {
        const record = always(await db.row(payRecord), 'the pay record');
        return { empty: false, recorded: recordedKeys(record), complete: migrationsApplied(record) };
    }
    catch {
        // No schema yet, one provisioned before keys were recorded, another application's, or no answer at all.
        return await db.row(schemaOccupied, db.schema).then((row) => ({ empty: !always(row, 'the schema\'s tables').occupied, recorded: null, complete: false }), () => null);
    }
}


/**
 * Opens the pool of a provisioned namespace's schema (pay's) and applies pending migrations, but only to a schema
 * provisioned before; without a URL and both keys no pool is opened and it is never configured. `eventsKept`
 * (EVENTS_KEPT) reaches the pool's event writer.
 */
export async function openPgProvisioned(namespace: Namespace, settings: PaySettings, database: DatabaseSettings, eventsKept?: number): Promise<ProvisionedNamespace> {

    const keys = { publishableKey: settings.publishableKey ?? '', secretKey: settings.secretKey ?? '' };
    if (!settings.url || !settings.publishableKey || !settings.secretKey) {
        return new ProvisionedNamespace(new PgProvisionedSource(namespace, null), keys);
    }

    const db = new PgDatabase(settings.url, namespace.name, database);
    eventWriter(db, eventsKept);
    try {
        // Unreachable, or not ours: nothing to upgrade, and it reads as unconfigured until it answers.
        const provisioned = await appliedMigrations(db).then((rows) => rows.length > 0, () => false);
        if (provisioned) {
            await migrate(db, namespaceMigrations('postgres', namespace));
        }
    }
    catch (err) {
        await db.close();
        throw err;
    }

    return new ProvisionedNamespace(new PgProvisionedSource(namespace, db), keys);
}
