import Crypto from 'node:crypto';

import type { IdMode, RecordContext } from '../record-context';
import type { ClockMoved, DataSetRuntime } from '../data-set';
import { DomainError } from '../errors';
import { resyncEventPosition } from '../data-set/positions';
import { referenced } from '../records';
import type { Scope } from '../scope';
import type { DataSnapshot, InstanceData } from '../storage/engine';
import { instanceGone } from './gone';
import type { InstanceOptions } from './options';


/** An instance as the /_instances routes describe it. */
export interface InstanceRecord {
    id: string;
    base_path: string;
    seed: 'demo' | 'none';
    clock: string | null;
    ids: IdMode;
    pay: boolean;
    created_at: string;
    expires_at: string;
}

/** How an instance was made: a saved scenario's instance block, and whether its world came from a fixture or a fork. */
export interface InstanceMade {
    seed: 'demo' | 'none';
    ids: IdMode;
    pay: boolean;
    clock: string | null;
    fixture: boolean;
    forked: boolean;
}

/** How many snapshots one instance keeps at most: each is a copy of its databases. */
export const maxSnapshots = 50;

/** The memory every instance's snapshots share, so that snapshots cannot take the process down. */
export interface SnapshotBudget {
    used: number;
    readonly max: number;
}

// The moment an instance can be put back to: its clock and its id counter (its databases are the data set's own to
// put back, as they were made).
interface Checkpoint {
    frozen: string | null;
    counter: number;
}

// A snapshot: a checkpoint with a copy of its databases.
interface Snapshot extends Checkpoint {
    data: DataSnapshot;
}


/** One isolated data set with its own services (clock, ids, journal, faults, scheduler), reached under /i/<id>. */
export class Instance implements Scope {

    readonly basePath: string;
    readonly createdAt: string;
    lastUsed: number;
    private closed = false;
    private readonly snapshots = new Map<string, Snapshot>();
    private readonly creation: Checkpoint;
    // Operations on the data set not yet settled: its deletion waits for them before the data set is reused or closed.
    private readonly running = new Set<Promise<unknown>>();

    // context is what the data set's stores read (handed back to the pool with the data set); services hold the same
    // clock and ids, beside the journal, fault rules, scheduler and sender.
    constructor(readonly id: string, private readonly instanceData: InstanceData, readonly context: RecordContext, readonly services: DataSetRuntime, private readonly options: InstanceOptions, private readonly budget: SnapshotBudget) {

        this.basePath = `/i/${id}`;
        this.lastUsed = Date.now();
        this.createdAt = new Date(this.lastUsed).toISOString();
        this.creation = { frozen: services.clock.frozen, counter: services.ids.counter };
    }

    /** The instance's databases; a request that reached the instance before it was deleted gets instance_not_found. */
    get data(): InstanceData {

        if (this.closed) {
            throw instanceGone(this.id);
        }

        return this.instanceData;
    }

    /** How the instance was made: what POST /_instances was asked for, and whether a fixture or a fork gave its world. */
    made(): InstanceMade {

        const { seed, ids, pay, clock, fixture, from } = this.options;
        return { seed, ids, pay, clock: clock ?? null, fixture: fixture !== undefined, forked: from !== undefined };
    }

    /** The record the admin routes answer with, its expiry counted from the last use. */
    describe(idleTtlMs: number): InstanceRecord {

        return {
            id: this.id,
            base_path: this.basePath,
            seed: this.options.seed,
            clock: this.services.clock.frozen,
            ids: this.services.ids.mode,
            pay: this.options.pay,
            created_at: this.createdAt,
            expires_at: new Date(this.lastUsed + idleTtlMs).toISOString()
        };
    }

    /** Puts data, event log, clock and ids back as they were when the instance was made; the endpoints, fault rules and journals stay. */
    async reset(): Promise<void> {

        await this.using((data) => data.reset());
        await this.rewind(this.creation);
    }

    /** Keeps a copy of the instance's state; returns its id. */
    async snapshot(): Promise<string> {

        this.refuseSnapshot(0);
        const checkpoint = { frozen: this.services.clock.frozen, counter: this.services.ids.counter };
        const data = await this.using((set) => set.snapshot());
        // Checked again once the copy is made: the instance may have been deleted, or others kept, meanwhile.
        if (this.closed) {
            throw instanceGone(this.id);
        }

        this.refuseSnapshot(data.bytes);
        this.budget.used += data.bytes;
        const id = Crypto.randomUUID();
        this.snapshots.set(id, { data, ...checkpoint });
        return id;
    }

