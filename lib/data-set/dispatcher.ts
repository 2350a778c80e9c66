import { setTimeout as sleep } from 'node:timers/promises';

import type { DeliveryJournal } from './deliveries';
import { Leases, type Claimed } from './leases';
import { signingSecrets, webhookId, type AttemptOutcome, type ClaimedAttempt } from '../outbox';
import { signatureHeaders } from '../signing';
import type { FaultSet } from './fault-rules';
import { failureOf, safely, type FailureLog } from '../safe-listener';
import type { EventLog } from '../storage/engine';
import { latestInstant, type Clock } from '../record-context';
import type { Loop, Phase } from './loop';
import type { OutboundOutcome, OutboundSender } from './sender';
import type { AttemptStops, Moved } from './timeline';


/** Finds the event logs of a data set as it is now: a restore or a pay provisioned since may have made new ones. */
export type EventLogs = () => Promise<EventLog[]>;

/** What a dispatcher works with: its data set's clock, loop, door out, delivery journal and fault rules. */
export interface DispatcherParts {
    clock: Clock;
    loop: Loop;
    sender: OutboundSender;
    deliveries: DeliveryJournal;
    faults: () => FaultSet | null;
    log: FailureLog;
    // WEBHOOK_TIMEOUT_MS: a claim's lease outlasts the longest attempt.
    timeoutMs: number;
    // WEBHOOK_LEASE_MARGIN_MS: and the longest latency a fault rule adds, by this much (70 s unless set); an attempt
    // leaves with all of its lease ahead but a second (half the margin, when that is less).
    leaseMarginMs: number;
    // WEBHOOK_DISABLE_AFTER: the deliveries an endpoint gives up in a row that disable it (0: never).
    disableAfter: number;
}

/** What a move of the clock did, with the webhook attempts it made by its answer and those due by its target still to make then. */
export interface MoveAttempts {
    moved: Moved;
    attempted: number;
    remaining: number;
    // Resolves once the move's walk is over, which is later than its answer when it answered at its deadline.
    walked: Promise<void>;
}

// Attempts claimed from each log at once (their leases renewed as they wait for their turn), and endpoints sent to at
// once (each endpoint's attempts go one at a time).
const claimBatch = 100;
const concurrency = 8;

// When attempts are due that no pass could claim (another process holds them, or one that stopped does until its
// lease is over), the dispatcher looks again after this long rather than at once.
const unclaimedRetryMs = 1000;

// How much of its lease an attempt may have run down when it leaves, at most.
const leaseSlackMs = 1000;

const noop = (): void => undefined;


// Due order: the instant, then the event's position, then the endpoint's place in the list.
function byDue(a: Claimed, b: Claimed): number {

    const at = a.attempt.due_at.localeCompare(b.attempt.due_at);
    return at !== 0 ? at : a.attempt.event.position - b.attempt.event.position || a.attempt.endpoint.ordinal - b.attempt.endpoint.ordinal;
}


function dueOf(item: Claimed): number {

    return Date.parse(item.attempt.due_at);
}


/** The body of a delivery: the event as the API lists it, its data as stored (JSON text, not parsed again). */
export function deliveryBody(event: ClaimedAttempt['event']): string {

    return `{"id":${JSON.stringify(event.id)},"type":${JSON.stringify(event.type)},"created_at":${JSON.stringify(event.created_at)},"data":${event.data}}`;
}


/**
 * Sends a data set's webhook deliveries: on each notice of new events, on each clock move and when the next attempt
 * falls due (its phase of the data set's loop, under the wall clock) and on each of the loop's polls, it claims what is due from every event log, in due order, sends
 * each attempt signed, journals it and records its outcome. Passes run one at a time; a failure is logged, never thrown
 * from a timer.
 */
export class Dispatcher {

    private logs: EventLogs = () => Promise.resolve([]);
    private queue: Promise<unknown> = Promise.resolve();
    // A pass queued that has not started: a notice meanwhile is served by it.
    private waiting: Promise<void> | null = null;
    private holding = 0;
    private made = 0;
    // The instant the last pass sent up to: what is due by then and still pending was claimed by someone else.
    private lastUntil = 0;
    private readonly phase: Phase;
    private closed = false;
    private readonly stopListening: () => void;

