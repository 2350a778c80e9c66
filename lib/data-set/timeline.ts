import { latestInstant, type Clock } from '../clock';
import { DomainError } from '../errors';
import { failureOf, safely, type FailureLog } from '../safe-listener';
import type { Scheduler } from './scheduler';
import type { AppliedCounts, AppliedTransition, TimedStore } from './transitions';


/** Finds the timed stores of a data set as it is now: a restore or a pay provisioned since may have made new ones. */
export type TimedStores = () => Promise<TimedStore[]>;

/** What a move of the clock applied: each transition in the order applied, and how many of each type. */
export interface CatchUp {
    transitions: AppliedTransition[];
    counts: AppliedCounts;
}

const noop = (): void => undefined;

// How many transitions one call of a store applies: the bound of one pass, never of the whole catch-up.
const batchSize = 500;

// After a catch-up that failed, or left a due transition it could not claim, the wall clock's task waits this long
// before it tries again, doubling up to the longest: a transition that keeps failing is not retried in a busy loop.
const firstRetryMs = 1000;
const longestRetryMs = 60_000;



/** Refuses an instant a record's created_at cannot hold, naming the field that asked for it. */
export function clockInRange(instant: Date, field: string): void {

    const time = instant.getTime();
    if (!(time >= 0 && time <= latestInstant)) {
        throw new DomainError('unprocessable', 'clock_out_of_range', `${field} would take the clock outside 1970-01-01 to 9999-12-31, which records cannot hold`, field);
    }
}


/**
 * The transitions of a data set's world, on its clock. Under a frozen clock nothing moves until the clock is moved
 * (`move`), which applies every transition due up to the new instant, in time order, before it resolves. Under the wall
 * clock one scheduler task waits for the next due instant and applies what is due when it comes; a poll (for data sets
 * other processes write to) looks again every so often. Catch-ups run one at a time.
 */
export class Timeline {

    private stores: TimedStores = () => Promise.resolve([]);
    private queue: Promise<unknown> = Promise.resolve();
    private cancelTask: (() => void) | null = null;
    private armedFor: number | null = null;
    private poller: NodeJS.Timeout | null = null;
    // Catch-ups queued or running: the poll adds none while one waits.
    private queued = 0;
    // How long the task waits before trying a due transition again after a failed or stalled catch-up; 0 after one
    // that went through.
    private retryMs = 0;
    private closed = false;
    private readonly stopListening: () => void;

    // `applied` is told after each batch of transitions has committed (the events they wrote are there to read).
    constructor(private readonly clock: Clock, private readonly scheduler: Scheduler, private readonly log: FailureLog, private readonly applied: () => void = noop) {

        // A frozen clock arms nothing; back on the wall clock, the next due instant is looked for again.
        this.stopListening = clock.onMove(() => this.rearm());
    }

    /**
     * Follows the data set's timed stores from now on: applies what is already due, then waits for the next. With
     * pollMs, also looks for transitions other processes wrote, every pollMs under the wall clock.
     */
    async watch(stores: TimedStores, pollMs = 0): Promise<CatchUp> {

        this.stores = stores;
        if (pollMs > 0) {
            this.poller = setInterval(safely('transitions poll', this.log, () => this.tick()), pollMs).unref();
        }

        return await this.catchUp();
    }

    /** Applies every transition due by the clock's instant (at this call), in time order; then arms for the next. */
    catchUp(): Promise<CatchUp> {

        const until = this.clock.now();
        this.queued += 1;
        // The next catch-up waits for this one and its arming, whatever became of either; a failed arming is logged.
        const run = this.queue.then(async () => {

            try {
                const { caught, stalled } = await this.apply(until);
                this.retryMs = stalled ? this.nextRetry() : 0;
                return caught;
            }
            catch (err) {
                this.retryMs = this.nextRetry();
                throw err;
            }
            finally {
                this.queued -= 1;
                await this.arm().catch((err: unknown) => this.log(['error', 'listener'], { task: 'transitions arm', ...failureOf(err) }));
            }
        });

        this.queue = run.catch(noop);
        return run;
    }

    /** A transition now falls due at this instant: under the wall clock, the task waits for it if it comes first. */
    expect(due: Date): void {

        if (this.closed || this.clock.frozen !== null) {
            return;
        }

        if (this.armedFor === null || due.getTime() < this.armedFor) {
            this.schedule(due);
        }
    }

