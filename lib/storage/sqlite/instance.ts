import type { RecordContext } from '../../record-context';
import type { Namespace } from '../../namespace';
import { NamespacesDataSet } from '../data-set';
import type { DataSnapshot, InstanceData } from '../engine';
import { absentNamespace } from '../readiness';
import { always } from '../../always';
import { holdsEndpoints, noWiring, rewire, wiringOf } from './events';
import type { SqliteNamespace } from './namespace';


/** What a snapshot holds: each database serialized, pay's too when the instance has one; none for an absent one. */
export interface SqliteSnapshot extends DataSnapshot {
    images: Record<string, Buffer | undefined>;
    // Whether one of them holds a webhook endpoint: only then does a copy made from them open to drop or keep one.
    wired: boolean;
}


/** An instance's data set: databases in memory that can be copied out and put back. */
export class SqliteInstanceData extends NamespacesDataSet implements InstanceData {

    // True when a provisioned namespace (pay) is among the copies: such instances are not pooled.
    private readonly provisionedCopy: boolean;

    // Every copy in memory by namespace, pay's among them when the instance has pay: one bookkeeping for all. A
    // provisioned namespace it has no copy of is absent: not configured, as an unprovisioned service. Until a fixture
    // is loaded, the state at creation is the shared images themselves: no copy per instance.
    constructor(namespaces: readonly Namespace[], private readonly copies: Record<string, SqliteNamespace>, context: RecordContext, private creation: SqliteSnapshot) {

        const provisioned = namespaces.filter(({ readiness }) => readiness === 'provisioned');
        const absent = provisioned.filter(({ name }) => !copies[name]).map(({ name }) => [name, absentNamespace('sqlite', 'memory')]);
        super(namespaces, copies, Object.fromEntries(absent), context);
        this.provisionedCopy = absent.length < provisioned.length;
    }

    startingImage(namespace: string): Buffer | null {

        return this.copies[namespace]?.startingImage ?? null;
    }

    protected override get payAdvice(): string {

        return 'make the instance with "pay": true';
    }

    /** Loads a fixture, all or nothing, before the call returns: every database of an instance is immediate. */
    loadFixtureNow(fixture: unknown, origin: string): void {

        this.storeImmediate(this.fixtureLoads(fixture, origin, this.copies), 0);
    }

    /**
     * Takes the current state as the one reset() goes back to, and returns it. Its bytes count only the databases that
     * changed since the instance was made: the others are still the images it started from, which every instance shares.
     */
    settle(): SqliteSnapshot {

        const shared = new Set(Object.values(this.creation.images));
        const { images, wired } = this.copy();
        const bytes = Object.values(images).reduce((sum, image) => sum + (shared.has(image) ? 0 : image.length), 0);
        this.creation = { images, bytes, wired };
        return this.creation;
    }

    /**
     * Drops the endpoints the copies hold, with what was pending or sent to them, and takes that as the state reset()
     * goes back to: a fork takes its source's world (the data and the event log), never its wiring.
     */
    unwire(): void {

        for (const copy of this.eventCopies()) {
            rewire(copy.db, noWiring);
        }

        this.settle();
    }

    reset(): Promise<void> {

        // Databases that can still roll back to the image they were made from are put back so, statements kept.
        this.keepingWiring(this.creation, () => {

            if (!this.rollBack()) {
                this.replaceAll(this.creation);
            }
        });
        return Promise.resolve();
    }

    snapshot(): Promise<SqliteSnapshot> {

        return Promise.resolve(this.copy());
    }

    // An instance is restored from a copy of its own engine's making.
    restore(snapshot: SqliteSnapshot): Promise<void> {

        this.keepingWiring(snapshot, () => this.replaceAll(snapshot));
        return Promise.resolve();
    }

    prepare(): Promise<number> {

        // The first read a test makes of each namespace, which prepares its statements.
        const reads = this.namespaces.map((namespace) => namespace.warmUp?.(this.store(namespace)));
        return Promise.all(reads).then(() => this.heldBytes());
    }

    recycle(): Promise<number | null> {

        // Instances with pay are not pooled (the registry makes no kind of them), so neither are they recycled.
        return Promise.resolve(!this.provisionedCopy && this.rollBack() ? this.heldBytes() : null);
    }

    // Rolls every database back to the image it was made from, which is the state at creation; false (nothing done)
    // when one cannot.
    private rollBack(): boolean {

        const databases = Object.values(this.copies);
        if (!databases.every((database) => database.rollsBack)) {
            return false;
        }

        for (const database of databases) {
            database.rollBack();
        }

        return true;
    }

    // Replaces every database with its copy in the snapshot.
    private replaceAll({ images }: SqliteSnapshot): void {

        for (const [namespace, database] of Object.entries(this.copies)) {
            database.replace(always(images[namespace], `the copy of ${namespace}`));
        }

        this.forgetStores();
    }

    // Puts a world back and keeps the endpoints as they are, with their counts: they are the data set's wiring, which
    // a reset or restore keeps as it keeps fault rules and journals. A copy not opened holds an image without endpoints
    // (one put back with some is opened here to set them), so it is not read, and when neither the copies nor the
    // world put back hold one, nothing is written.
    private keepingWiring(world: SqliteSnapshot, putBack: () => void): void {

        const kept = this.eventCopies().map((copy) => ({ copy, wiring: copy.opened && holdsEndpoints(copy.db) ? wiringOf(copy.db) : noWiring }));
        putBack();
        if (world.wired || kept.some(({ wiring }) => wiring !== noWiring)) {
            for (const { copy, wiring } of kept) {
                rewire(copy.db, wiring);
            }
        }
    }

    // Whether a copy holds an endpoint; one not opened holds none.
    private wired(): boolean {

        return this.eventCopies().some((copy) => copy.opened && holdsEndpoints(copy.db));
    }

    // The copies of the namespaces that write events, where the endpoints are.
    private eventCopies(): SqliteNamespace[] {

        return this.namespaces.flatMap(({ events, name }) => {

            const copy = this.copies[name];
            return events && copy ? [copy] : [];
        });
    }

    // The memory of the copies open in memory.
    private heldBytes(): number {

        return Object.values(this.copies).reduce((sum, database) => sum + database.heldBytes, 0);
    }

    // A copy of every database, each serialized only if it changed since it was last.
    private copy(): SqliteSnapshot & { images: Record<string, Buffer> } {

        const images: Record<string, Buffer> = {};
        for (const [namespace, database] of Object.entries(this.copies)) {
            images[namespace] = database.serialize();
        }

        const bytes = Object.values(images).reduce((sum, image) => sum + image.length, 0);
        return { images, bytes, wired: this.wired() };
    }
}