    constructor(private readonly parts: DispatcherParts) {

        this.phase = parts.loop.join('attempts', { due: () => this.notice(), poll: () => this.notice() });
        this.stopListening = parts.clock.onMove(() => this.notice());
    }

    /**
     * Follows the data set's event logs from now on: sends what is due already (left pending by a process that
     * stopped, or carried by a fork), then waits for the next. `pending` false says the logs can hold no delivery yet
     * (an instance made from an image, which no endpoint ever saw): nothing is looked for until something is written
     * or the clock moves.
     */
    async watch(logs: EventLogs, pending = true): Promise<number> {

        this.logs = logs;
        return pending ? await this.flush() : 0;
    }

    /** Events were written, or the clock moved: what is due is sent, unless a move of the clock holds it back. */
    notice(): void {

        if (this.holding === 0 && !this.closed) {
            safely('webhook deliveries', this.parts.log, () => this.pass())();
        }
    }

    /** Sends every attempt due at the clock's instant; answers how many attempts were made meanwhile. */
    async flush(): Promise<number> {

        const before = this.made;
        await this.pass();
        return this.made - before;
    }

    /**
     * Runs a move of the clock with the notices it causes held back, handing its walk the stops of the attempts: each
     * attempt due on the way is made as the walk reaches its instant, after the passes asked for before the move and
     * before those asked for during it. Answers what the move did, the attempts made by its answer, and (when it
     * answered at its deadline) how many deliveries had an attempt due by its target still to make: the walk makes
     * them after the answer, in due order.
     */
    async during(move: (stops: AttemptStops) => Promise<Moved>): Promise<MoveAttempts> {

        const before = this.made;
        const ready = this.queue;
        let release = noop;
        const walked = new Promise<void>((resolve) => {

            release = resolve;
        });
        this.holding += 1;
        this.queue = ready.then(() => walked);
        this.waiting = null;
        const end = (): void => {

            this.holding -= 1;
            release();
            // What was written while the walk was on, after its last look, is sent now.
            this.notice();
        };

        const moved = await move(this.stops(ready, end));
        const attempted = this.made - before;
        return { moved, attempted, remaining: moved.late ? await this.remaining(moved.target) : 0, walked };
    }

    /**
     * Makes the attempts a claim answers (given the lease to take), after the passes queued, in due order, as a pass
     * makes them; answers how many were made. A failure to claim rejects, and leaves the passes after it alone.
     */
    attemptNow(claim: (leaseUntil: Date) => Promise<Claimed[]>): Promise<number> {

        const run = this.queue.then(async () => {

            const before = this.made;
            const claimed = await claim(this.leaseUntil());
            await this.sendAll(claimed.sort(byDue));
            await this.arm();
            return this.made - before;
        });

        this.queue = run.catch(noop);
        return run;
    }

    /** Waits for no instant and looks no more: the data set is going. */
    close(): void {

        this.closed = true;
        this.stopListening();
        this.phase.rest();
    }

    // One pass at a time, after those queued; never rejects (its failure is logged).
    private pass(): Promise<void> {

        if (this.waiting) {
            return this.waiting;
        }

        const run = this.queue.then(async () => {

            this.waiting = null;
            // A move began after this pass was asked for: its walk makes what is due, in due order.
            if (this.holding > 0) {
                return;
            }

            try {
                await this.sendDue(this.parts.clock.now());
                await this.arm();
            }
            catch (err) {
                this.parts.log(['error', 'webhooks'], { task: 'webhook deliveries', ...failureOf(err) });
            }
        });

        this.waiting = run;
        this.queue = run;
        return run;
    }

    private async sendDue(until: Date): Promise<void> {

        this.lastUntil = until.getTime();
        const logs = await this.logs();
        for (;;) {
            if (this.closed) {
                return;
            }

            const leaseUntil = this.leaseUntil();
            const claims = await Promise.all(logs.map(async (log) => (await log.claimDue(until, claimBatch, leaseUntil)).map((attempt) => ({ log, attempt }))));
            const claimed = claims.flat().sort(byDue);
            if (claimed.length === 0) {
                return;
            }

            await this.sendAll(claimed);
        }
    }

    // How long a claim made now is leased: past the longest attempt (its timeout, the longest latency a fault rule
    // adds, and a margin).
    private leaseUntil(): Date {

        return new Date(Date.now() + this.parts.timeoutMs + this.parts.leaseMarginMs);
    }

