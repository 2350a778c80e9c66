import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import type { NamespaceSchema, OutboxMigration } from '../namespace';
import { migrationsRoot } from '../paths';
import type { EngineName } from './settings';


// Migration files, whatever engine applies them: migrations/<engine>/<namespace>/NNN_name.sql, with the same numbers
// and names for every engine, and the outbox's bodies (migrations/<engine>/outbox/<name>.sql) spliced into each
// event-writing namespace at the versions its descriptor names.

export interface Migration {
    version: number;
    name: string;
    file: string;
    sql: string;
    checksum: string;
    // The checksums of the files this one replaced, which databases made before it record (`-- earlier form: sha256 …`).
    earlier: readonly string[];
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

    return inOrder(migrationFiles(dir));
}


// A folder's migration files, in no order: a namespace's own are ordered with the outbox's spliced among them.
function migrationFiles(dir: string): Migration[] {

    return Fs.readdirSync(dir)
        .filter((entry) => entry.endsWith('.sql'))
        .map((entry) => {

            const match = migrationFile.exec(entry);
            if (!match) {
                throw new MigrationError(`Migration file ${Path.join(dir, entry)} must be named NNN_name.sql`);
            }

            return migrationOf(Number(match[1]), entry, Path.join(dir, entry));
        });
}


function migrationOf(version: number, name: string, file: string): Migration {

    const sql = Fs.readFileSync(file, 'utf8');
    const earlier = Array.from(sql.matchAll(earlierForm), (match) => match[0]);
    return { version, name, file, sql, checksum: checksum(sql), earlier };
}


const earlierForm = /(?<=^-- earlier form: sha256 )[0-9a-f]{64}\b/gm;


function inOrder(migrations: Migration[]): Migration[] {

    migrations.sort((a, b) => a.version - b.version);
    migrations.forEach((migration, index) => {

        if (migration.version !== index + 1) {
            throw new MigrationError(`Migration ${migration.file} should have version ${String(index + 1).padStart(3, '0')}: versions start at 001 and have no gaps`);
        }
    });

    return migrations;
}


/** Pay's migrations, which its readiness applies as pay is provisioned. */
export const paySchema: NamespaceSchema = { name: 'pay', migrations: migrationsRoot, events: { migrations: { 5: 'events', 7: 'endpoint_state' } } };


/**
 * The migrations of a namespace on an engine, read once per process (they do not change while it runs): its own files,
 * and the outbox's bodies at the versions its descriptor names, each recorded as NNN_<body>.sql.
 */
export function namespaceMigrations(engine: EngineName, namespace: NamespaceSchema): Migration[] {

    const outbox = Object.entries(namespace.events?.migrations ?? {});
    const dir = Path.join(namespace.migrations, engine, namespace.name);
    const key = `${dir}:${outbox.join(';')}`;
    let migrations = shipped.get(key);
    if (!migrations) {
        const spliced = outbox.map(([version, body]) => outboxMigration(engine, Number(version), body));
        migrations = inOrder([...migrationFiles(dir), ...spliced]);
        shipped.set(key, migrations);
    }

    return migrations;
}


function outboxMigration(engine: EngineName, version: number, body: OutboxMigration): Migration {

    return migrationOf(version, `${String(version).padStart(3, '0')}_${body}.sql`, Path.join(migrationsRoot, engine, 'outbox', `${body}.sql`));
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

        if (!recorded(migration, row.checksum)) {
            throw new MigrationError(`Migration ${migration.file} was edited after it was applied to ${place.name}: restore the file or start from a fresh database`);
        }
    }
}


/** True when every shipped migration is recorded, by version, with an unchanged checksum. */
export function everyMigrationApplied(applied: Iterable<readonly [number, string]>, migrations: Migration[]): boolean {

    const checksums = new Map(applied);
    return migrations.every((migration) => recorded(migration, checksums.get(migration.version)));
}


// A database records the checksum of the file it applied: this one, or one of those it replaced.
function recorded(migration: Migration, sum: string | undefined): boolean {

    return sum === migration.checksum || migration.earlier.includes(sum ?? '');
}


function checksum(sql: string): string {

    return Crypto.createHash('sha256').update(sql).digest('hex');
}


/** The names of the migrations shipped per namespace (001_name), as an export file lists them; every engine ships the same names. */
export function shippedMigrationNames(namespaces: readonly NamespaceSchema[]): Record<string, string[]> {

    return Object.fromEntries(namespaces.map((namespace) => [namespace.name, appliedMigrationNames('sqlite', namespace, Infinity)]));
}


/** The names of a namespace's migrations on an engine up to a schema version: those a database at that version has applied. */
export function appliedMigrationNames(engine: EngineName, namespace: NamespaceSchema, version: number | null): string[] {

    // A database that cannot say its version (null) has applied none that can be named.
    return namespaceMigrations(engine, namespace).filter((migration) => migration.version <= Number(version)).map((migration) => migration.name.replace(/\.sql$/, ''));
}
