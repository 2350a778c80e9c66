import type { Clock, Commit, IdSource, RecordContext } from '../record-context';
import { DeliveryJournal } from './deliveries';
import { Dispatcher, type EventLogs } from './dispatcher';
import type { FaultSet } from './fault-rules';
import { Journal, type JournalBudget } from './journal';
import { Loop } from './loop';
import { safely, type FailureLog } from '../safe-listener';
import { Scheduler } from './scheduler';
import { HttpSender, type OutboundSender, type OutboundSettings } from './sender';
import { Timeline, type CatchUp, type TimedStores } from './timeline';


export { Loop, type Phase, type PhaseName, type PhaseWork } from './loop';
export { Scheduler, type Task } from './scheduler';
export { HttpSender, OutboundAgents, type AgentSettings, type OutboundCall, type OutboundOutcome, type OutboundSender, type OutboundSettings } from './sender';
export { Timeline, type AttemptStops, type CatchUp, type Moved, type TimedStores } from './timeline';
export { timedStoresOf } from './timed-stores';

/** What every data set of a server shares: the journal's length and memory, and the log a failed task is told to. */
export interface SharedServices {
    // Entries per data set; 0 keeps none.
    journalSize: number;
    journalBudget: JournalBudget;
    log: FailureLog;
    // The hosts a webhook may call, how long an attempt waits, and the process's agents its sockets come from.
    outbound: OutboundSettings;
    // Values the delivery journal hides wherever they show: the token secret and the pay keys.
    secrets: readonly string[];
    // WEBHOOK_DISABLE_AFTER: the deliveries an endpoint gives up in a row that disable it (0: never).
    disableAfter: number;
    // WEBHOOK_LEASE_MARGIN_MS: how long a claim's lease outlasts the timeout of its attempt.
    leaseMarginMs: number;
    // CLOCK_MOVE_DEADLINE_MS: how long a move of the clock may take before it answers, its walk going on.
    moveDeadlineMs: number;
}

/** What a move of the clock did by its answer: the transitions applied, the attempts made, and those due by its target still to make. */
export interface ClockMoved extends CatchUp {
    attempted: number;
    remaining: number;
    // Resolves once the move's walk is over: past a deadline, after the answer.
    walked: Promise<void>;
}


/** How a data set's runtime follows its databases: how often it looks for what other processes wrote, and whether its logs can hold a delivery yet. */
export interface Following {
    // Every pollMs of the wall clock, the loop's phases look again; 0: never (no other process writes).
    pollMs?: number;
    // False for an instance made from an image: no endpoint ever saw its events, so no delivery is looked for yet.
    pending?: boolean;
}


/**
 * What a data set carries beside its databases: its clock and id source (which its stores read), its request journal,
 * its fault rules, the scheduler of its timed work, its one background loop (the timeline of its world's transitions,
 * then the dispatcher of its webhook attempts) and its door out of the process. The default data set and each instance
 * have one; it goes with its data set.
 */
export class DataSetRuntime implements RecordContext {

    readonly clock: Clock;
    readonly ids: IdSource;
    readonly journal: Journal;
    readonly scheduler: Scheduler;
    readonly loop: Loop;
    readonly timeline: Timeline;
    readonly sender: OutboundSender;
    readonly deliveries: DeliveryJournal;
    readonly dispatcher: Dispatcher;
    // Set by PUT .../faults, none until then.
    faults: FaultSet | null = null;
    private readonly eventListeners = new Set<() => void>();
    private readonly closeListeners = new Set<() => void>();

