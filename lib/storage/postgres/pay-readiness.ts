import type { RecordContext } from '../../clock';
import type { DatabaseSettings, PaySettings } from '../../config';
import { everyMigrationApplied, namespaceMigrations, paySchema } from '../migrations';
import type { PayAccess, PayStatus, PayStore } from '../../namespaces/pay/store';
import type { PayKeys } from '../pay-keys';
import { payKeysDiffer, payStatus, type PayContents } from '../pay-status';
import type { WaitingRecords } from '../engine';
import { PgDatabase } from './database';
import { exportRows, insertPayFixtureRows } from './fixtures';
import { appliedMigrations, migrate, schemaVersion } from './migrate';
import { PgPayStore } from './pay';
import { payRecord, recordedKeys, schemaOccupied, type PayRecord } from './pay-credentials';


/**
 * Follows the pay schema on a PostgreSQL database as it gets provisioned or re-keyed, without a restart: once
 * provisioned, every call reads the recorded keys and the applied migrations in one query, so each process sees a
 * `localgate provision pay` or `rotate-keys` at once. A database that does not answer is pay unconfigured, never a
 * failed start.
 */
export class PgPayReadiness implements PayAccess {

    private readonly payStore: PgPayStore | null;

    private constructor(private readonly db: PgDatabase | null, private readonly keys: PayKeys, context: RecordContext) {

        this.payStore = db && new PgPayStore(db, context);
    }

    /** Opens the pool of the pay schema and applies pending pay migrations, but only to a schema provisioned before. */
    static async open(settings: PaySettings, database: DatabaseSettings, context: RecordContext): Promise<PgPayReadiness> {

        const keys = { publishableKey: settings.publishableKey ?? '', secretKey: settings.secretKey ?? '' };
        if (!settings.url || !settings.publishableKey || !settings.secretKey) {
            return new PgPayReadiness(null, keys, context);
        }

        const db = new PgDatabase(settings.url, 'pay', database);
        try {
            // Unreachable, or not ours: nothing to upgrade, and pay reads as unconfigured until it answers.
            const provisioned = await appliedMigrations(db).then((rows) => rows.length > 0, () => false);
            if (provisioned) {
                await migrate(db, namespaceMigrations('postgres', paySchema));
            }
        }
        catch (err) {
            await db.close();
            throw err;
        }

        return new PgPayReadiness(db, keys, context);
    }

    /** The status record, re-read from the database on every call. */
    async status(): Promise<PayStatus> {

        return payStatus(await this.contents(), this.keys);
    }

    async keysDiffer(): Promise<boolean> {

        return payKeysDiffer(await this.contents(), this.keys);
    }

    /** The schema version of the pay schema, null when the database does not answer or holds none of ours. */
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

    /** The store of the pay schema when it is ready, else null. */
    async store(): Promise<PayStore | null> {

        return (await this.status()).schema_ready ? this.payStore : null;
    }

    /** Pay's records when its schema is ready, else null. */
    async records(): Promise<WaitingRecords | null> {

        if (!(await this.status()).schema_ready) {
            return null;
        }

        const db = this.db!;
        return {
            transactions: 'waiting',
            storeFixture: (rows, within, seed) => db.transaction((tx) => insertPayFixtureRows(tx, rows, within, seed)),
            exportRows: (tables) => exportRows(db, tables)
        };
    }

    /** Ends the pool, if one was opened. */
    async close(): Promise<void> {

        await this.db?.close();
    }

    private async contents(): Promise<PayContents | null> {

        if (!this.db) {
            return null;
        }

        try {
            const record = (await this.db.row(payRecord))!;
            return { empty: false, recorded: recordedKeys(record), complete: migrationsApplied(record) };
        }
        catch {
            // No schema yet, one provisioned before keys were recorded, another application's, or no answer at all.
            return await this.db.row(schemaOccupied, this.db.schema).then((row) => ({ empty: !row!.occupied, recorded: null, complete: false }), () => null);
        }
    }
}


/** True when every shipped pay migration is recorded with an unchanged checksum. */
export function migrationsApplied(record: PayRecord): boolean {

    return everyMigrationApplied(record.applied, namespaceMigrations('postgres', paySchema));
}
