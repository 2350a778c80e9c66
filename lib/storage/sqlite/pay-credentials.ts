import type { Statement } from 'better-sqlite3';

import { hashPayKeys, type PayKeys, type RecordedPayKeys } from '../pay-keys';
import type { Database } from './open';


/** Records the hashes of a key pair in a migrated pay database, replacing the previous pair. */
export function recordPayKeys(db: Database, keys: PayKeys): void {

    db.prepare(`
        INSERT INTO credentials (id, publishable_key_sha256, secret_key_sha256, recorded_at) VALUES (1, @publishable_key_sha256, @secret_key_sha256, @recorded_at)
        ON CONFLICT (id) DO UPDATE SET publishable_key_sha256 = excluded.publishable_key_sha256,
            secret_key_sha256 = excluded.secret_key_sha256, recorded_at = excluded.recorded_at
    `).run({ ...hashPayKeys(keys), recorded_at: new Date().toISOString() });
}


// Readiness asks after every change to the database: the query is prepared once per connection.
const recordedKeys = new WeakMap<Database, Statement<[], RecordedPayKeys>>();


/** The hashes of the pair recorded in a pay database; null when it holds none, or no table for them. */
export function recordedPayKeys(db: Database): RecordedPayKeys | null {

    try {
        let statement = recordedKeys.get(db);
        if (!statement) {
            statement = db.prepare<[], RecordedPayKeys>('SELECT publishable_key_sha256, secret_key_sha256 FROM credentials WHERE id = 1');
            recordedKeys.set(db, statement);
        }

        return statement.get() ?? null;
    }
    catch {
        // A database not provisioned yet, provisioned before keys were recorded, or not a pay database at all.
        return null;
    }
}
