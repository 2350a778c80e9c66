import Crypto from 'node:crypto';

import { DomainError } from './errors';


/** How a clock moved: frozen at an instant, moved forward, or let follow the wall clock again; from and to are its instants either side. */
export interface ClockMove {
    kind: 'freeze' | 'advance' | 'wall';
    from: Date;
    to: Date;
}

export type ClockListener = (move: ClockMove) => void;


/** Where a data set's time comes from: the wall clock, or an instant that stands still until moved. Each move is announced. */
export class Clock {

    private frozenAt: number | null;
    private readonly listeners = new Set<ClockListener>();

    constructor(frozenAt: Date | null = null) {

        this.frozenAt = frozenAt ? frozenAt.getTime() : null;
    }

    /** The current instant of this clock. */
    now(): Date {

        return new Date(this.frozenAt ?? Date.now());
    }

    /** The frozen instant as ISO 8601, null while the clock follows the wall clock. */
    get frozen(): string | null {

        return this.frozenAt === null ? null : new Date(this.frozenAt).toISOString();
    }

    /** Freezes the clock at an instant, or with null lets it follow the wall clock again. */
    freeze(instant: Date | null): void {

        this.move(instant ? 'freeze' : 'wall', instant);
    }

    /** Moves the clock forward by ms from its current instant and freezes it there. */
    advance(ms: number): void {

        this.move('advance', new Date(this.now().getTime() + ms));
    }

    /** Calls the listener after every move of this clock, until the returned function is called. */
    onMove(listener: ClockListener): () => void {

        this.listeners.add(listener);
        return () => this.listeners.delete(listener);
    }

    private move(kind: ClockMove['kind'], instant: Date | null): void {

        const from = this.now();
        this.frozenAt = instant ? instant.getTime() : null;
        const move = { kind, from, to: this.now() };
        for (const listener of this.listeners) {
            listener(move);
        }
    }
}


/** The latest instant a record's times can hold (four-digit years): no clock, due instant or retention goes past it. */
export const latestInstant = Date.parse('9999-12-31T23:59:59.999Z');


export type IdMode = 'random' | 'sequential';

// A sequential id spells its counter in the last 12 hex digits of a UUID: ffffffffffff is the last one there is.
export const maxIdCounter = 0xffffffffffff;


/**
 * The turn the event-writing transactions of a data set take when its databases are files other processes may open
 * too, and the positions drawn in it: held from before a write's first event until the write has committed, so that
 * a reader that has seen a position has seen every earlier one, whichever process and database wrote it.
 */
export interface PositionTurn {
    /** Runs a synchronous write transaction holding the turn; a write nested in one that holds it runs in that turn. */
    holding<Result>(work: () => Result): Result;
    /** The next position, past `past` and every position drawn before in any process; kept before the write commits. */
    draw(past: number): number;
}


/** Where new record ids come from: random UUIDs, or UUID-shaped ids derived from a counter so that runs repeat. */
export class IdSource {

    counter = 0;

    constructor(public readonly mode: IdMode = 'random') { }

    /** The next id. */
    next(): string {

        if (this.mode === 'random') {
            return Crypto.randomUUID();
        }

        // Past the last id the next would no longer be a UUID: refused, never made twice.
        if (this.counter >= maxIdCounter) {
            throw new DomainError('conflict', 'ids_exhausted', `The sequential ids of this data set are used up: its id counter is at ${maxIdCounter}, the last id a UUID's final 12 hex digits hold`);
        }

        this.counter += 1;
        return `00000000-0000-4000-8000-${this.counter.toString(16).padStart(12, '0')}`;
    }

    // Webhook endpoints made: with sequential ids each new one's id spells the count. A reset or restore keeps the
    // endpoints, so it keeps the count too; a fork, which has none, starts at 0.
    endpointCount = 0;

    /** The id of a new webhook endpoint: random, or with sequential ids one that spells the data set's count of them, whatever its URL. */
    endpointId(): string {

        if (this.mode === 'random') {
            return `we_${Crypto.randomBytes(16).toString('base64url')}`;
        }

        this.endpointCount += 1;
        return `we_${this.endpointCount.toString(16).padStart(12, '0')}`;
    }

    // The last event position handed out, drawn from a PostgreSQL sequence, or found in the data set's databases.
    lastEventPosition = 0;

    // Where the data set's databases are files other processes may open too: the turn its writes take, and the
    // positions they draw there. Null: positions are handed out in the process alone.
    positions: PositionTurn | null = null;

    /**
     * The position of a new event on an engine that hands them out in the process: past the last one and past
     * `floor`, the last its own database holds, and, with a turn, past every one another process drew.
     */
    eventPosition(floor: number): number {

        const past = Math.max(this.lastEventPosition, floor);
        this.lastEventPosition = this.positions ? this.positions.draw(past) : past + 1;
        return this.lastEventPosition;
    }

    /**
     * The id of the event at a position: random, or with sequential ids one that spells the position, apart from the
     * records' counter. A position drawn elsewhere (a PostgreSQL sequence) moves the last one, so that a namespace of
     * the same data set on SQLite writes after it rather than repeating it.
     */
    eventId(position: number): string {

        this.lastEventPosition = Math.max(this.lastEventPosition, position);
        return this.mode === 'random' ? Crypto.randomUUID() : `00000000-0000-4000-9000-${position.toString(16).padStart(12, '0')}`;
    }
}


/** What one write transaction committed: the events it wrote, whether they made deliveries, and when what it made pending falls due. */
export interface Commit {
    events: number;
    // Whether it added webhook deliveries (or may have: an engine that cannot tell says so of every event).
    deliveries: boolean;
    // The earliest instant at which a record it made pending (a pending payment, a booking) moves on; null for none.
    due: Date | null;
}


/** A commit that wrote nothing yet. */
export function newCommit(): Commit {

    return { events: 0, deliveries: false, due: null };
}


/** Adds an instant at which a record the commit made pending moves on: the earliest is kept. */
export function noteDue(commit: Commit, due: Date): void {

    if (commit.due === null || due.getTime() < commit.due.getTime()) {
        commit.due = due;
    }
}


/** Tells the context what a transaction committed, when it wrote an event or made a record pending; nothing otherwise. */
export function tellCommitted(context: RecordContext, commit: Commit): void {

    if (commit.events > 0 || commit.due !== null) {
        context.committed(commit);
    }
}


/**
 * What a store reads time and ids from (its data set's clock and id source), and whom it tells, after each write
 * transaction has committed, what that transaction wrote: the data set's runtime, which wakes its timeline, its
 * dispatcher and its listeners from it.
 */
export interface RecordContext {
    clock: Clock;
    ids: IdSource;
    committed: (commit: Commit) => void;
}


/** Tells nobody: the context of a data set whose runtime is not made yet (its services set their own). */
export function unheard(): void {

    // A data set that nothing follows yet: what it commits is read when something does.
}


/** The context of a data set that follows the wall clock and makes random ids. */
export function wallContext(): RecordContext {

    return { clock: new Clock(), ids: new IdSource(), committed: unheard };
}
