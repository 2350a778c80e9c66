import type { RecordContext } from '../../clock';
import type { Namespace } from '../../namespaces/namespace';
import { NamespacesDataSet } from '../data-set';
import type { DataSnapshot, InstanceData } from '../engine';
import type { SqliteNamespace } from './namespace';
import { MemoryPay, type NoPay } from './pay-access';


/** What a snapshot holds: each database serialized, pay's too when the instance has one. */
export interface SqliteSnapshot extends DataSnapshot {
    images: Record<string, Buffer | undefined>;
}


/** An instance's data set: databases in memory that can be copied out and put back. */
export class SqliteInstanceData extends NamespacesDataSet implements InstanceData {

    // Until a fixture is loaded, the state at creation is the shared images themselves: no copy per instance.
    constructor(namespaces: readonly Namespace[], private readonly sqlite: Record<string, SqliteNamespace>, private readonly memoryPay: MemoryPay | NoPay, context: RecordContext, private creation: SqliteSnapshot) {

        super(namespaces, sqlite, memoryPay, context);
    }

    protected override get payAdvice(): string {

        return 'make the instance with "pay": true';
    }

    /** Loads a fixture, all or nothing, before the call returns: every database of an instance is immediate. */
    loadFixtureNow(fixture: unknown, origin: string): void {

        this.storeImmediate(this.fixtureLoads(fixture, origin, this.memoryPay instanceof MemoryPay ? this.memoryPay : null), 0);
    }

    /**
     * Takes the current state as the one reset() goes back to, and returns it. Its bytes count only the databases that
     * changed since the instance was made: the others are still the images it started from, which every instance shares.
     */
    settle(): SqliteSnapshot {

        const shared = new Set(Object.values(this.creation.images));
        const { images } = this.copy();
        const bytes = Object.values(images).reduce((sum, image) => sum + (image && !shared.has(image) ? image.length : 0), 0);
        this.creation = { images, bytes };
        return this.creation;
    }

    reset(): Promise<void> {

        // Databases that can still roll back to the image they were made from are put back so, statements kept.
        return this.rollBack() ? Promise.resolve() : this.restore(this.creation);
    }

    snapshot(): Promise<SqliteSnapshot> {

        return Promise.resolve(this.copy());
    }

    restore(snapshot: DataSnapshot): Promise<void> {

        const { images } = snapshot as SqliteSnapshot;
        for (const [namespace, database] of Object.entries(this.sqlite)) {
            database.replace(images[namespace]!);
        }

        if (this.memoryPay instanceof MemoryPay) {
            this.memoryPay.replace(images.pay!);
        }

        this.forgetStores();
        return Promise.resolve();
    }

    prepare(): Promise<number> {

        // The first read a test makes of each namespace, which prepares its statements.
        const reads = this.namespaces.map((namespace) => namespace.warmUp?.(this.store(namespace)));
        return Promise.all(reads).then(() => this.heldBytes());
    }

    recycle(): Promise<number | null> {

        return Promise.resolve(this.rollBack() ? this.heldBytes() : null);
    }

    // Rolls every database back to the image it was made from, which is the state at creation; false (nothing done)
    // when one cannot. Pay's copy is opened whole when made and holds its provider terms: it is always made anew.
    private rollBack(): boolean {

        const databases = Object.values(this.sqlite);
        if (this.memoryPay instanceof MemoryPay || !databases.every((database) => database.rollsBack)) {
            return false;
        }

        for (const database of databases) {
            database.rollBack();
        }

        return true;
    }

    // The memory of the copies open in memory.
    private heldBytes(): number {

        return Object.values(this.sqlite).reduce((sum, database) => sum + database.heldBytes, 0);
    }

    // A copy of every database, each serialized only if it changed since it was last.
    private copy(): SqliteSnapshot {

        const images: SqliteSnapshot['images'] = { pay: this.memoryPay instanceof MemoryPay ? this.memoryPay.serialize() : undefined };
        for (const [namespace, database] of Object.entries(this.sqlite)) {
            images[namespace] = database.serialize();
        }

        const bytes = Object.values(images).reduce((sum, image) => sum + (image?.length ?? 0), 0);
        return { images, bytes };
    }
}
