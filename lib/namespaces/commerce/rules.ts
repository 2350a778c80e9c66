import { DomainError } from '../../errors';
import type { Offer, OfferStatus, TargetType } from './store';


// The decisions of the commerce namespace: every engine reads the rows, calls these, and writes what they allow.

/** One scam report per caller per target: a second one is a 409. */
export function checkFirstReport(targetType: TargetType, alreadyReported: boolean): void {

    if (alreadyReported) {
        throw new DomainError('conflict', 'duplicate_scam_report', `You have already reported this ${targetType}: one report per caller per target`);
    }
}


/** The status an offer stored in `stored` has at `now` (toISOString() form): expired from its valid_until on. */
export function offerStatusAt(offer: Pick<Offer, 'valid_until'>, stored: OfferStatus, now: string): OfferStatus {

    return offer.valid_until <= now ? 'expired' : stored;
}
