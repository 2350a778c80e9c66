import Crypto from 'node:crypto';

import { Clock, IdSource, type IdMode, type RecordContext } from '../clock';
import type { DataSetServices } from '../data-set';
import { DomainError } from '../errors';
import { fixtureBody, isRecord } from '../fixtures';
import { referenced } from '../records';
import { safely, type FailureLog } from '../safe-listener';
import type { Scope } from '../scope';
import type { DataSnapshot, Engine, InstanceData } from '../storage/engine';
import { shippedMigrationNames } from '../storage/migrations';



export interface InstanceOptions {
    /** The id of a live instance to fork: the new one is a copy of it as it is now. */
    from?: string;
    seed: 'demo' | 'none';
    ids: IdMode;
    clock?: string;
    /** Where a sequential id counter starts (an exported instance's), 0 unless given. */
    idCounter?: number;
    pay: boolean;
    fixture?: { records: unknown; origin: string };
}

/** What POST /_instances (or the test kit) takes, as validated: the fixture as sent, seed, ids and pay unset unless asked for. */
export type NewInstance = Omit<InstanceOptions, 'fixture' | 'ids' | 'seed' | 'pay'> & { fixture?: unknown; ids?: IdMode; seed?: 'demo' | 'none'; pay?: boolean };

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

/** How many snapshots one instance keeps at most: each is a copy of its databases. */
export const maxSnapshots = 50;

// The moment an instance can be put back to: its databases, its clock and its id counter.
interface Checkpoint {
    data: DataSnapshot | null;
    frozen: string | null;
    counter: number;
}


/**
 * The options of a new instance from what was asked. A fixture exported from an instance carries its clock, ids and
 * pay: the new instance continues each that was not asked for, and a sequential counter goes on from the file's. An
 * export holds the whole world, so the demo goes beneath it only when asked for; a fixture with pay records and pay
 * unset gets pay.
 */
export function instanceOptions(asked: NewInstance, origin: string): InstanceOptions {

    const body = asked.fixture === undefined ? undefined : fixtureBody(asked.fixture, origin, shippedMigrationNames());
    const carried = body?.header?.instance;
    return {
        from: asked.from,
        seed: asked.seed ?? (body?.header ? 'none' : 'demo'),
        ids: asked.ids ?? carried?.ids ?? 'random',
        clock: asked.clock ?? carried?.clock ?? undefined,
        idCounter: carried?.id_counter,
        pay: asked.pay ?? carried?.pay ?? (isRecord(body?.records) && Object.hasOwn(body.records, 'pay')),
        fixture: asked.fixture === undefined ? undefined : { records: asked.fixture, origin }
    };
}


/** The refusal of a new instance once the given number are live, the most MAX_INSTANCES allows. */
export function limitReached(live: number): DomainError {

    return new DomainError('limit', 'instance_limit_reached', `${live} instances are live, the most MAX_INSTANCES allows: delete one (DELETE /_instances/{id}) or let idle ones expire`);
}


/** The memory every instance's snapshots share, so that snapshots cannot take the process down. */
export interface SnapshotBudget {
    used: number;
    readonly max: number;
}


// The latest instant a record's created_at can hold (four-digit years).
const latestInstant = Date.parse('9999-12-31T23:59:59.999Z');


// The clock of an instance stays where a created_at can be: 1970 to the year 9999.
function clockInRange(instant: Date, field: string): void {

    const time = instant.getTime();
    if (!(time >= 0 && time <= latestInstant)) {
        throw new DomainError('unprocessable', 'clock_out_of_range', `${field} would take the clock outside 1970-01-01 to 9999-12-31, which records cannot hold`, field);
    }
}


/** The refusal of an instance that was deleted or expired, also to a request that reached it before. */
export function instanceGone(id: string): DomainError {

    return new DomainError('not_found', 'instance_not_found', `There is no instance ${JSON.stringify(id)}: it was deleted, it expired, or it never existed (POST /_instances makes one)`);
}


/** One isolated data set with its own services (clock, ids, journal, faults, scheduler), reached under /i/<id>. */
export class Instance implements Scope {

