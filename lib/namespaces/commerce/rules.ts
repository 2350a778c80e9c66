import { DomainError } from '../../errors';
import type { TargetType } from './store';


// The decisions of the commerce namespace: every engine reads the rows, calls these, and writes what they allow.

/** One scam report per caller per target: a second one is a 409. */
export function checkFirstReport(targetType: TargetType, alreadyReported: boolean): void {

    if (alreadyReported) {
        throw new DomainError('conflict', 'duplicate_scam_report', `You have already reported this ${targetType}: one report per caller per target`);
    }
}


// The console shows a record flagged (its warning badge) from its first scam report on.
const flaggedFrom = 1;

/** Whether a report that brought a target's count to `count` is the one that makes it cross into flagged: once, never again. */
export function crossesFlagged(count: number): boolean {

    return count === flaggedFrom;
}
