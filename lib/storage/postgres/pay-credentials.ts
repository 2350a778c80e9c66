import { everyMigrationApplied, namespaceMigrations, paySchema } from '../migrations';
import { hashPayKeys, type PayKeys, type RecordedPayKeys } from '../pay-keys';
import { sql, type Runner } from './database';
import { present } from '../../always';


const recordKeys = sql<[string, string, string]>('pay_record_keys', `
    INSERT INTO credentials (id, publishable_key_sha256, secret_key_sha256, recorded_at) VALUES (1, $1, $2, $3)
    ON CONFLICT (id) DO UPDATE SET publishable_key_sha256 = excluded.publishable_key_sha256,
        secret_key_sha256 = excluded.secret_key_sha256, recorded_at = excluded.recorded_at`);


/** Records the hashes of a key pair in a migrated pay schema, replacing the previous pair. */
export async function recordPayKeys(db: Runner, keys: PayKeys): Promise<void> {

    const hashes = hashPayKeys(keys);
    await db.rows(recordKeys, hashes.publishable_key_sha256, hashes.secret_key_sha256, new Date().toISOString());
}


/** What the readiness of pay is decided on: the recorded key hashes and the applied migrations. */
export interface PayRecord {
    publishable_key_sha256: string | null;
    secret_key_sha256: string | null;
    applied: [number, string][];
}

/** One query for both: the credentials table is created by the last migration, so a schema without it fails the query. */
export const payRecord = sql<[], PayRecord>('pay_record', `SELECT
    (SELECT publishable_key_sha256 FROM credentials WHERE id = 1) AS publishable_key_sha256,
    (SELECT secret_key_sha256 FROM credentials WHERE id = 1) AS secret_key_sha256,
    (SELECT coalesce(json_agg(json_build_array(version, checksum) ORDER BY version), '[]') FROM schema_migrations) AS applied`);


/** The hashes the record holds, null when it holds none. */
export function recordedKeys(record: PayRecord): RecordedPayKeys | null {

    // Both hashes are written together, in one row: a record without one has neither.
    return record.secret_key_sha256 ? { publishable_key_sha256: present(record.publishable_key_sha256, 'the publishable key\'s hash'), secret_key_sha256: record.secret_key_sha256 } : null;
}


/** True when a schema holds any table (or view) at all: a schema that is missing holds none. */
export const schemaOccupied = sql<[string], { occupied: boolean }>('pay_schema_occupied', `SELECT EXISTS (
    SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f')) AS occupied`);


/** True when every shipped pay migration is recorded with an unchanged checksum. */
export function migrationsApplied(record: PayRecord): boolean {

    return everyMigrationApplied(record.applied, namespaceMigrations('postgres', paySchema));
}
