import type { Namespace } from '../namespace';
import type { DataSetDatabases } from '../storage/engine';
import type { TimedStores } from './timeline';
import type { AppliedTransition, TimedStore } from '../transitions';


// Per namespace, the images (the shared start of instances: a seed's, a fixture's) in which its timed store found no
// record that moves with time. A data set whose database of the namespace is still such an image, unopened, has
// nothing there to watch: its timeline leaves that database closed (an instance's first read or write opens it, and the
// store is watched from then on).
const stillImages = new WeakMap<Namespace, WeakSet<object>>();


/**
 * The timed stores of a data set's namespaces as the data set is now: each namespace whose records move with time, over
 * its store (pay's only while pay is ready), but for a database still an image known to hold nothing pending. The first
 * call, which the timeline's catch-up makes as the data set is made (before any request reaches it), learns which of
 * its images hold nothing: a store over one that applied nothing and has nothing due.
 */
export function timedStoresOf(namespaces: readonly Namespace[], data: () => DataSetDatabases): TimedStores {

    const timed = namespaces.flatMap((namespace) => (namespace.timed ? [{ namespace, hook: namespace.timed, still: stillOf(namespace) }] : []));
    let first = true;
    return async () => {

        const learns = first;
        first = false;
        const stores: TimedStore[] = [];
        const set = data();
        for (const { namespace, hook, still } of timed) {
            const image = set.startingImage?.(namespace.name) ?? null;
            if (image !== null && still.has(image)) {
                continue;
            }

            const readiness = await set.readiness(namespace);
            if (readiness.ready) {
                const store = hook(readiness.store);
                stores.push(learns && image !== null ? learning(store, () => still.add(image)) : store);
            }
        }

        return stores;
    };
}


function stillOf(namespace: Namespace): WeakSet<object> {

    let still = stillImages.get(namespace);
    if (!still) {
        still = new WeakSet();
        stillImages.set(namespace, still);
    }

    return still;
}


// A store over a database that was an image as the data set was made: when it applies nothing and has nothing due,
// the image holds nothing that moves with time.
function learning(store: TimedStore, learnt: () => void): TimedStore {

    let applied = 0;
    return {
        async applyDue(until: Date, limit: number): Promise<AppliedTransition[]> {

            const made = await store.applyDue(until, limit);
            applied += made.length;
            return made;
        },
        async nextDue(): Promise<Date | null> {

            const due = await store.nextDue();
            if (due === null && applied === 0) {
                learnt();
            }

            return due;
        }
    };
}
