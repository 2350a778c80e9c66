import { errnoCode, errorMessage } from '../../errno';
import { DomainError } from '../../errors';


// PostgreSQL failures that escape a store's own checks still get an honest answer, and never carry SQL or a
// constraint's Key (…) detail to a client.

const busy = new DomainError('busy', 'database_busy', 'The database is busy, try again');
const unavailable = new DomainError('unavailable', 'database_unavailable', 'The database cannot be reached, try again later');

const byState: Record<string, DomainError> = {
    '23503': new DomainError('unprocessable', 'reference_not_found', 'A referenced record does not exist'),
    '23505': new DomainError('conflict', 'conflict', 'A record with the same key already exists'),
    // Serialization failure and deadlock, once their retries ran out; a statement that ran past its timeout; a lock
    // that could not be had; too many connections.
    '40001': busy,
    '40P01': busy,
    '57014': busy,
    '55P03': busy,
    '53300': unavailable,
    '57P01': unavailable,
    '57P02': unavailable,
    '57P03': unavailable,
    // A database named in the URL that the server does not hold: waiting will not make it.
    '3D000': new DomainError('unavailable', 'database_unavailable', 'The database does not exist on that server: create it (createdb), or name one that does in the URL'),
    '28000': unavailable,
    '28P01': unavailable
};

// Errors of the connection itself, before or without any SQLSTATE: refused, reset, timed out, name not found.
const connectionCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE']);
const connectionMessages = /timeout exceeded when trying to connect|Connection terminated|Query read timeout|Client has encountered a connection error|Connection ended/i;


/** The SQLSTATE of a PostgreSQL error, or undefined. */
export function sqlState(err: unknown): string | undefined {

    const code = errnoCode(err);
    return code !== undefined && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}


/** True for the failures a transaction may run again from the start: serialization failure and deadlock. */
export function isRetryable(err: unknown): boolean {

    const state = sqlState(err);
    return state === '40001' || state === '40P01';
}


/** The domain error a PostgreSQL or connection failure stands for, or the failure itself when it stands for none (a bug: a 500). */
export function engineError(err: unknown): unknown {

    if (err instanceof DomainError) {
        return err;
    }

    const state = sqlState(err);
    if (state) {
        return byState[state] ?? (state.startsWith('08') ? unavailable : err);
    }

    if (connectionCodes.has(String(errnoCode(err))) || connectionMessages.test(errorMessage(err))) {
        return unavailable;
    }

    return err;
}
