import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import type { NamespaceSchema } from '../namespace';
import { migrationsRoot } from '../paths';
import type { EngineName } from './engines';


// Migration files, whatever engine applies them: migrations/<engine>/<namespace>/NNN_name.sql, with the same numbers
// and names for every engine.

export interface Migration {
    version: number;
    name: string;
    file: string;
    sql: string;
    checksum: string;
}

export interface AppliedMigration {
    version: number;
    name: string;
    checksum: string;
    applied_at: string;
}

export class MigrationError extends Error {

    override name = 'MigrationError';
}


const migrationFile = /^(\d{3})[_-][a-z0-9_-]+\.sql$/;


/** Reads a namespace's migration files in version order; a misnamed or duplicated version is a programmer mistake. */
export function readMigrations(dir: string): Migration[] {

    const migrations = Fs.readdirSync(dir)
        .filter((entry) => entry.endsWith('.sql'))
        .map((entry) => {

            const match = migrationFile.exec(entry);
            if (!match) {
                throw new MigrationError(`Migration file ${Path.join(dir, entry)} must be named NNN_name.sql`);
            }

            const file = Path.join(dir, entry);
            const sql = Fs.readFileSync(file, 'utf8');
            return { version: Number(match[1]), name: entry, file, sql, checksum: checksum(sql) };
        })
        .sort((a, b) => a.version - b.version);

    migrations.forEach((migration, index) => {

        if (migration.version !== index + 1) {
            throw new MigrationError(`Migration ${migration.file} should have version ${String(index + 1).padStart(3, '0')}: versions start at 001 and have no gaps`);
        }
    });

    return migrations;
}


/** Pay's migrations, which its readiness applies as pay is provisioned. */
export const paySchema: NamespaceSchema = { name: 'pay', migrations: migrationsRoot };


/** The migrations of a namespace on an engine, read once per process (they do not change while it runs). */
export function namespaceMigrations(engine: EngineName, namespace: NamespaceSchema): Migration[] {

    const key = Path.join(namespace.migrations, engine, namespace.name);
    let migrations = shipped.get(key);
    if (!migrations) {
        migrations = readMigrations(key);
        shipped.set(key, migrations);
    }

    return migrations;
}


const shipped = new Map<string, Migration[]>();


/** How messages name a database: at the start of a sentence, within one, and where else to turn. */
export interface MigrationPlace {
    subject: string;
    name: string;
    elsewhere: string;
}


/** Throws when a recorded migration no longer matches its file, or has no file at all (a database newer than the code). */
export function verifyApplied(applied: AppliedMigration[], migrations: Migration[], place: MigrationPlace): void {

    const byVersion = new Map(migrations.map((migration) => [migration.version, migration]));
    for (const row of applied) {
        const migration = byVersion.get(row.version);
        if (!migration) {
            throw new MigrationError(`${place.subject} is at schema version ${row.version} (${row.name}), newer than this localgate knows: upgrade localgate or use ${place.elsewhere}`);
        }

        if (migration.checksum !== row.checksum) {
            throw new MigrationError(`Migration ${migration.file} was edited after it was applied to ${place.name}: restore the file or start from a fresh database`);
        }
    }
}


/** True when every shipped migration is recorded, by version, with an unchanged checksum. */
export function everyMigrationApplied(applied: Iterable<readonly [number, string]>, migrations: Migration[]): boolean {

    const checksums = new Map(applied);
    return migrations.every((migration) => checksums.get(migration.version) === migration.checksum);
}


function checksum(sql: string): string {

    return Crypto.createHash('sha256').update(sql).digest('hex');
}


/** The names of the migrations shipped per namespace (001_name), as an export file lists them; every engine ships the same names. */
export function shippedMigrationNames(namespaces: readonly NamespaceSchema[]): Record<string, string[]> {

    return Object.fromEntries(namespaces.map((namespace) => [namespace.name, appliedMigrationNames('sqlite', namespace, Infinity)]));
}


/** The names of a namespace's migrations on an engine up to a schema version: those a database at that version has applied. */
export function appliedMigrationNames(engine: EngineName, namespace: NamespaceSchema, version: number): string[] {

    return namespaceMigrations(engine, namespace).filter((migration) => migration.version <= version).map((migration) => migration.name.replace(/\.sql$/, ''));
}
