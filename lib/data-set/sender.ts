/** A call out of the process, as a webhook makes one. */
export interface OutboundCall {
    method: 'POST';
    url: string;
    headers: Record<string, string>;
    body: string;
}

/** What became of a call out: whether it left the process, and if not, why. */
export interface OutboundOutcome {
    sent: boolean;
    reason: string;
}

/** The one door out of the process for a data set: each call out goes through it, where it is journaled and fault rules reach it. */
export interface OutboundSender {

    /** Makes the call, or says why it was not made. */
    send(call: OutboundCall): Promise<OutboundOutcome>;
}


const notYet = 'localgate makes no outbound calls yet: the call stays in the process';


/** The sender of every data set until the API calls anything back: it sends nothing, and says so. */
export const heldSender: OutboundSender = {
    send: () => Promise.resolve({ sent: false, reason: notYet })
};
