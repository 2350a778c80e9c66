import { always } from '../always';
import type { Recorded } from './journal-entry';


/** A journal the budget can shrink: the request journal, or the delivery journal of webhooks. */
export interface BudgetedJournal {
    readonly bytes: number;
    closed: boolean;
    /** Drops the oldest entry. */
    dropOldest(): void;
    /** Forgets every entry. */
    clear(): void;
}


/** The memory all journals of a server share, in bytes as the entries estimate them. */
export class JournalBudget {

    used = 0;
    private readonly journals = new Set<BudgetedJournal>();

    constructor(readonly maxBytes: number) {}

    /** Makes room for an entry of this many bytes: the oldest entries of the fullest journals go first. */
    reserve(bytes: number): void {

        // Memory in use is some journal's: the first of the fullest gives its oldest.
        while (this.used + bytes > this.maxBytes && this.used > 0) {
            const fullest = [...this.journals].reduce((kept, journal) => (journal.bytes > kept.bytes ? journal : kept));
            fullest.dropOldest();
        }
    }

    /** Counts a journal in, so that its entries can be dropped to make room. */
    join(journal: BudgetedJournal): void {

        this.journals.add(journal);
    }

    /** Gives a journal's memory back, as its data set goes; a request still in flight then adds nothing. */
    leave(journal: BudgetedJournal): void {

        journal.clear();
        journal.closed = true;
        this.journals.delete(journal);
    }
}


/**
 * Entries kept oldest first, at most `size` of them, in the memory the journals of a server share: what the request
 * journal and the delivery journal of webhooks have alike. Each entry carries its bytes as estimated.
 */
export abstract class BoundedJournal<Entry extends { bytes: number }> implements BudgetedJournal {

    bytes = 0;
    closed = false;
    protected entries: Entry[] = [];

    constructor(protected readonly size: number, private readonly budget: JournalBudget) {

        budget.join(this);
    }

    /** Forgets every entry. */
    clear(): void {

        this.budget.used -= this.bytes;
        this.bytes = 0;
        this.entries = [];
    }

    /** Drops the oldest entry (one is there: a journal is asked only while it holds some of the memory, or is full). */
    dropOldest(): void {

        // shift() moves the array's start, where splice(0, 1) copied the rest: a full journal pays it on every entry.
        const freed = always(this.entries.shift(), 'the oldest journal entry').bytes;
        this.bytes -= freed;
        this.budget.used -= freed;
    }

    // Keeps an entry, placed in `entries` by `place`: past the journal's count its oldest goes, past the budget the
    // oldest of the fullest journals. A closed journal (its data set gone) or one of size 0 keeps nothing.
    protected keep(entry: Entry, place: (entry: Entry) => void): void {

        if (this.closed || this.size === 0) {
            return;
        }

        if (this.entries.length >= this.size) {
            this.dropOldest();
        }

        this.budget.reserve(entry.bytes);
        place(entry);
        this.bytes += entry.bytes;
        this.budget.used += entry.bytes;
    }
}


/** A move of a data set's clock, placed after the journal's entry that arrived last before it. */
export interface ClockNote {
    after: number;
    to: { now: Date } | { advance: number };
    applied: Readonly<Partial<Record<string, number>>>;
}

// The moves a journal keeps at most: a saved scenario's worth.
const maxClockNotes = 500;


/**
 * The requests one data set received, in arrival order: at most size entries, the oldest dropped first; and the moves
 * of its clock among them, which a saved scenario plays where they came.
 */
export class Journal extends BoundedJournal<Recorded> {

    private moves: ClockNote[] = [];

    /** Notes a move of the clock, after the entries that have arrived; a journal that keeps nothing keeps none. */
    noteMove(to: ClockNote['to'], applied: ClockNote['applied']): void {

        if (this.closed || this.size === 0) {
            return;
        }

        this.moves.push({ after: this.entries.at(-1)?.arrival ?? 0, to, applied });
        if (this.moves.length > maxClockNotes) {
            this.moves.shift();
        }
    }

    /** The clock's moves, oldest first. */
    clockMoves(): readonly ClockNote[] {

        return this.moves;
    }

    override clear(): void {

        super.clear();
        this.moves = [];
    }

    /** Adds an entry where its arrival puts it (requests can finish out of order). */
    add(recorded: Recorded): void {

        this.keep(recorded, () => {

            // After every entry that arrived at or before it, so that the entries stay in arrival order: looked for
            // from the newest, since an entry nearly always arrived after all the others.
            this.entries.splice(this.entries.findLastIndex((entry) => entry.arrival <= recorded.arrival) + 1, 0, recorded);
        });
    }

    /** The entries, oldest first. */
    list(): readonly Recorded[] {

        return this.entries;
    }
}