    // What a batch's attempts leave under: a claim's lease, run down by no more than a second (half the margin, when
    // that is less), so that a batch that outlasts its claim's lease renews it about once a second at most.
    private leases(claimed: Claimed[]): Leases {

        const { timeoutMs, leaseMarginMs } = this.parts;
        return new Leases(claimed, { lengthMs: timeoutMs + leaseMarginMs, slackMs: Math.min(leaseSlackMs, leaseMarginMs / 2) }, this.parts.log);
    }

    // The stops of a move's walk: the earliest attempt of each log is claimed a little ahead of the walk (held, leased,
    // until the walk reaches its instant), then the attempts due at each instant are made. A failure (a claim the
    // database refused) is logged and ends this walk's attempts: they wait, pending, for the next pass.
    private stops(ready: Promise<unknown>, end: () => void): AttemptStops {

        const held: Claimed[] = [];
        let failed = false;
        const guarded = async <T>(work: () => Promise<T>, otherwise: T): Promise<T> => {

            if (failed || this.closed) {
                return otherwise;
            }

            try {
                await ready;
                return await work();
            }
            catch (err) {
                failed = true;
                this.parts.log(['error', 'webhooks'], { task: 'webhook deliveries', ...failureOf(err) });
                return otherwise;
            }
        };

        return {
            next: async (until) => {

                // No further than the earliest held: a retry made since may come before it, anything later can wait.
                return await guarded(async () => {

                    const first = held[0];
                    await this.claimInto(held, first && dueOf(first) < until.getTime() ? new Date(dueOf(first)) : until, 1);
                    const earliest = held[0];
                    return earliest && dueOf(earliest) <= until.getTime() ? new Date(dueOf(earliest)) : null;
                }, null);
            },
            reach: async (instant) => {

                await guarded(async () => {

                    for (;;) {
                        const count = held.findIndex((item) => dueOf(item) > instant.getTime());
                        const due = held.splice(0, count === -1 ? held.length : count);
                        if (due.length === 0) {
                            if (await this.claimInto(held, instant, claimBatch) === 0) {
                                return;
                            }

                            continue;
                        }

                        await this.sendAll(due);
                    }
                }, undefined);
            },
            end
        };
    }

    // Claims into held (kept in due order) up to `limit` attempts of each log due by `until`; answers how many. A log
    // with nothing due by then is not asked: a claim is a write.
    private async claimInto(held: Claimed[], until: Date, limit: number): Promise<number> {

        const logs = await this.logs();
        const leaseUntil = this.leaseUntil();
        const claims = await Promise.all(logs.map(async (log) => {

            const due = await log.nextDue();
            return due === null || due.getTime() > until.getTime() ? [] : (await log.claimDue(until, limit, leaseUntil)).map((attempt) => ({ log, attempt }));
        }));

        const claimed = claims.flat();
        held.push(...claimed);
        held.sort(byDue);
        return claimed.length;
    }

    // How many deliveries have an attempt due by the instant, in every log.
    private async remaining(until: Date): Promise<number> {

        const logs = await this.logs();
        const counts = await Promise.all(logs.map((log) => log.countDue(until)));
        return counts.reduce((sum, count) => sum + count, 0);
    }

    // Each endpoint's attempts in due order, one at a time; endpoints side by side, a few at once.
    private async sendAll(claimed: Claimed[]): Promise<void> {

        const byEndpoint = new Map<string, Claimed[]>();
        for (const item of claimed) {
            const chain = byEndpoint.get(item.attempt.endpoint.id) ?? [];
            chain.push(item);
            byEndpoint.set(item.attempt.endpoint.id, chain);
        }

        const chains = [...byEndpoint.values()];
        const leases = this.leases(claimed);
        const worker = async (): Promise<void> => {

            let chain = chains.shift();
            while (chain) {
                for (const item of chain) {
                    // One attempt's failure (its lease not renewed, its outcome not recorded) leaves it leased, and the
                    // others go on.
                    await leases.take(item)
                        .then((held) => (held ? this.attempt(item) : undefined))
                        .catch((err: unknown) => this.parts.log(['error', 'webhooks'], { task: 'webhook attempt', ...failureOf(err) }));
                }

                chain = chains.shift();
            }
        };

        await Promise.all(Array.from({ length: Math.min(concurrency, chains.length) }, worker));
    }

