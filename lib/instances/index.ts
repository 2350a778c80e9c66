import type { Plugin } from '@hapi/hapi';

import type { Scope } from '../scope';
import type { InstanceRegistry } from './registry';
import { defaultClockRoutes, defaultExportRoute, instanceRoutes } from './routes';
import { instanceRouting } from './routing';


// Instances: the registry (registry.ts) with its pool (pool.ts), one instance (instance.ts), the one lookup that finds
// an instance or answers 404 (lookup.ts), how a request reaches its instance (routing.ts), and the admin routes (routes.ts).

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
        instanceRoutes(server, registry, maxFixtureBytes);
        defaultExportRoute(server, defaultScope);
        defaultClockRoutes(server, defaultScope);
    }
};
