import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import type { Database } from './open';


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


/** The migrations recorded in a database, oldest first; none when it was never migrated. */
export function appliedMigrations(db: Database): AppliedMigration[] {

    const table = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).get();
    if (!table) {
        return [];
    }

    return db.prepare('SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version').all() as AppliedMigration[];
}


/** Applies pending migrations, one immediate transaction each; refuses edited migrations and databases newer than the code. */
export function migrate(db: Database, migrations: Migration[]): number[] {

    verifyApplied(db, migrations);

    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        checksum TEXT NOT NULL,
        applied_at TEXT NOT NULL
    ) STRICT`);

    const isApplied = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?');
    const record = db.prepare('INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)');
    const applyOne = db.transaction((migration: Migration) => {

        // Checked under the write lock: another process starting on the same file may have applied it meanwhile.
        if (isApplied.get(migration.version)) {
            return false;
        }

        db.exec(migration.sql);
        record.run(migration.version, migration.name, migration.checksum, new Date().toISOString());
        return true;
    });

    const applied: number[] = [];
    for (const migration of migrations) {
        try {
            if (applyOne.immediate(migration)) {
                applied.push(migration.version);
            }
        }
        catch (err) {
            throw new MigrationError(`Migration ${migration.file} failed and was rolled back (${db.name} stays at version ${schemaVersion(db)}): ${(err as Error).message}`);
        }
    }

    return applied;
}


/** Throws when a recorded migration no longer matches its file or has no file at all. */
export function verifyApplied(db: Database, migrations: Migration[]): void {

    const byVersion = new Map(migrations.map((migration) => [migration.version, migration]));
    for (const row of appliedMigrations(db)) {
        const migration = byVersion.get(row.version);
        if (!migration) {
            throw new MigrationError(`Database ${db.name} is at schema version ${row.version} (${row.name}), newer than this localgate knows: upgrade localgate or use another DATA_DIR`);
        }

        if (migration.checksum !== row.checksum) {
            throw new MigrationError(`Migration ${migration.file} was edited after it was applied to ${db.name}: restore the file or start from a fresh database`);
        }
    }
}


/** The highest applied migration version, 0 for a database never migrated. */
export function schemaVersion(db: Database): number {

    const rows = appliedMigrations(db);
    return rows.length ? rows[rows.length - 1]!.version : 0;
}


function checksum(sql: string): string {

    return Crypto.createHash('sha256').update(sql).digest('hex');
}
