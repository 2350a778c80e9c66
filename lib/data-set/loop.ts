import { failureOf, safely, type FailureLog } from '../safe-listener';
import type { Scheduler } from './scheduler';


/** The phases of a data set's background loop, in the order they run when due at one instant: transitions, then attempts. */
export type PhaseName = 'transitions' | 'attempts';

const order: readonly PhaseName[] = ['transitions', 'attempts'];

/** What a phase does when its instant comes (handed that instant) and on each poll. */
export interface PhaseWork {
    due: (instant: Date) => unknown;
    poll: () => unknown;
}

/** A phase's hold on the loop: the instant it waits for, which it moves or drops. */
export interface Phase {
    /** Waits for this instant, in place of the one waited for before. */
    wake(due: Date): void;
    /** Waits for no instant. */
    rest(): void;
    /** The instant waited for (ms), null for none. */
    readonly waiting: number | null;
}

interface Slot {
    name: PhaseName;
    work: PhaseWork;
    due: number | null;
}


/**
 * The one background loop of a data set. Each phase (the timeline's transitions, the dispatcher's attempts) says the
 * instant it waits for; one scheduler task waits for the earliest of them, and when it comes runs every phase due by
 * it, in phase order, each after the one before has settled. With a poll (a data set other processes write to) every
 * phase also looks again every so often, in the same order. A phase's failure is logged and the next phase runs.
 */
export class Loop {

    private slots: Slot[] = [];
    private cancelTask: (() => void) | null = null;
    private armedFor: number | null = null;
    private poller: NodeJS.Timeout | null = null;
    private closed = false;

    constructor(private readonly scheduler: Scheduler, private readonly log: FailureLog) { }

    /** Adds a phase's work to the loop (in place of the phase's work before), waiting for no instant yet. */
    join(name: PhaseName, work: PhaseWork): Phase {

        const slot: Slot = { name, work, due: null };
        this.slots = [...this.slots.filter((other) => other.name !== name), slot].sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
        return {
            wake: (due) => {

                slot.due = due.getTime();
                this.arm();
            },
            rest: () => {

                slot.due = null;
                this.arm();
            },
            get waiting() {

                return slot.due;
            }
        };
    }

    /** Has every phase look again every ms of the wall clock (none for 0), until the loop closes. */
    poll(ms: number): void {

        if (ms > 0 && !this.closed) {
            clearInterval(this.poller ?? undefined);
            this.poller = setInterval(safely('loop poll', this.log, () => this.polls()), ms).unref();
        }
    }

    /** Drops the task and the poll, and takes no instant after: the data set is going. */
    close(): void {

        this.closed = true;
        clearInterval(this.poller ?? undefined);
        for (const slot of this.slots) {
            slot.due = null;
        }

        this.arm();
    }

    // One task, at the earliest instant a phase waits for; kept when that instant has not changed.
    private arm(): void {

        const earliest = this.slots.reduce<number | null>((soonest, slot) => (slot.due !== null && (soonest === null || slot.due < soonest) ? slot.due : soonest), null);
        if (earliest === this.armedFor) {
            return;
        }

        this.cancelTask?.();
        this.cancelTask = null;
        this.armedFor = null;
        if (earliest === null || this.closed) {
            return;
        }

        this.armedFor = earliest;
        this.cancelTask = this.scheduler.at(new Date(earliest), 'data set loop', (instant) => this.run(instant));
    }

    // The phases due by the task's instant, in order: each stops waiting before it runs (its run says what it waits
    // for next), and the task is armed again for the phases still waiting.
    private async run(instant: Date): Promise<void> {

        this.cancelTask = null;
        this.armedFor = null;
        const due = this.slots.filter((slot) => slot.due !== null && slot.due <= instant.getTime());
        for (const slot of due) {
            slot.due = null;
        }

        this.arm();
        for (const slot of due) {
            await this.settle(`scheduled task ${slot.name}`, () => slot.work.due(instant));
        }
    }

    private async polls(): Promise<void> {

        for (const slot of [...this.slots]) {
            await this.settle(`${slot.name} poll`, slot.work.poll);
        }
    }

    private async settle(task: string, work: () => unknown): Promise<void> {

        try {
            await work();
        }
        catch (err) {
            this.log(['error', 'listener'], { task, ...failureOf(err) });
        }
    }
}
