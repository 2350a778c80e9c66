import { sections, type PayStatus } from '../namespaces/pay/store';
import { payKeysMatch, type PayKeys, type RecordedPayKeys } from './pay-keys';


// The readiness rule of pay, the same on every engine: each engine reads what its pay database holds, this decides.

/** What a pay database that opens (or answers) holds, as far as readiness is concerned. */
export interface PayContents {

    /** True when it holds no table at all: a database `provision pay` has yet to make a pay database. */
    empty: boolean;

    /** The hashes of the pair recorded in it, null when none is (or it has no table for them). */
    recorded: RecordedPayKeys | null;

    /** True when every shipped pay migration is recorded in it with an unchanged checksum. */
    complete: boolean;
}


/**
 * The status record for these settings' keys and a database's contents; null contents stand for no database (a
 * setting unset, no file, a file that does not open, a server that does not answer). An empty database records no
 * pair, so it is configured without schema; once a pair is recorded, only that pair configures it, and a database
 * of another application, which records none, never is.
 */
export function payStatus(contents: PayContents | null, keys: PayKeys): PayStatus {

    if (!contents) {
        return { configured: false, schema_ready: false, sections };
    }

    if (contents.empty) {
        return { configured: true, schema_ready: false, sections };
    }

    const configured = contents.recorded !== null && payKeysMatch(contents.recorded, keys);
    return { configured, schema_ready: configured && contents.complete, sections };
}


/** True when a database records a pair and these settings' keys are not that pair: why a provisioned pay is not configured. */
export function payKeysDiffer(contents: PayContents | null, keys: PayKeys): boolean {

    return contents?.recorded ? !payKeysMatch(contents.recorded, keys) : false;
}