    /**
     * Moves the clock (forward by ms, or to an instant) and applies what falls due on the way, in time order, each
     * transition stamped with its own due instant. Moving back applies nothing and undoes nothing: what was applied
     * stays applied, and what is pending applies when the clock reaches its instant again.
     */
    async move(to: { now: Date } | { advance: number }): Promise<CatchUp> {

        const target = 'now' in to ? to.now : new Date(this.clock.now().getTime() + to.advance);
        clockInRange(target, 'now' in to ? 'now' : 'advance');
        this.clock.freeze(target);
        try {
            return await this.catchUp();
        }
        catch (err) {
            // The clock has moved, and what was applied before the failure stays applied: the rest waits, pending, for
            // the next move. The failure itself is the server's to log, not the caller's to read.
            this.log(['error', 'transitions'], { task: 'clock move', ...failureOf(err) });
            throw new DomainError('unavailable', 'transitions_failed', `The clock stands at ${target.toISOString()}, but a transition due on the way could not be applied: what was applied stays, and the rest is applied by the next move`);
        }
    }

    /** Stops the task and the poll: the data set is going. */
    close(): void {

        this.closed = true;
        this.stopListening();
        clearInterval(this.poller ?? undefined);
        this.cancel();
    }

    // Applies what is due by until, one store's run at a time, always the store whose next transition is earliest (the
    // first in namespace order on a tie), up to the next of any other store: transitions of every namespace are applied
    // in one time order.
    private async apply(until: Date): Promise<{ caught: CatchUp; stalled: boolean }> {

        const result: CatchUp = { transitions: [], counts: {} };
        const stores = await this.stores();
        let stalled = false;
        for (;;) {
            // A data set closed meanwhile: its databases are going, what is left waits in them.
            if (this.closed) {
                return { caught: result, stalled: false };
            }

            const dues = await Promise.all(stores.map(async (store, order) => ({ store, order, due: await store.nextDue() })));
            // Stable: stores due at one instant stay in namespace order.
            const waiting = dues.filter((entry): entry is { store: TimedStore; order: number; due: Date } => entry.due !== null && entry.due.getTime() <= until.getTime())
                .sort((a, b) => a.due.getTime() - b.due.getTime());
            const [first, ...others] = waiting;
            if (!first) {
                return { caught: result, stalled: false };
            }

            // Up to another store's next instant: that instant too when this store comes first in namespace order.
            const bound = others.reduce((earliest, other) => Math.min(earliest, other.order < first.order ? other.due.getTime() - 1 : other.due.getTime()), until.getTime());
            const applied = await first.store.applyDue(new Date(bound), batchSize);
            this.applied();
            // A store that answers a due transition it then applies none of (another process took them meanwhile) is
            // asked once more; twice in a row, it is left for the next catch-up rather than asked forever.
            if (applied.length === 0) {
                if (stalled) {
                    return { caught: result, stalled: true };
                }

                stalled = true;
                continue;
            }

            stalled = false;
            for (const transition of applied) {
                result.transitions.push(transition);
                result.counts[transition.type] = (result.counts[transition.type] ?? 0) + 1;
            }
        }
    }

    private async nextDue(): Promise<Date | null> {

        const stores = await this.stores();
        const dues = await Promise.all(stores.map((store) => store.nextDue()));
        return dues.reduce<Date | null>((earliest, due) => (due !== null && (earliest === null || due < earliest) ? due : earliest), null);
    }

    // Under the wall clock: one task at the next due instant, unless one waits for an earlier instant already (told by
    // expect while this looked). Under a frozen clock: none, a move applies.
    private async arm(): Promise<void> {

        if (this.closed || this.clock.frozen !== null) {
            this.cancel();
            return;
        }

        const next = await this.nextDue();
        // After a failed or stalled catch-up, not before the retry's wait is over.
        const due = next && this.retryMs > 0 ? new Date(Math.max(next.getTime(), this.clock.now().getTime() + this.retryMs)) : next;
        if (due !== null && !this.closed && (this.armedFor === null || due.getTime() < this.armedFor)) {
            this.schedule(due);
        }
    }

    private rearm(): void {

        if (this.clock.frozen !== null) {
            this.cancel();
            return;
        }

        safely('transitions arm', this.log, () => this.arm())();
    }

    private schedule(due: Date): void {

        this.cancel();
        this.armedFor = due.getTime();
        this.cancelTask = this.scheduler.at(due, 'transitions', () => {

            // Run: the next task is armed by the catch-up, for whatever is due next.
            this.cancelTask = null;
            this.armedFor = null;
            return this.catchUp();
        });
    }

    private cancel(): void {

        this.cancelTask?.();
        this.cancelTask = null;
        this.armedFor = null;
    }

    // The poll: under the wall clock, what other processes made due is applied here too; one waiting is enough.
    private async tick(): Promise<void> {

        if (this.clock.frozen === null && this.queued === 0) {
            await this.catchUp();
        }
    }

    private nextRetry(): number {

        return Math.min(Math.max(this.retryMs * 2, firstRetryMs), longestRetryMs);
    }
}
