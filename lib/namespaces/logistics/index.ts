import Path from 'node:path';

import type { Plugin } from '@hapi/hapi';

import { demoDataRoot, migrationsRoot } from '../../paths';
import { SqliteLogisticsStore } from './sqlite';
import type { Namespace } from '../../namespace';
import { logisticsEventTypes, logisticsTransitions } from './events';
import { logisticsFixture } from './fixture';
import { logisticsRoutes } from './routes';
import type { LogisticsStore } from './store';


export const logisticsPlugin: Plugin<void> = {
    name: 'localgate-logistics',
    register(server) {

        logisticsRoutes(server, logisticsNamespace);
    }
};

export const logisticsNamespace: Namespace<LogisticsStore> = {
    name: 'logistics',
    description: 'Vehicles, bookings and pickup and drop-off locations',
    plugin: logisticsPlugin,
    events: { migrations: { 4: 'events', 6: 'endpoint_state' } },
    eventTypes: logisticsEventTypes,
    transitions: logisticsTransitions,
    readiness: 'migrated',
    migrations: migrationsRoot,
    fixture: { collections: logisticsFixture, demo: Path.join(demoDataRoot, 'logistics.json') },
    stores: {
        sqlite: (db, context) => new SqliteLogisticsStore(db, context),
        postgres: async () => {

            const { PgLogisticsStore } = await import('./postgres');
            return (db, context) => new PgLogisticsStore(db, context);
        }
    },
    liveBodies: true,
    timed: (store) => store,
    warmUp: (store) => store.listVehicles({ limit: 20, offset: 0 })
};