    readonly basePath: string;
    readonly createdAt: string;
    lastUsed: number;
    private closed = false;
    private readonly snapshots = new Map<string, Checkpoint>();
    private readonly creation: Checkpoint;

    constructor(readonly id: string, private readonly instanceData: InstanceData, readonly services: DataSetServices, private readonly options: InstanceOptions, private readonly budget: SnapshotBudget) {

        this.basePath = `/i/${id}`;
        this.lastUsed = Date.now();
        this.createdAt = new Date(this.lastUsed).toISOString();
        this.creation = { data: null, frozen: services.clock.frozen, counter: services.ids.counter };
    }

    /** The instance's databases; a request that reached the instance before it was deleted gets instance_not_found. */
    get data(): InstanceData {

        if (this.closed) {
            throw instanceGone(this.id);
        }

        return this.instanceData;
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

    /** Puts data, clock and ids back as they were when the instance was made. */
    reset(): void {

        this.data.reset();
        this.rewind(this.creation);
    }

    /** Keeps a copy of the instance's state; returns its id. */
    snapshot(): string {

        if (this.snapshots.size >= maxSnapshots) {
            throw new DomainError('conflict', 'snapshot_limit_reached', `This instance holds ${maxSnapshots} snapshots, the most it keeps: make a new instance, or restore and reuse one`);
        }

        const data = this.data.snapshot();
        if (this.budget.used + data.bytes > this.budget.max) {
            throw new DomainError('conflict', 'snapshot_limit_reached', `Snapshots of all instances would hold more than MAX_SNAPSHOT_MIB (${this.budget.max / 2 ** 20} MiB): delete instances that are done`);
        }

        this.budget.used += data.bytes;
        const id = Crypto.randomUUID();
        this.snapshots.set(id, { data, frozen: this.services.clock.frozen, counter: this.services.ids.counter });
        return id;
    }

    /** Frees the instance's databases and gives its snapshots' memory back to the budget. */
    close(): void {

        for (const { data } of this.snapshots.values()) {
            this.budget.used -= data!.bytes;
        }

        this.snapshots.clear();
        this.closed = true;
        this.services.close();
        this.instanceData.close();
    }

    /** Puts back the state a snapshot holds; the snapshot stays, to be restored again. */
    restore(snapshotId: string): void {

        const checkpoint = referenced(this.snapshots.get(snapshotId), 'snapshot', 'snapshot_id');
        this.data.restore(checkpoint.data!);
        this.rewind(checkpoint);
    }

    /** A copy of the instance's data, with its clock, id source and options: what a fork starts from. */
    state(): { data: DataSnapshot; frozen: string | null; ids: IdSource; options: InstanceOptions } {

        return { data: this.data.snapshot(), frozen: this.services.clock.frozen, ids: this.services.ids, options: this.options };
    }

    /** The instance's whole state as a fixture file, with the clock and id counter an instance made from it continues. */
    async exportFile(): Promise<Record<string, unknown>> {

        const { localgate, ...records } = await this.data.exportRecords();
        const instance = { clock: this.services.clock.frozen, ids: this.services.ids.mode, id_counter: this.services.ids.counter, pay: this.options.pay };
        return { localgate: { ...localgate as object, instance }, ...records };
    }

    /** The instance's current time. */
    now(): Date {

        return this.services.clock.now();
    }

    /** Freezes the clock at an instant from 1970 to the year 9999 (what a created_at can hold). */
    setClock(instant: Date): void {

        clockInRange(instant, 'now');
        this.services.clock.freeze(instant);
    }

    /** Moves the clock forward, freezing it there. */
    advanceClock(ms: number): void {

        clockInRange(new Date(this.now().getTime() + ms), 'advance');
        this.services.clock.advance(ms);
    }

    private rewind(checkpoint: Checkpoint): void {

        this.services.clock.freeze(checkpoint.frozen === null ? null : new Date(checkpoint.frozen));
        this.services.ids.counter = checkpoint.counter;
    }
}


/** The live instances of a server: made, found, expired when idle, and capped in number. */
export class InstanceRegistry {

