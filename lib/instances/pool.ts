import { Clock, IdSource, unheard, type IdMode, type RecordContext } from '../record-context';
import { safely, type FailureLog } from '../safe-listener';
import type { Engine, InstanceData, InstanceDataOptions } from '../storage/engine';


// Instances of the kinds made most (the demo, a fixture a suite loads for every test) are handed out made ahead:
// databases open and the first reads' statements prepared, in idle time or by putting back the data of a deleted one.

/** What makes instances interchangeable: the data they start from. Clock and ids are applied at hand-out. */
export interface PoolKind {
    readonly key: string;
    readonly options: Omit<InstanceDataOptions, 'context'>;
    /** The clock and id source a fixture's load runs under, which the key holds: a made-ahead one loads under the same. */
    readonly start: { frozen: string | null; mode: IdMode; counter: number };
}

/** A data set of a kind, with the context its stores read and the id counter it starts from. */
export interface Pooled {
    data: InstanceData;
    context: RecordContext;
    counter: number;
}

interface Held extends Pooled {
    bytes: number;
}

interface KindEntry {
    kind: PoolKind;
    idle: Held[];
    // Emptied by a hand-out: made up to its depth in idle time. A kind whose instances come back (deleted, rolled
    // back) is not, so that a suite that closes each test's instance reuses the same few data sets.
    wanted: boolean;
    // One made ahead was larger than the whole budget: the kind is never made ahead again.
    unfit: boolean;
}

/** How many made-ahead data sets of one kind wait at most, and how many kinds (the most recently used) have some. */
export const poolDepth = 2;
export const poolKinds = 4;


/** Data sets made ahead per kind, within a budget of bytes; the least recently used kinds give theirs up first. */
export class InstancePool {

    // Least recently used first.
    private readonly kinds = new Map<string, KindEntry>();
    private held = 0;
    private filling: NodeJS.Immediate | null = null;
    private closed = false;

    constructor(private readonly engine: Engine, readonly maxBytes: number, private readonly log: FailureLog) { }

    /** The bytes the waiting data sets hold together (their databases). */
    get bytes(): number {

        return this.held;
    }

    /** How many data sets wait, all kinds together. */
    get size(): number {

        let size = 0;
        for (const entry of this.kinds.values()) {
            size += entry.idle.length;
        }

        return size;
    }

    /** A waiting data set of the kind, now the most recently used; undefined when none waits. Starts making more in idle time. */
    take(kind: PoolKind): Pooled | undefined {

        const entry = this.kinds.get(kind.key) ?? { kind, idle: [], wanted: false, unfit: false };
        this.kinds.delete(kind.key);
        this.kinds.set(kind.key, entry);
        for (const [key, old] of this.kinds) {
            if (this.kinds.size <= poolKinds) {
                break;
            }

            this.kinds.delete(key);
            this.drop(old.idle.splice(0));
        }

        const pooled = entry.idle.pop();
        if (pooled) {
            this.held -= pooled.bytes;
        }

        if (entry.idle.length === 0 && !entry.unfit) {
            entry.wanted = true;
            this.fillLater();
        }

        return pooled;
    }

    /** Takes back the data of a deleted instance of a kind: put back as it was made and kept when there is room, else closed. */
    async release(key: string | null, pooled: Pooled): Promise<void> {

        const entry = key === null ? undefined : this.kinds.get(key);
        if (entry && !this.closed && entry.idle.length < poolDepth) {
            const bytes = await pooled.data.recycle();
            if (bytes !== null && this.keep(entry, { ...pooled, bytes })) {
                return;
            }
        }

        await pooled.data.close();
    }

    /** Closes every waiting data set and makes no more. */
    async close(): Promise<void> {

        this.closed = true;
        clearImmediate(this.filling ?? undefined);
        this.filling = null;
        const waiting = [...this.kinds.values()].flatMap((entry) => entry.idle.splice(0));
        this.held = 0;
        await Promise.all(waiting.map(({ data }) => data.close()));
    }

    // One data set per turn of the event loop, so that requests go between; unref'd, it keeps no process alive.
    private fillLater(): void {

        if (this.filling || this.closed) {
            return;
        }

        this.filling = setImmediate(safely('instance pool', this.log, async () => {

            this.filling = null;
            if (await this.fillOne()) {
                this.fillLater();
            }
        })).unref();
    }

    // Makes one data set for the most recently used kind wanted; false when none is, or there is no room.
    private async fillOne(): Promise<boolean> {

        const entry = [...this.kinds.values()].reverse().find((candidate) => candidate.wanted);
        if (!entry) {
            return false;
        }

        const { kind } = entry;
        // A fixture is made ahead only as a copy of its image: loaded, it would draw its times and random ids before
        // anyone asks for it, and such a data set could not be recycled.
        if (kind.options.imageKey !== undefined && !this.engine.hasFixtureImage(kind.options.imageKey)) {
            entry.unfit = true;
            entry.wanted = false;
            return false;
        }

        const ids = new IdSource(kind.start.mode);
        ids.counter = kind.start.counter;
        const context = { clock: new Clock(kind.start.frozen === null ? null : new Date(kind.start.frozen)), ids, committed: unheard };
        const data = await this.engine.createInstance({ ...kind.options, context });
        const bytes = await data.prepare();
        if (this.closed || this.kinds.get(kind.key) !== entry || !this.keep(entry, { data, context, counter: ids.counter, bytes })) {
            entry.unfit = bytes > this.maxBytes;
            entry.wanted = !entry.unfit;
            await data.close();
            return false;
        }

        entry.wanted = entry.idle.length < poolDepth;
        return true;
    }

    // Keeps a data set when the budget has room for it, after giving up those of less recently used kinds.
    private keep(entry: KindEntry, held: Held): boolean {

        for (const other of this.kinds.values()) {
            if (other === entry || this.held + held.bytes <= this.maxBytes) {
                break;
            }

            this.drop(other.idle.splice(0));
        }

        if (this.held + held.bytes > this.maxBytes) {
            return false;
        }

        entry.idle.push(held);
        this.held += held.bytes;
        return true;
    }

    // Closes data sets given up; nothing waits for it, so a failure is logged.
    private drop(given: Held[]): void {

        for (const { bytes } of given) {
            this.held -= bytes;
        }

        safely('instance pool', this.log, () => Promise.all(given.map(({ data }) => data.close())))();
    }
}