    constructor(context: RecordContext, private readonly shared: SharedServices) {

        this.clock = context.clock;
        this.ids = context.ids;
        this.journal = new Journal(shared.journalSize, shared.journalBudget);
        this.scheduler = new Scheduler(this.clock, shared.log);
        this.loop = new Loop(this.scheduler, shared.log);
        this.sender = new HttpSender(shared.outbound);
        this.timeline = new Timeline(this.clock, this.loop, shared.log);
        this.deliveries = new DeliveryJournal(shared.journalSize, shared.journalBudget, shared.secrets);
        this.dispatcher = new Dispatcher({ clock: this.clock, loop: this.loop, sender: this.sender, deliveries: this.deliveries, faults: () => this.faults, log: shared.log, timeoutMs: shared.outbound.timeoutMs, leaseMarginMs: shared.leaseMarginMs, disableAfter: shared.disableAfter });
        // The stores of the data set tell these services what each write committed.
        context.committed = (commit) => this.committed(commit);
    }

    /**
     * Follows the data set's databases from now on: applies the transitions due already, then sends the attempts due
     * already, then the loop waits for what falls due next (and polls, with pollMs). Answers what the catch-up applied.
     */
    async watch(stores: TimedStores, logs: EventLogs, following: Following = {}): Promise<CatchUp> {

        const caught = await this.timeline.watch(stores);
        await this.dispatcher.watch(logs, following.pending);
        this.loop.poll(following.pollMs ?? 0);
        return caught;
    }

    /**
     * Moves the clock in one walk through time: each transition due on the way applied and each webhook attempt due
     * made, earliest first (an instant's transitions before its attempts). Resolves once the walk reaches the new
     * instant, or at the deadline with the transitions left applied and the attempts left counted (`remaining`), which
     * the walk then makes in due order.
     */
    async moveClock(to: { now: Date } | { advance: number }): Promise<ClockMoved> {

        const { moved: { transitions, counts }, attempted, remaining, walked } = await this.dispatcher.during((stops) => this.timeline.move(to, stops, this.shared.moveDeadlineMs));
        // Among the requests of the journal, for a scenario saved from what the data set saw.
        this.journal.noteMove(to, counts);
        return { transitions, counts, attempted, remaining, walked };
    }

    /** Hears when events were written: after the transaction that wrote them has committed. */
    onEvents(listener: () => void): () => void {

        this.eventListeners.add(listener);
        return () => this.eventListeners.delete(listener);
    }

    /**
     * Told by the data set's stores what a write transaction committed, once it has: the timeline waits for what it
     * made pending, the dispatcher sends what it made due (only a write that added deliveries calls for a pass:
     * retries due later come by the clock or the scheduler), and the listeners read the events it wrote. A failure of
     * any of them is logged, never thrown: the write has committed, and its answer must say so.
     */
    committed(commit: Commit): void {

        const { due } = commit;
        if (due !== null) {
            safely('timeline', this.shared.log, () => this.timeline.expect(due))();
        }

        if (commit.deliveries) {
            this.dispatcher.notice();
        }

        if (commit.events === 0) {
            return;
        }

        for (const listener of this.eventListeners) {
            safely('events listener', this.shared.log, listener)();
        }
    }

    /** Hears when the data set goes (an instance deleted or expired, the server stopped); told once, its failure logged. */
    onClose(listener: () => void): () => void {

        this.closeListeners.add(listener);
        return () => this.closeListeners.delete(listener);
    }

    /** Stops the loop and the scheduler, closes the sender's connections, gives the journals' memory back and drops the fault rules, as the data set goes. */
    close(): void {

        for (const listener of this.closeListeners) {
            safely('close listener', this.shared.log, listener)();
        }

        this.closeListeners.clear();
        this.eventListeners.clear();
        this.timeline.close();
        this.dispatcher.close();
        this.loop.close();
        this.scheduler.close();
        this.sender.close();
        this.shared.journalBudget.leave(this.journal);
        this.shared.journalBudget.leave(this.deliveries);
        this.faults = null;
    }
}


/** The services of data sets that share these settings, each over its own clock and ids. */
export function servicesFactory(shared: SharedServices): (context: RecordContext) => DataSetRuntime {

    return (context) => new DataSetRuntime(context, shared);
}
