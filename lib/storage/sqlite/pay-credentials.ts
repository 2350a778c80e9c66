import Crypto from 'node:crypto';

import type { Database } from './open';


export interface PayKeys {
    publishableKey: string;
    secretKey: string;
}


// The keys are 128 and 192 random bits: a plain SHA-256 hides them, no slow password hash is needed.
function sha256(key: string): Buffer {

    return Crypto.createHash('sha256').update(key, 'utf8').digest();
}


/** Records a fresh key pair in a migrated pay database, replacing the previous pair, and returns it. */
export function recordPayKeys(db: Database): PayKeys {

    const keys = {
        publishableKey: `pk_local_${Crypto.randomBytes(16).toString('hex')}`,
        secretKey: `sk_local_${Crypto.randomBytes(24).toString('hex')}`
    };

    db.prepare(`
        INSERT INTO credentials (id, publishable_key_sha256, secret_key_sha256, recorded_at) VALUES (1, ?, ?, ?)
        ON CONFLICT (id) DO UPDATE SET publishable_key_sha256 = excluded.publishable_key_sha256,
            secret_key_sha256 = excluded.secret_key_sha256, recorded_at = excluded.recorded_at
    `).run(sha256(keys.publishableKey).toString('hex'), sha256(keys.secretKey).toString('hex'), new Date().toISOString());
    return keys;
}


interface RecordedKeys {
    publishable_key_sha256: string;
    secret_key_sha256: string;
}

// Readiness asks on every pay request: the query is prepared once per connection.
const recordedKeys = new WeakMap<Database, { get(): unknown }>();


/** True when the pay database holds the hashes of exactly this key pair; false when it holds none, or no table for them. */
export function payKeysMatch(db: Database, keys: PayKeys): boolean {

    let recorded: RecordedKeys | undefined;
    try {
        let statement = recordedKeys.get(db);
        if (!statement) {
            statement = db.prepare('SELECT publishable_key_sha256, secret_key_sha256 FROM credentials WHERE id = 1');
            recordedKeys.set(db, statement);
        }

        recorded = statement.get() as RecordedKeys | undefined;
    }
    catch {
        // A database provisioned before keys were recorded, or not a pay database at all.
        return false;
    }

    if (!recorded) {
        return false;
    }

    // Both halves compared, each in constant time.
    const publishable = Crypto.timingSafeEqual(sha256(keys.publishableKey), Buffer.from(recorded.publishable_key_sha256, 'hex'));
    const secret = Crypto.timingSafeEqual(sha256(keys.secretKey), Buffer.from(recorded.secret_key_sha256, 'hex'));
    return publishable && secret;
}