    /** Resolves once every operation on the data set begun before now has settled, and the walks they left going. */
    async settled(): Promise<void> {

        // A move's walk joins the operations as its move answers: what one adds is waited for too.
        while (this.running.size > 0) {
            await Promise.allSettled(this.running);
        }
    }

    /** Gives its snapshots' memory back to the budget and refuses every later use; the registry frees its data. */
    close(): void {

        for (const { data } of this.snapshots.values()) {
            this.budget.used -= data.bytes;
        }

        this.snapshots.clear();
        this.closed = true;
        this.services.close();
    }

    /** Drops a snapshot, giving its memory back to the budget; a 404 snapshot_not_found when it names none of this instance's. */
    forget(snapshotId: string): void {

        const snapshot = this.snapshots.get(snapshotId);
        if (!snapshot) {
            throw new DomainError('not_found', 'snapshot_not_found', `No snapshot ${snapshotId} of this instance: it was deleted, or taken of another`);
        }

        this.budget.used -= snapshot.data.bytes;
        this.snapshots.delete(snapshotId);
    }

    /** Puts back the state a snapshot holds, the endpoints, fault rules and journals kept; the snapshot stays, to be restored again. */
    async restore(snapshotId: string): Promise<void> {

        const checkpoint = referenced(this.snapshots.get(snapshotId), 'snapshot', 'snapshot_id');
        await this.using((data) => data.restore(checkpoint.data));
        await this.rewind(checkpoint);
    }

    /** A copy of the instance's data, with its clock, id source and options: what a fork starts from. */
    async state(): Promise<{ data: DataSnapshot; frozen: string | null; ids: { mode: IdMode; counter: number }; options: InstanceOptions }> {

        const frozen = this.services.clock.frozen;
        const { mode, counter } = this.services.ids;
        const data = await this.using((set) => set.snapshot());
        return { data, frozen, ids: { mode, counter }, options: this.options };
    }

    /** The instance's whole state as a fixture file, with the clock and id counter an instance made from it continues. */
    async exportFile(): Promise<Record<string, unknown>> {

        const { localgate, ...records } = await this.using((data) => data.exportRecords());
        const instance = { clock: this.services.clock.frozen, ids: this.services.ids.mode, id_counter: this.services.ids.counter, pay: this.options.pay };
        return { localgate: { ...localgate as object, instance }, ...records };
    }

    /** The instance's current time. */
    now(): Date {

        return this.services.clock.now();
    }

    /**
     * Moves the clock to an instant (1970 to the year 9999, what a created_at can hold) or forward by ms, freezing it
     * there, in one walk through the transitions and webhook attempts that fall due on the way (DataSetRuntime.moveClock).
     */
    async moveClock(to: { now: Date } | { advance: number }): Promise<ClockMoved> {

        return await this.using(async () => {

            const moved = await this.services.moveClock(to);
            // A walk that goes on past its move's answer still uses the data set: a deletion waits for it too.
            this.running.add(moved.walked);
            void moved.walked.then(() => this.running.delete(moved.walked));
            return moved;
        });
    }

    // Refuses one more snapshot of this many bytes past either limit.
    private refuseSnapshot(bytes: number): void {

        if (this.snapshots.size >= maxSnapshots) {
            throw new DomainError('conflict', 'snapshot_limit_reached', `This instance holds ${maxSnapshots} snapshots, the most it keeps: make a new instance, or restore and reuse one`);
        }

        if (this.budget.used + bytes > this.budget.max) {
            throw new DomainError('conflict', 'snapshot_limit_reached', `Snapshots of all instances would hold more than MAX_SNAPSHOT_MIB (${this.budget.max / 2 ** 20} MiB): delete instances that are done`);
        }
    }

    // Runs an operation on the data set, known as running until it settles; instance_not_found once deleted.
    private async using<T>(operation: (data: InstanceData) => Promise<T>): Promise<T> {

        const running = operation(this.data);
        this.running.add(running);
        try {
            return await running;
        }
        finally {
            this.running.delete(running);
        }
    }

    // The clock and ids as they were, and the timeline caught up with the data put back: under the wall clock, what fell
    // due since the checkpoint is applied now.
    private async rewind(checkpoint: Checkpoint): Promise<void> {

        this.services.clock.freeze(checkpoint.frozen === null ? null : new Date(checkpoint.frozen));
        this.services.ids.counter = checkpoint.counter;
        await this.using((data) => resyncEventPosition(data, this.services.ids));
        await this.using(() => this.services.timeline.catchUp());
    }
}
