import type { Scope } from '../scope';
import type { JournalEntry, Recorded } from '../data-set/journal-entry';
import { compilePattern } from './pattern-compiler';
import type { RequestPattern } from './pattern-schema';


/** The request journal of each data set, for the routes and the test kit. */
export interface JournalApi {
    /** A data set's entries, oldest first. */
    list(scope: Scope): JournalEntry[];
    /** The entries a pattern (which has passed requestPatternSchema) matches, oldest first. */
    find(scope: Scope, pattern: RequestPattern): JournalEntry[];
    /** Forgets a data set's entries. */
    clear(scope: Scope): void;
}


/** A data set's records, oldest first: a page builds the entries it shows and parses no other body. */
export function recordsOf(scope: Scope): readonly Recorded[] {

    return scope.services.journal.list();
}


/** The journal of each data set as the routes and the test kit read it. */
export const journalService: JournalApi = {
    list: (scope) => recordsOf(scope).map(({ entry }) => entry),
    find(scope, pattern) {

        const matches = compilePattern(pattern);
        return recordsOf(scope).filter(matches).map(({ entry }) => entry);
    },
    clear: (scope) => scope.services.journal.clear()
};
