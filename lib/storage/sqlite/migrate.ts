import { errorMessage } from '../../errno';
import type { NamespaceSchema } from '../../namespace';
import { MigrationError, namespaceMigrations as shippedMigrations, verifyApplied, type AppliedMigration, type Migration } from '../migrations';
import type { Database } from './open';


/** The SQLite migrations of a namespace. */
export function namespaceMigrations(namespace: NamespaceSchema): Migration[] {

    return shippedMigrations('sqlite', namespace);
}


/** The migrations recorded in a database, oldest first; none when it was never migrated. */
export function appliedMigrations(db: Database): AppliedMigration[] {

    const table = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).get();
    if (!table) {
        return [];
    }

    return db.prepare<[], AppliedMigration>('SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version').all();
}


/** Applies pending migrations, one immediate transaction each; refuses edited migrations and databases newer than the code. */
export function migrate(db: Database, migrations: Migration[]): number[] {

    verifyApplied(appliedMigrations(db), migrations, { subject: `Database ${db.name}`, name: db.name, elsewhere: 'another DATA_DIR' });

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
            throw new MigrationError(`Migration ${migration.file} failed and was rolled back (${db.name} stays at version ${schemaVersion(db)}): ${errorMessage(err)}`);
        }
    }

    return applied;
}


/** The highest applied migration version, 0 for a database never migrated. */
export function schemaVersion(db: Database): number {

    return appliedMigrations(db).at(-1)?.version ?? 0;
}
