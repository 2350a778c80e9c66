import Crypto from 'node:crypto';

import type { PayKeys } from '../sqlite/pay-credentials';
import { sql, type Runner } from './database';


// The keys are 128 and 192 random bits: a plain SHA-256 hides them, no slow password hash is needed.
function sha256(key: string): Buffer {

    return Crypto.createHash('sha256').update(key, 'utf8').digest();
}


const recordKeys = sql<[string, string, string]>('pay_record_keys', `
    INSERT INTO credentials (id, publishable_key_sha256, secret_key_sha256, recorded_at) VALUES (1, $1, $2, $3)
    ON CONFLICT (id) DO UPDATE SET publishable_key_sha256 = excluded.publishable_key_sha256,
        secret_key_sha256 = excluded.secret_key_sha256, recorded_at = excluded.recorded_at`);


/** Records a fresh key pair in a migrated pay schema, replacing the previous pair, and returns it. */
export async function recordPayKeys(db: Runner): Promise<PayKeys> {

    const keys = {
        publishableKey: `pk_local_${Crypto.randomBytes(16).toString('hex')}`,
        secretKey: `sk_local_${Crypto.randomBytes(24).toString('hex')}`
    };

    await db.rows(recordKeys, sha256(keys.publishableKey).toString('hex'), sha256(keys.secretKey).toString('hex'), new Date().toISOString());
    return keys;
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


/** True when the record holds the hashes of exactly this key pair. */
export function payKeysMatch(record: PayRecord, keys: PayKeys): boolean {

    // Both hashes are written together, in one row: a record without one has neither.
    if (!record.secret_key_sha256) {
        return false;
    }

    // Both halves compared, each in constant time.
    const publishable = Crypto.timingSafeEqual(sha256(keys.publishableKey), Buffer.from(record.publishable_key_sha256!, 'hex'));
    const secret = Crypto.timingSafeEqual(sha256(keys.secretKey), Buffer.from(record.secret_key_sha256, 'hex'));
    return publishable && secret;
}
