import { latestInstant, type Clock } from '../record-context';
import { DomainError } from '../errors';
import { failureOf, safely, type FailureLog } from '../safe-listener';
import type { Loop, Phase } from './loop';
import type { AppliedCounts, AppliedTransition, TimedStore } from '../transitions';


/** Finds the timed stores of a data set as it is now: a restore or a pay provisioned since may have made new ones. */
export type TimedStores = () => Promise<TimedStore[]>;

/** What a move of the clock applied: each transition in the order applied, and how many of each type. */
export interface CatchUp {
    transitions: AppliedTransition[];
    counts: AppliedCounts;
}

/**
 * The webhook attempts a move of the clock makes on its way (the dispatcher's): its walk asks for the next instant an
 * attempt is due and has the attempts due by it made, instant by instant, between the transitions.
 */
export interface AttemptStops {
    /** The earliest instant, at or before `until`, at which an attempt can be made; null when none can. */
    next(until: Date): Promise<Date | null>;
    /** Makes every attempt due at or before `instant`. */
    reach(instant: Date): Promise<void>;
    /** Told once, when the walk is over (or the move was refused before it began): no stop is asked for after. */
    end(): void;
}

/** What a move of the clock did by the time it answered. */
export interface Moved extends CatchUp {
    // The instant the clock was moved to.
    target: Date;
    // Answered at its deadline, the walk still making the attempts due by the target.
    late: boolean;
}

const noop = (): void => undefined;

// How many transitions one call of a store applies: the bound of one pass, never of the whole catch-up.
const batchSize = 500;

// After a catch-up that failed, or left a due transition it could not claim, the wall clock's task waits this long
// before it tries again, doubling up to the longest: a transition that keeps failing is not retried in a busy loop.
const firstRetryMs = 1000;
const longestRetryMs = 60_000;



// Whether the work settled within ms of the wall clock (false when the deadline came first); its rejection passes on.
async function within(work: Promise<unknown>, ms: number): Promise<boolean> {

    if (!Number.isFinite(ms)) {
        await work;
        return true;
    }

    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<boolean>((resolve) => {

        timer = setTimeout(() => resolve(false), ms);
    });
    try {
        return await Promise.race([work.then(() => true), deadline]);
    }
    finally {
        clearTimeout(timer);
    }
}


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
 * clock its phase of the data set's loop waits for the next due instant and applies what is due when it comes, and the
 * loop's poll (for data sets other processes write to) has it look again every so often. Catch-ups run one at a time.
 */
export class Timeline {

    private stores: TimedStores = () => Promise.resolve([]);
    private queue: Promise<unknown> = Promise.resolve();
    private readonly phase: Phase;
    // Catch-ups queued or running: the poll adds none while one waits.
    private queued = 0;
    // How long the task waits before trying a due transition again after a failed or stalled catch-up; 0 after one
    // that went through.
    private retryMs = 0;
    private closed = false;
    // The moves under way, each told every transition applied while it runs, whoever applies it.
    private readonly moves = new Set<CatchUp>();
    // The walk of the last move: the next one starts once it is over.
    private walks: Promise<unknown> = Promise.resolve();
    private readonly stopListening: () => void;

    constructor(private readonly clock: Clock, loop: Loop, private readonly log: FailureLog) {

        this.phase = loop.join('transitions', { due: () => this.catchUp(), poll: () => this.tick() });
        // A frozen clock arms nothing; back on the wall clock, the next due instant is looked for again.
        this.stopListening = clock.onMove(() => this.rearm());
    }

    /** Follows the data set's timed stores from now on: applies what is already due, then waits for the next. */
    async watch(stores: TimedStores): Promise<CatchUp> {

        this.stores = stores;
        return await this.catchUp();
    }

    /** Applies every transition due by the clock's instant (at this call), in time order; then arms for the next. */
    async catchUp(): Promise<CatchUp> {

        return (await this.run(this.clock.now())).caught;
    }

    /** A transition now falls due at this instant (a write committed it): under the wall clock, the task waits for it if it comes first. */
    expect(due: Date): void {

        if (this.closed || this.clock.frozen !== null) {
            return;
        }

        const waiting = this.phase.waiting;
        if (waiting === null || due.getTime() < waiting) {
            this.phase.wake(due);
        }
    }

