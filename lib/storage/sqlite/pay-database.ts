import { everyMigrationApplied } from '../migrations';
import { appliedMigrations, namespaceMigrations } from './migrate';
import { openDatabase, type Database } from './open';


/** Opens a pay database with money-grade durability. */
export function openPayDatabase(file: string, fileMustExist: boolean): Database {

    return openDatabase(file, { synchronous: 'FULL', fileMustExist });
}


/** True when every shipped pay migration is recorded in the database with an unchanged checksum. */
export function payMigrationsApplied(db: Database): boolean {

    return everyMigrationApplied(appliedMigrations(db).map((row) => [row.version, row.checksum] as const), namespaceMigrations('pay'));
}
