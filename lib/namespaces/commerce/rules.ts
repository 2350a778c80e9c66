import { DomainError } from '../../errors';
import type { TargetType } from './store';


// The decisions of the commerce namespace: every engine reads the rows, calls these, and writes what they allow.

/** One scam report per caller per target: a second one is a 409. */
export function checkFirstReport(targetType: TargetType, alreadyReported: boolean): void {

    if (alreadyReported) {
        throw new DomainError('conflict', 'duplicate_scam_report', `You have already reported this ${targetType}: one report per caller per target`);
    }
}


/** A business is flagged (the console marks it as reported) from this many scam reports on. */
export const flaggedAtReports = 1;


/** Whether the scam report that brought a business to `count` reports is the one that flags it (once per crossing). */
export function flagsBusiness(count: number): boolean {

    return count === flaggedAtReports;
}
