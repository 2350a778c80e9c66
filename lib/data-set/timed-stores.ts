import type { Namespace } from '../namespace';
import type { DataSetDatabases } from '../storage/engine';
import type { TimedStores } from './timeline';
import type { TimedStore } from '../transitions';


/**
 * The timed stores of a data set's namespaces as the data set is now: each namespace whose records move with time, over
 * its store (pay's only while pay is ready).
 */
export function timedStoresOf(namespaces: readonly Namespace[], data: () => DataSetDatabases): TimedStores {

    const timed = namespaces.flatMap((namespace) => (namespace.timed ? [{ namespace, hook: namespace.timed }] : []));
    return async () => {

        const stores: TimedStore[] = [];
        const set = data();
        for (const { namespace, hook } of timed) {
            const readiness = await set.readiness(namespace);
            if (readiness.ready) {
                stores.push(hook(readiness.store));
            }
        }

        return stores;
    };
}
