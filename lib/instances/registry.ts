import Crypto from 'node:crypto';

import { Clock, IdSource, unheard, type RecordContext } from '../record-context';
import { timedStoresOf, type DataSetRuntime } from '../data-set';
import { DomainError } from '../errors';
import { resyncEventPosition } from '../data-set/positions';
import { safely, type FailureLog } from '../safe-listener';
import type { NamespaceSchema } from '../namespace';
import type { Engine, InstanceData } from '../storage/engine';
import { fixtureImageKey } from '../storage/fixture-images';
import { Instance, type SnapshotBudget } from './instance';
import type { InstanceFinder } from './lookup';
import type { InstanceOptions } from './options';
import { InstancePool, type PoolKind } from './pool';


/** The refusal of a new instance once the given number are live, the most MAX_INSTANCES allows. */
export function limitReached(live: number): DomainError {

    return new DomainError('limit', 'instance_limit_reached', `${live} instances are live, the most MAX_INSTANCES allows: delete one (DELETE /_instances/{id}) or let idle ones expire`);
}


/** The limits of a registry, from the settings. */
export interface RegistryLimits {
    idleTtlMs: number;
    maxInstances: number;
    maxSnapshotBytes: number;
    /** The bytes the instances made ahead may hold together; 0 makes none ahead. */
    poolBytes: number;
    /** Whether the engine keeps the images of fixtures: only then is an instance with a fixture made ahead, from its image. */
    fixtureImages: boolean;
}

// What the registry knows of a live instance beyond the instance itself: its pool kind and counter at creation.
interface Live {
    instance: Instance;
    kind: string | null;
    counter: number;
}


/** The live instances of a server: made (handed out from the pool when one waits), found, expired when idle, and capped in number. */
export class InstanceRegistry implements InstanceFinder {

    readonly idleTtlMs: number;
    readonly maxInstances: number;
    /** The instances made ahead, per kind. */
    readonly pool: InstancePool;
    private readonly instances = new Map<string, Live>();
    private readonly budget: SnapshotBudget;
    private readonly deleteListeners: ((instance: Instance) => void)[] = [];
    private sweeper: NodeJS.Timeout | null = null;
    // Instances being made: they count against the cap before they are live.
    private making = 0;
    private readonly poolFixtures: boolean;

    /** The namespaces of every instance. */
    get namespaces(): readonly NamespaceSchema[] {

        return this.engine.namespaces;
    }

    constructor(private readonly engine: Engine, private readonly servicesFor: (context: RecordContext) => DataSetRuntime, limits: RegistryLimits, private readonly log: FailureLog) {

        this.idleTtlMs = limits.idleTtlMs;
        this.maxInstances = limits.maxInstances;
        this.budget = { used: 0, max: limits.maxSnapshotBytes };
        this.pool = new InstancePool(engine, limits.poolBytes, log);
        this.poolFixtures = limits.fixtureImages;
    }

    /** Makes an instance: one made ahead of its kind when one waits, else a copy of the migrated (and seeded) image, with its fixture loaded. */
    async create(options: InstanceOptions): Promise<Instance> {

        this.expire();
        if (this.instances.size + this.making >= this.maxInstances) {
            throw limitReached(this.instances.size + this.making);
        }

        this.making += 1;
        try {
            if (options.from !== undefined) {
                return await this.fork(options.from);
            }

            const context = { clock: new Clock(options.clock ? new Date(options.clock) : null), ids: new IdSource(options.ids), committed: unheard };
            context.ids.counter = options.idCounter ?? 0;
            const kind = this.kindOf(options, context);
            const pooled = kind && this.pool.take(kind);
            if (pooled) {
                // The stores of the data set read its context: the clock and ids asked for take the place of its own.
                pooled.context.clock = context.clock;
                pooled.context.ids = context.ids;
                context.ids.counter = pooled.counter;
                return await this.add(pooled.data, pooled.context, options, kind.key);
            }

            const data = await this.engine.createInstance({ ...kind?.options ?? { seed: options.seed === 'demo', pay: options.pay, fixture: options.fixture }, context });
            return await this.add(data, context, options, kind?.key ?? null);
        }
        finally {
            this.making -= 1;
        }
    }

    /** The live instance with this id, marked as used now; undefined for an unknown, deleted or expired one. */
    find(id: string): Instance | undefined {

        const live = this.instances.get(id);
        if (!live) {
            return undefined;
        }

        const now = Date.now();
        if (now - live.instance.lastUsed >= this.idleTtlMs) {
            this.expire(id);
            return undefined;
        }

        live.instance.lastUsed = now;
        return live.instance;
    }

    /** The live instances, oldest first. */
    list(): Instance[] {

        this.expire();
        return [...this.instances.values()].map((live) => live.instance);
    }

