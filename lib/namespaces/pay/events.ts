import { transactionSchema } from './schemas';


/** What pay's changes announce: each event's data is the transaction as its wallet's owner reads it. */
export const payEventTypes = {
    'pay.transaction.created': { description: 'A deposit or withdrawal was made: the transaction, pending or (through a provider that settles at once) completed', data: transactionSchema },
    'pay.transaction.completed': { description: 'A transaction settled: the transaction, completed (at once for a provider that settles at once, after its created event)', data: transactionSchema },
    'pay.transaction.failed': { description: 'A transaction settled failed (the bank returned it): the transaction, failed, with its failure_code', data: transactionSchema }
};
