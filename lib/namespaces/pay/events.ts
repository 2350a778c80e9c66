import type { EventTypeSpec } from '../../namespace';
import type { AnnouncedEvent } from '../../storage/events-sql';
import type { Settlement } from './rules';
import { transactionSchema } from './schemas';
import type { PayTransaction } from './store';


// What pay's changes announce, decided here once for both engines: a store persists the events these functions answer
// and makes pending the instant they name.

/** The record each of pay's event types carries. */
interface PayEventData {
    'pay.transaction.created': PayTransaction;
    'pay.transaction.completed': PayTransaction;
    'pay.transaction.failed': PayTransaction;
}

/** An event pay announces. */
export type PayEvent = AnnouncedEvent<PayEventData>;

/** The event of a settlement, which is also the type of the transition that made it. */
export type SettlementEvent = Extract<PayEvent, { type: `pay.transaction.${Settlement['status']}` }>;


/** What pay's changes announce: each event's data is the transaction as its wallet's owner reads it. */
export const payEventTypes = {
    'pay.transaction.created': { description: 'A deposit or withdrawal was made: the transaction, pending or (through a provider that settles at once) completed', data: transactionSchema },
    'pay.transaction.completed': { description: 'A transaction settled: the transaction, completed (at once for a provider that settles at once, after its created event)', data: transactionSchema },
    'pay.transaction.failed': { description: 'A transaction settled failed (the bank returned it): the transaction, failed, with its failure_code', data: transactionSchema }
} satisfies Record<keyof PayEventData, EventTypeSpec>;

/** The event types of pay's transitions: a pending transaction settles as the clock passes its settles_at. */
export const payTransitions: readonly SettlementEvent['type'][] = ['pay.transaction.completed', 'pay.transaction.failed'];


/**
 * What a move announces as it is made: the transaction created and, for a provider that settles at once (the
 * transaction made completed), its completion at the same instant, after it.
 */
export function transactionMadeEvents(transaction: PayTransaction): PayEvent[] {

    const created: PayEvent = { type: 'pay.transaction.created', created_at: transaction.created_at, data: transaction };
    if (transaction.status !== 'completed') {
        return [created];
    }

    return [created, { type: 'pay.transaction.completed', created_at: transaction.created_at, data: transaction }];
}


/** The instant a move makes pending: its settles_at, when it settles later; null for one that settled as it was made. */
export function transactionDue(transaction: PayTransaction): Date | null {

    return transaction.status === 'pending' ? new Date(transaction.settles_at) : null;
}


/** What a settlement announces: the transaction as it reads once settled, completed or failed, at its settles_at. */
export function settlementEvent(settlement: Settlement, transaction: PayTransaction): SettlementEvent {

    return { type: `pay.transaction.${settlement.status}`, created_at: transaction.settles_at, data: transaction };
}