    /**
     * Deletes an instance: at once it is no longer found, and every later use of it is instance_not_found. Resolves,
     * false when there was none, once its data is back in the pool or closed.
     */
    async delete(id: string): Promise<boolean> {

        const live = this.instances.get(id);
        if (!live) {
            return false;
        }

        this.instances.delete(id);
        const { instance } = live;
        const data = instance.data;
        instance.close();
        for (const listener of this.deleteListeners) {
            listener(instance);
        }

        // Operations begun before the deletion finish on this data set, before another instance can be handed it.
        await instance.settled();
        await this.pool.release(live.kind, { data, context: instance.context, counter: live.counter });
        return true;
    }

    /** Calls the listener with every instance deleted from now on, expired ones included. */
    onDelete(listener: (instance: Instance) => void): void {

        // A listener's failure is logged: thrown into delete, it would leave the data set neither pooled nor closed.
        this.deleteListeners.push(safely('instance deleted', this.log, listener));
    }

    /** Deletes every instance idle for the whole idle time: each is gone at once; resolves once their data is freed. */
    async sweep(): Promise<void> {

        const now = Date.now();
        const idle = [...this.instances.values()].filter(({ instance }) => now - instance.lastUsed >= this.idleTtlMs);
        await Promise.all(idle.map(({ instance }) => this.delete(instance.id)));
    }

    /** Deletes every instance, the pool's too, and stops the sweeping. */
    async close(): Promise<void> {

        clearInterval(this.sweeper ?? undefined);
        this.sweeper = null;
        await this.pool.close();
        await Promise.all([...this.instances.keys()].map((id) => this.delete(id)));
    }

    // Deletes expired instances where nothing waits for their data to be freed: a failure there is logged.
    private expire(id?: string): void {

        safely('idle sweep', this.log, () => (id === undefined ? this.sweep() : this.delete(id)))();
    }

    // A copy of a live instance as it is now: data, event log, clock and id counter; its endpoints, faults, journals and
    // snapshots stay its own.
    private async fork(sourceId: string): Promise<Instance> {

        const source = this.find(sourceId);
        if (!source) {
            throw new DomainError('unprocessable', 'instance_not_found', `There is no instance ${JSON.stringify(sourceId)} to fork: it was deleted, it expired, or it never existed`, 'from');
        }

        const state = await source.state();
        const ids = new IdSource(state.ids.mode);
        ids.counter = state.ids.counter;
        const context = { clock: new Clock(state.frozen === null ? null : new Date(state.frozen)), ids, committed: unheard };
        const data = await this.engine.createInstance({ seed: false, pay: state.options.pay, from: state.data, context });
        return await this.add(data, context, { from: sourceId, seed: state.options.seed, ids: ids.mode, pay: state.options.pay }, null, true);
    }

    // The kind an instance is pooled as: its seed, or its fixture's image; none with pay, or with the pool off.
    private kindOf(options: InstanceOptions, context: RecordContext): PoolKind | null {

        if (options.pay || this.pool.maxBytes === 0) {
            return null;
        }

        const dataOptions = { seed: options.seed === 'demo', pay: false, fixture: options.fixture };
        const start = { frozen: context.clock.frozen, mode: context.ids.mode, counter: context.ids.counter };
        if (!options.fixture) {
            return { key: `seed:${options.seed}`, options: dataOptions, start };
        }

        // Without the images, a fixture made ahead would draw its times and random ids before it is asked for.
        if (!this.poolFixtures) {
            return null;
        }

        // Hashed once: the engine finds the fixture's image under the same key.
        const imageKey = fixtureImageKey({ ...dataOptions, context });
        return imageKey === null ? null : { key: `fixture:${imageKey}`, options: { ...dataOptions, imageKey }, start };
    }

    // The instance's timeline follows its data from the start: what its records hold due by its clock is applied before
    // it is handed out. A failure there closes the data set unused.
    private async add(data: InstanceData, context: RecordContext, options: InstanceOptions, kind: string | null, forked = false): Promise<Instance> {

        const instance = new Instance(Crypto.randomUUID(), data, context, this.servicesFor(context), options, this.budget);
        const counter = context.ids.counter;
        try {
            // Only a fork's databases hold events already (its source's): an image, a fixture's or one a pooled data
            // set was rolled back to, holds none, and the id source starts at 0. No new instance holds an endpoint, so
            // none holds a delivery to look for.
            if (forked) {
                await resyncEventPosition(data, context.ids);
            }

            await instance.services.watch(timedStoresOf(this.engine.namespaces, () => instance.data), () => instance.data.eventLogs(), { pending: false });
        }
        catch (err) {
            instance.close();
            await data.close();
            throw err;
        }

        this.instances.set(instance.id, { instance, kind, counter });
        // A failed sweep is logged and the next one runs: thrown from a timer, it would end the process.
        this.sweeper ??= setInterval(() => this.expire(), Math.min(this.idleTtlMs, 60_000)).unref();
        return instance;
    }
}
