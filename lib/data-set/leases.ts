import type { ClaimedAttempt, HeldLease } from '../outbox';
import type { FailureLog } from '../safe-listener';
import type { EventLog } from '../storage/engine';


/** An attempt claimed from one of the data set's event logs. */
export interface Claimed {
    log: EventLog;
    attempt: ClaimedAttempt;
}

/** How long a claim is leased, and how much of that an attempt's lease may have run down by the time it leaves. */
export interface LeaseTerms {
    // WEBHOOK_TIMEOUT_MS and WEBHOOK_LEASE_MARGIN_MS: past the longest attempt.
    lengthMs: number;
    // An attempt leaves with at least lengthMs less this of its lease ahead; with less, its log's unsent rest is renewed.
    slackMs: number;
}


function keyOf(position: number, endpointId: string): string {

    return `${position} ${endpointId}`;
}


/**
 * The leases of what one batch claimed and has not sent yet. An attempt leaves only under a lease with at least the
 * lease's length less the slack ahead of it, as it would right after its claim: with less left (the attempts before it
 * went to slow receivers), the unsent rest of its log's claim is renewed first, in one statement, so that another
 * process never takes over what this one still means to send. An attempt whose lease no renewal can keep (recorded
 * since, or claimed by another process once its lease had passed, the process having stalled) is not sent here.
 */
export class Leases {

    // The lease each attempt not sent yet holds now.
    private readonly leases = new Map<Claimed, string>();
    // The renewal under way of each log: the attempts that wait for it go on under its lease.
    private readonly renewals = new Map<EventLog, Promise<void>>();

    constructor(claimed: Claimed[], private readonly terms: LeaseTerms, private readonly log: FailureLog) {

        for (const item of claimed) {
            this.leases.set(item, item.attempt.leased_until);
        }
    }

    /** Takes an attempt to send now: answers whether it holds its lease, renewed first when too little of it is left. */
    async take(item: Claimed): Promise<boolean> {

        const lease = this.leases.get(item);
        if (lease !== undefined && Date.parse(lease) - Date.now() < this.terms.lengthMs - this.terms.slackMs) {
            await this.renew(item.log);
        }

        return this.leases.delete(item);
    }

    // One renewal of a log at a time: an attempt that needs one while another is under way waits for that one.
    private renew(log: EventLog): Promise<void> {

        let renewal = this.renewals.get(log);
        if (!renewal) {
            renewal = this.renewNow(log).finally(() => this.renewals.delete(log));
            this.renewals.set(log, renewal);
        }

        return renewal;
    }

    private async renewNow(log: EventLog): Promise<void> {

        const unsent = [...this.leases].filter(([item]) => item.log === log);
        const held: HeldLease[] = unsent.map(([{ attempt }, lease]) => ({ position: attempt.event.position, endpoint_id: attempt.endpoint.id, attempt: attempt.attempt, leased_until: lease }));
        const until = new Date(Date.now() + this.terms.lengthMs).toISOString();
        const renewed = new Set((await log.renewLeases(held, new Date(until))).map((lease) => keyOf(lease.position, lease.endpoint_id)));
        let lost = 0;
        for (const [item] of unsent) {
            // One taken meanwhile (with lease enough of its own) is on its way already.
            if (!this.leases.has(item)) {
                continue;
            }

            if (renewed.has(keyOf(item.attempt.event.position, item.attempt.endpoint.id))) {
                this.leases.set(item, until);
            }
            else {
                this.leases.delete(item);
                lost += 1;
            }
        }

        if (lost > 0) {
            this.log(['warn', 'webhooks'], { task: 'webhook lease renewal', attemptsNotSent: lost, reason: 'their deliveries moved on before their turn (claimed elsewhere once their lease had passed, recorded, or removed)' });
        }
    }
}
