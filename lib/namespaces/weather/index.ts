import type { Plugin } from '@hapi/hapi';

import { migrationsRoot } from '../../paths';
import type { Namespace } from '../../namespace';
import { routes } from './routes';


export const weatherPlugin: Plugin<void> = {
    name: 'localgate-weather',
    register(server) {

        server.route(routes);
    }
};

// Weather keeps no records yet: its database holds only its migrations' record.
export const weatherNamespace: Namespace = {
    name: 'weather',
    description: 'Reserved: forecasts answer 501 until a weather backend is provisioned',
    plugin: weatherPlugin,
    readiness: 'migrated',
    migrations: migrationsRoot,
    liveBodies: true
};
