import type { Plugin } from '@hapi/hapi';

import type { Scope } from '../scope';
import { clockRoutes } from './clock-routes';
import { liveInstance } from './lookup';
import type { InstanceRegistry } from './registry';
import { defaultExportRoute, instanceRoutes } from './routes';
import { instanceRouting } from './routing';
import type { ScopedData } from './scoped-routes';


// Instances: the registry (registry.ts) with its pool (pool.ts), one instance (instance.ts), the one lookup that finds
// an instance or answers 404 (lookup.ts), how a request reaches its instance (routing.ts), the admin routes (routes.ts),
// the helper with which admin features declare their default-data-set and per-instance routes once (scoped-routes.ts),
// and the clock's routes (clock-routes.ts over clock.ts).

export type { Instance } from './instance';
export { InstanceRegistry } from './registry';
export { instanceHeaderName, instancePath } from './routing';

export interface InstancesOptions {
    registry: InstanceRegistry;
    defaultScope: Scope;
    /** The largest POST /_instances body: a fixture can be far larger than the API's own bodies. */
    maxFixtureBytes: number;
}


export const instancesPlugin: Plugin<InstancesOptions> = {
    name: 'localgate-instances',
    register(server, { registry, defaultScope, maxFixtureBytes }) {

        server.ext('onRequest', instanceRouting(registry, defaultScope));
        server.ext('onPostStop', () => registry.close());
        // What a scoped admin route of an instance acts on: the features reach instances through this alone.
        server.decorate('request', 'instanceNamed', (id: string): ScopedData => {

            const instance = liveInstance(registry, id);
            return { scope: instance, describe: () => instance.describe(registry.idleTtlMs), made: () => instance.made(), moveClock: (to) => instance.moveClock(to) };
        });
        instanceRoutes(server, registry, maxFixtureBytes);
        defaultExportRoute(server, defaultScope);
        clockRoutes(server);
    }
};
