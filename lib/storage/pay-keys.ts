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


// A key given to record: whatever a hosted project's settings hold (its keys are JWTs of a few hundred characters),
// bounded, and printable so that it survives a shell and an env file.
// At least 8 characters, as logs and journals hide every value that holds a key.
const keyLength = { min: 8, max: 1024 };


/** A fresh random key pair. */
export function mintPayKeys(): PayKeys {

    return {
        publishableKey: `pk_local_${Crypto.randomBytes(16).toString('hex')}`,
        secretKey: `sk_local_${Crypto.randomBytes(24).toString('hex')}`
    };
}


/**
 * The pair to record: the given one, checked to be printable text of a bounded length, or a fresh one when neither key
 * is given. Throws naming the setting that is missing, empty or unfit, never its value.
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

    checkGivenKey('PAY_DB_PUBLISHABLE_KEY', publishableKey);
    checkGivenKey('PAY_DB_SECRET_KEY', secretKey);
    return { publishableKey, secretKey };
}


function checkGivenKey(name: string, key: string): void {

    if (!key.trim()) {
        throw new Error(`${name} is empty: set it to the key to record, or unset both keys for a fresh pair`);
    }

    if (key.length < keyLength.min || key.length > keyLength.max) {
        throw new Error(`${name} is ${key.length} characters long: a key to record has ${keyLength.min} to ${keyLength.max}`);
    }

    if (/\p{Cc}/u.test(key)) {
        throw new Error(`${name} holds a control character (a line break, a tab): a key must be printable text`);
    }
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