    /**
     * Moves the clock (forward by ms, or to an instant) and walks from its instant to the new one through every instant
     * at which a transition or an attempt falls due, earliest first: the transitions due at an instant are applied
     * (each stamped with its own due instant), then the attempts due at it are made, so that a retry due before the
     * next transition is made before it. Past `deadlineMs` (of the wall clock) the move applies the transitions left at
     * once and answers `late`, its walk going on with the attempts. It counts every transition applied while it runs,
     * whoever applies it. Moving back applies nothing and undoes nothing: what was applied stays applied, and what is
     * pending applies when the clock reaches its instant again.
     */
    async move(to: { now: Date } | { advance: number }, stops?: AttemptStops, deadlineMs = Infinity): Promise<Moved> {

        const target = 'now' in to ? to.now : new Date(this.clock.now().getTime() + to.advance);
        try {
            clockInRange(target, 'now' in to ? 'now' : 'advance');
        }
        catch (err) {
            stops?.end();
            throw err;
        }

        const moved: CatchUp = { transitions: [], counts: {} };
        this.moves.add(moved);
        // The walk applies what falls due: the wall clock's task, due by the new instant, does not run as the clock freezes.
        this.phase.rest();
        this.clock.freeze(target);
        let answered = false;
        const walk = this.walks.then(() => this.walk(target, stops)).finally(() => stops?.end());
        this.walks = walk.catch((err: unknown) => {

            // A walk that goes on past its move's answer logs its own failure; before it, the move answers it.
            if (answered) {
                this.log(['error', 'transitions'], { task: 'clock move', ...failureOf(err) });
            }
        });

        try {
            const late = !await within(walk, deadlineMs);
            if (late) {
                await this.run(target);
            }

            return { transitions: [...moved.transitions], counts: { ...moved.counts }, target, late };
        }
        catch (err) {
            // The clock has moved, and what was applied before the failure stays applied: the rest waits, pending, for
            // the next move. The failure itself is the server's to log, not the caller's to read.
            this.log(['error', 'transitions'], { task: 'clock move', ...failureOf(err) });
            throw new DomainError('unavailable', 'transitions_failed', `The clock stands at ${target.toISOString()}, but a transition due on the way could not be applied: what was applied stays, and the rest is applied by the next move`);
        }
        finally {
            answered = true;
            this.moves.delete(moved);
        }
    }

    /** Waits for no instant and looks no more: the data set is going. */
    close(): void {

        this.closed = true;
        this.stopListening();
        this.phase.rest();
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
            for (const caught of [result, ...this.moves]) {
                for (const transition of applied) {
                    caught.transitions.push(transition);
                    caught.counts[transition.type] = (caught.counts[transition.type] ?? 0) + 1;
                }
            }
        }
    }

    // One catch-up up to an instant, after those queued (one at a time), then the arming for the next.
    private run(until: Date): Promise<{ caught: CatchUp; stalled: boolean }> {

        this.queued += 1;
        // The next catch-up waits for this one and its arming, whatever became of either; a failed arming is logged.
        const run = this.queue.then(async () => {

            try {
                const applied = await this.apply(until);
                this.retryMs = applied.stalled ? this.nextRetry() : 0;
                return applied;
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

    // A move's walk up to its target: the attempts due before the next transition's instant, then that instant's
    // transitions, and so on. A transition that fails or stalls ends the transitions of this walk (the next move
    // applies them), not its attempts: those due by the target are made, then the failure is passed on.
    private async walk(target: Date, stops: AttemptStops | undefined): Promise<void> {

        let failure: { err: unknown } | null = null;
        let transitions = true;
        while (!this.closed) {
            const next: Date | null = transitions ? await this.nextDue() : null;
            const due: Date | null = next !== null && next.getTime() <= target.getTime() ? next : null;
            if (stops) {
                const attempt = await stops.next(due === null ? target : new Date(due.getTime() - 1));
                if (attempt !== null) {
                    await stops.reach(attempt);
                    continue;
                }
            }

            if (due === null) {
                break;
            }

            try {
                transitions = !(await this.run(due)).stalled;
            }
            catch (err) {
                failure = { err };
                transitions = false;
            }
        }

        if (failure) {
            throw failure.err;
        }
    }

    private async nextDue(): Promise<Date | null> {

        const stores = await this.stores();
        const dues = await Promise.all(stores.map((store) => store.nextDue()));
        return dues.reduce<Date | null>((earliest, due) => (due !== null && (earliest === null || due < earliest) ? due : earliest), null);
    }

    // Under the wall clock: the loop's phase waits for the next due instant, unless it waits for an earlier instant
    // already (told by expect while this looked). Under a frozen clock: for none, a move applies.
    private async arm(): Promise<void> {

        if (this.closed || this.clock.frozen !== null) {
            this.phase.rest();
            return;
        }

        const next = await this.nextDue();
        // After a failed or stalled catch-up, not before the retry's wait is over.
        const due = next && this.retryMs > 0 ? new Date(Math.max(next.getTime(), this.clock.now().getTime() + this.retryMs)) : next;
        const waiting = this.phase.waiting;
        if (due !== null && !this.closed && (waiting === null || due.getTime() < waiting)) {
            this.phase.wake(due);
        }
    }

    private rearm(): void {

        if (this.clock.frozen !== null) {
            this.phase.rest();
            return;
        }

        safely('transitions arm', this.log, () => this.arm())();
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
