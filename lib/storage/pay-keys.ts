import Crypto from 'node:crypto';


// Pay key pairs, whatever engine records them: minted, checked, hashed and matched here; each engine only stores the
// hashes in its pay database's credentials table.

/** A pay key pair as the settings carry it. */
export interface PayKeys {
    publishableKey: string;
    secretKey: string;
}

/** The three settings that point the service at a pay database and its key pair. */
export interface PayCredentials {
    PAY_DB_URL: string;
    PAY_DB_PUBLISHABLE_KEY: string;
    PAY_DB_SECRET_KEY: string;
}

/** The SHA-256 of each key of a pair, in hex: what a pay database records instead of the keys. */
export interface RecordedPayKeys {
    publishable_key_sha256: string;
    secret_key_sha256: string;
}


// The shape every minted key has: a prefix naming its kind, then 128 or 192 random bits in hex.
const publishableShape = /^pk_local_[0-9a-f]{32}$/;
const secretShape = /^sk_local_[0-9a-f]{48}$/;


/** A fresh random key pair. */
export function mintPayKeys(): PayKeys {

    return {
        publishableKey: `pk_local_${Crypto.randomBytes(16).toString('hex')}`,
        secretKey: `sk_local_${Crypto.randomBytes(24).toString('hex')}`
    };
}


/**
 * The pair to record: the given one, checked to have the shape of a minted pair, or a fresh one when neither key is
 * given. Throws naming the setting that is missing or malformed, never its value.
 */
export function chosenPayKeys(given: Partial<PayKeys> = {}): PayKeys {

    const { publishableKey, secretKey } = given;
    if (publishableKey === undefined && secretKey === undefined) {
        return mintPayKeys();
    }

    if (publishableKey === undefined || secretKey === undefined) {
        const [missing, set] = publishableKey === undefined ? ['PAY_DB_PUBLISHABLE_KEY', 'PAY_DB_SECRET_KEY'] : ['PAY_DB_SECRET_KEY', 'PAY_DB_PUBLISHABLE_KEY'];
        throw new Error(`${missing} must be set together with ${set}: set both to record that pair, or neither for a fresh one`);
    }

    if (!publishableShape.test(publishableKey)) {
        throw new Error('PAY_DB_PUBLISHABLE_KEY must look like a key localgate mints: pk_local_ and 32 lowercase hex digits');
    }

    if (!secretShape.test(secretKey)) {
        throw new Error('PAY_DB_SECRET_KEY must look like a key localgate mints: sk_local_ and 48 lowercase hex digits');
    }

    return { publishableKey, secretKey };
}


/** The hashes a pay database records for a pair. */
export function hashPayKeys(keys: PayKeys): RecordedPayKeys {

    return {
        publishable_key_sha256: sha256(keys.publishableKey).toString('hex'),
        secret_key_sha256: sha256(keys.secretKey).toString('hex')
    };
}


/** True when the recorded hashes are those of exactly this pair, each half compared in constant time. */
export function payKeysMatch(recorded: RecordedPayKeys, keys: PayKeys): boolean {

    const publishable = Crypto.timingSafeEqual(sha256(keys.publishableKey), Buffer.from(recorded.publishable_key_sha256, 'hex'));
    const secret = Crypto.timingSafeEqual(sha256(keys.secretKey), Buffer.from(recorded.secret_key_sha256, 'hex'));
    return publishable && secret;
}


/** The three settings a command prints for a pay database and the pair it recorded. */
export function payCredentials(url: string, keys: PayKeys): PayCredentials {

    return { PAY_DB_URL: url, PAY_DB_PUBLISHABLE_KEY: keys.publishableKey, PAY_DB_SECRET_KEY: keys.secretKey };
}


// The keys are 128 and 192 random bits: a plain SHA-256 hides them, no slow password hash is needed.
function sha256(key: string): Buffer {

    return Crypto.createHash('sha256').update(key, 'utf8').digest();
}