    private async attempt({ log, attempt: claimed }: Claimed): Promise<void> {

        const { event, endpoint, attempt } = claimed;
        const due = new Date(claimed.due_at);
        // On a frozen clock an attempt is made at its due instant, as a transition is applied at its own.
        const at = this.parts.clock.frozen === null ? this.parts.clock.now() : due;
        const id = webhookId(event.id, endpoint.id, deliveryBody(event));
        const decision = this.parts.faults()?.decideOutbound(event.type, endpoint.id) ?? null;
        const drop = decision?.rule.drop ?? null;
        if (decision && decision.latencyMs > 0) {
            await sleep(decision.latencyMs);
        }

        let sent: OutboundOutcome = { status: null, error: 'dropped', duration_ms: 0, sent: null, answer: null };
        const body = deliveryBody(event);
        if (drop !== 'before') {
            const signedAt = endpoint.signing_clock === 'instance' ? due : new Date();
            const headers = { 'content-type': 'application/json', ...signatureHeaders(signingSecrets(endpoint, at), id, signedAt, body) };
            sent = await this.parts.sender.send({ method: 'POST', url: endpoint.url, headers, body });
        }

        // A reply dropped after it was sent counts failed: the receiver has it, and gets it again.
        const delivered = drop === null && sent.status !== null && sent.status >= 200 && sent.status < 300;
        const step = endpoint.retry_schedule[attempt - 1];
        // A retry past the last instant a record holds could never fall due (and its text, +010000-…, would sort first):
        // the delivery is given up instead.
        const nextAt = step === undefined ? Infinity : due.getTime() + step;
        const next = delivered || nextAt > latestInstant ? null : new Date(nextAt).toISOString();
        this.made += 1;
        this.parts.deliveries.record({
            id: `${id}.${attempt}`,
            event_id: event.id,
            type: event.type,
            webhook_id: id,
            endpoint_id: endpoint.id,
            url: endpoint.url,
            attempt,
            at: at.toISOString(),
            status: sent.status,
            duration_ms: sent.duration_ms,
            error: drop === 'after' ? 'dropped' : sent.error,
            fault: decision?.rule.id ?? null,
            next_attempt_at: next
        }, { sent: sent.sent && { headers: sent.sent, body }, answer: sent.answer, secrets: [endpoint.secret, endpoint.previous_secret ?? ''] });

        const givenUp = delivered || next !== null ? null : { created_at: at.toISOString(), data: { webhook_id: id, endpoint_id: endpoint.id, event_id: event.id, event_type: event.type, attempts: attempt } };
        const outcome: AttemptOutcome = { position: event.position, endpoint_id: endpoint.id, attempt, delivered, next_due_at: next, given_up: givenUp };
        const inARow = await log.record(outcome);
        if (inARow !== null && (givenUp !== null || (delivered && inARow > 0))) {
            await this.countGivenUp(endpoint.id, givenUp === null ? 0 : inARow + 1, at);
        }
    }

    // The deliveries an endpoint gave up in a row, the same in each event log: WEBHOOK_DISABLE_AFTER of them disable it.
    private async countGivenUp(endpointId: string, count: number, at: Date): Promise<void> {

        const { disableAfter } = this.parts;
        const disableAt = disableAfter > 0 && count >= disableAfter ? at.toISOString() : null;
        for (const log of await this.logs()) {
            await log.setGivenUpInARow(endpointId, count, disableAt);
        }
    }

    // Under the wall clock: the loop's phase waits for the next attempt's instant. Under a frozen clock: for none, a move
    // sends.
    private async arm(): Promise<void> {

        this.phase.rest();
        if (this.closed || this.parts.clock.frozen !== null) {
            return;
        }

        const logs = await this.logs();
        const dues = await Promise.all(logs.map((log) => log.nextDue()));
        const next = dues.reduce<number | null>((earliest, due) => (due !== null && (earliest === null || due.getTime() < earliest) ? due.getTime() : earliest), null);
        if (next === null || this.closed) {
            return;
        }

        const at = next <= this.lastUntil ? this.parts.clock.now().getTime() + unclaimedRetryMs : next;
        this.phase.wake(new Date(at));
    }
}