    private readonly instances = new Map<string, Instance>();
    private readonly budget: SnapshotBudget;
    private readonly deleteListeners: ((instance: Instance) => void)[] = [];
    private sweeper: NodeJS.Timeout | null = null;

    constructor(private readonly engine: Engine, private readonly servicesFor: (context: RecordContext) => DataSetServices, readonly idleTtlMs: number, readonly maxInstances: number, maxSnapshotBytes: number, private readonly log: FailureLog) {

        this.budget = { used: 0, max: maxSnapshotBytes };
    }

    /** Makes an instance: a copy of the migrated (and seeded) image, with its fixture loaded. */
    create(options: InstanceOptions): Instance {

        this.sweep();
        if (this.instances.size >= this.maxInstances) {
            throw limitReached(this.instances.size);
        }

        if (options.from !== undefined) {
            return this.fork(options.from);
        }

        const context = { clock: new Clock(options.clock ? new Date(options.clock) : null), ids: new IdSource(options.ids) };
        context.ids.counter = options.idCounter ?? 0;
        const data = this.engine.createInstance({ seed: options.seed === 'demo', pay: options.pay, fixture: options.fixture, context });
        return this.add(data, context, options);
    }

    // A copy of a live instance as it is now: data, clock and id counter; its faults, journal and snapshots stay its own.
    private fork(sourceId: string): Instance {

        const source = this.find(sourceId);
        if (!source) {
            throw new DomainError('unprocessable', 'instance_not_found', `There is no instance ${JSON.stringify(sourceId)} to fork: it was deleted, it expired, or it never existed`, 'from');
        }

        const state = source.state();
        const ids = new IdSource(state.ids.mode);
        ids.counter = state.ids.counter;
        const context = { clock: new Clock(state.frozen === null ? null : new Date(state.frozen)), ids };
        const data = this.engine.createInstance({ seed: false, pay: state.options.pay, from: state.data, context });
        return this.add(data, context, { seed: state.options.seed, ids: ids.mode, pay: state.options.pay });
    }

    private add(data: InstanceData, context: RecordContext, options: InstanceOptions): Instance {

        const instance = new Instance(Crypto.randomUUID(), data, this.servicesFor(context), options, this.budget);
        this.instances.set(instance.id, instance);
        // A failed sweep is logged and the next one runs: thrown from a timer, it would end the process.
        this.sweeper ??= setInterval(safely('idle sweep', this.log, () => this.sweep()), Math.min(this.idleTtlMs, 60_000)).unref();
        return instance;
    }

    /** The live instance with this id, marked as used now; undefined for an unknown, deleted or expired one. */
    find(id: string): Instance | undefined {

        const instance = this.instances.get(id);
        if (!instance) {
            return undefined;
        }

        const now = Date.now();
        if (now - instance.lastUsed >= this.idleTtlMs) {
            this.delete(id);
            return undefined;
        }

        instance.lastUsed = now;
        return instance;
    }

    /** The live instances, oldest first. */
    list(): Instance[] {

        this.sweep();
        return [...this.instances.values()];
    }

    /** Deletes an instance and frees its databases; false when there was none. */
    delete(id: string): boolean {

        const instance = this.instances.get(id);
        if (!instance) {
            return false;
        }

        this.instances.delete(id);
        instance.close();
        for (const listener of this.deleteListeners) {
            listener(instance);
        }

        return true;
    }

    /** Calls the listener with every instance deleted from now on, expired ones included. */
    onDelete(listener: (instance: Instance) => void): void {

        this.deleteListeners.push(listener);
    }

    /** Deletes every instance idle for the whole idle time. */
    sweep(): void {

        const now = Date.now();
        for (const instance of this.instances.values()) {
            if (now - instance.lastUsed >= this.idleTtlMs) {
                this.delete(instance.id);
            }
        }
    }

    /** Deletes every instance and stops the sweeping. */
    close(): void {

        clearInterval(this.sweeper ?? undefined);
        this.sweeper = null;
        for (const id of [...this.instances.keys()]) {
            this.delete(id);
        }
    }
}
