import type { Clock } from '../record-context';
import { safely, type FailureLog } from '../safe-listener';


/** Work due at an instant of a data set's clock; it is handed that instant, whatever the clock reads as it runs. */
export type Task = (due: Date) => unknown;

interface Scheduled {
    due: number;
    name: string;
    run: Task;
    cancelled: boolean;
}

// The longest delay setTimeout keeps (about 24.8 days): a later task is reached by waking early and arming again.
const maxTimerDelayMs = 2 ** 31 - 1;


/**
 * The one place timed work of a data set lives. Tasks run in instant order once the data set's clock reaches their
 * instant: a frozen clock on each move (advance, freeze), the wall clock by one unref'd timer armed for the next task.
 * Each task's failure, thrown or rejected, is logged under its name and the next task runs.
 */
export class Scheduler {

    private readonly tasks: Scheduled[] = [];
    private readonly stopListening: () => void;
    private timer: NodeJS.Timeout | null = null;
    private closed = false;

    constructor(private readonly clock: Clock, private readonly log: FailureLog) {

        this.stopListening = clock.onMove(() => this.runDue());
    }

    /** How many tasks wait for their instant. */
    get size(): number {

        return this.tasks.length;
    }

    /** Runs the task once the clock reaches due (at once, in order, when it has already); returns what cancels it. */
    at(due: Date, name: string, run: Task): () => void {

        if (this.closed) {
            throw new Error(`The scheduler of a closed data set takes no task (${name})`);
        }

        const task = { due: due.getTime(), name, run, cancelled: false };
        // After every task due at or before the same instant: tasks of one instant keep their order.
        const later = this.tasks.findIndex((other) => other.due > task.due);
        this.tasks.splice(later === -1 ? this.tasks.length : later, 0, task);
        this.arm();
        return () => this.cancel(task);
    }

    /** Drops every task and the timer, and stops following the clock. */
    close(): void {

        this.closed = true;
        this.stopListening();
        this.tasks.length = 0;
        this.arm();
    }

    private cancel(task: Scheduled): void {

        task.cancelled = true;
        const at = this.tasks.indexOf(task);
        if (at !== -1) {
            this.tasks.splice(at, 1);
            this.arm();
        }
    }

    // Runs the tasks due by the clock's instant, earliest first. A task scheduled by one of them waits for the timer,
    // so that one rescheduling itself cannot hold the process in this pass; one cancelled by an earlier one is skipped.
    private runDue(): void {

        const now = this.clock.now().getTime();
        const later = this.tasks.findIndex((task) => task.due > now);
        const count = later === -1 ? this.tasks.length : later;
        for (const task of this.tasks.splice(0, count)) {
            if (!task.cancelled) {
                safely(`scheduled task ${task.name}`, this.log, task.run)(new Date(task.due));
            }
        }

        this.arm();
    }

    // One timer for the next task: for the wall clock at its instant, for a frozen clock only when it is due already.
    private arm(): void {

        clearTimeout(this.timer ?? undefined);
        this.timer = null;
        const next = this.tasks[0];
        if (!next) {
            return;
        }

        const delay = next.due - this.clock.now().getTime();
        if (this.clock.frozen !== null && delay > 0) {
            return;
        }

        this.timer = setTimeout(safely('scheduler', this.log, () => this.runDue()), Math.min(Math.max(delay, 0), maxTimerDelayMs)).unref();
    }
}
