import { errnoCode } from '../../errno';
import { DomainError } from '../../errors';


// SQLite failures that escape a store's own checks still get an honest answer: constraints, and lock contention
// that outlasted busy_timeout (another process holding the write lock).
const sqliteErrors: Record<string, DomainError> = {
    SQLITE_CONSTRAINT_FOREIGNKEY: new DomainError('unprocessable', 'reference_not_found', 'A referenced record does not exist'),
    SQLITE_CONSTRAINT_UNIQUE: new DomainError('conflict', 'conflict', 'A record with the same key already exists'),
    SQLITE_CONSTRAINT_PRIMARYKEY: new DomainError('conflict', 'conflict', 'A record with the same key already exists'),
    SQLITE_BUSY: new DomainError('busy', 'database_busy', 'The database is busy, try again'),
    SQLITE_BUSY_SNAPSHOT: new DomainError('busy', 'database_busy', 'The database is busy, try again'),
    SQLITE_LOCKED: new DomainError('busy', 'database_busy', 'The database is busy, try again')
};


/** The domain error an SQLite failure stands for, or the failure itself when it stands for none (a bug: a 500). */
export function engineError(err: unknown): unknown {

    return sqliteErrors[String(errnoCode(err))] ?? err;
}
