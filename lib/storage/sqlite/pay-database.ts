import type { ProvisionedContents } from '../readiness';
import { everyMigrationApplied, paySchema } from '../migrations';
import { appliedMigrations, namespaceMigrations } from './migrate';
import { openDatabase, type Database } from './open';
import { recordedPayKeys } from './pay-credentials';


/** Opens a pay database with money-grade durability. */
export function openPayDatabase(file: string, fileMustExist: boolean): Database {

    return openDatabase(file, { synchronous: 'FULL', fileMustExist });
}


/** True when every shipped pay migration is recorded in the database with an unchanged checksum. */
export function payMigrationsApplied(db: Database): boolean {

    return everyMigrationApplied(appliedMigrations(db).map((row) => [row.version, row.checksum] as const), namespaceMigrations(paySchema));
}


/** What readiness decides on: read when the database can have changed. */
export function payContents(db: Database): ProvisionedContents {

    const recorded = recordedPayKeys(db);
    if (!recorded) {
        return { empty: holdsNoTable(db), recorded, complete: false };
    }

    return { empty: false, recorded, complete: payMigrationsApplied(db) };
}


/** True when the database holds tables but no pay migration: another application's, which provisioning leaves alone. */
export function foreignToPay(db: Database): boolean {

    if (holdsNoTable(db)) {
        return false;
    }

    try {
        return appliedMigrations(db).length === 0;
    }
    catch {
        // A schema_migrations table of another shape.
        return true;
    }
}


function holdsNoTable(db: Database): boolean {

    return db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' LIMIT 1`).get() === undefined;
}
