import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import { migrationsRoot } from '../paths';


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


/** The migrations shipped for a namespace on an engine, read once per process (they do not change while it runs). */
export function namespaceMigrations(engine: 'sqlite' | 'postgres', namespace: string): Migration[] {

    const key = `${engine}/${namespace}`;
    let migrations = shipped.get(key);
    if (!migrations) {
        migrations = readMigrations(Path.join(migrationsRoot, engine, namespace));
        shipped.set(key, migrations);
    }

    return migrations;
}


const shipped = new Map<string, Migration[]>();


function checksum(sql: string): string {

    return Crypto.createHash('sha256').update(sql).digest('hex');
}
