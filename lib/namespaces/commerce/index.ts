import Path from 'node:path';

import type { Plugin } from '@hapi/hapi';

import { demoDataRoot, migrationsRoot } from '../../paths';
import { SqliteCommerceStore } from './sqlite';
import type { Namespace } from '../../namespace';
import { commerceEventTypes } from './events';
import { commerceFixture } from './fixture';
import { commerceRoutes } from './routes';
import type { CommerceStore } from './store';


export const commercePlugin: Plugin<void> = {
    name: 'localgate-commerce',
    register(server) {

        commerceRoutes(server, commerceNamespace);
    }
};

export const commerceNamespace: Namespace<CommerceStore> = {
    name: 'commerce',
    description: 'Local businesses, products, offers, inquiries and scam reports',
    plugin: commercePlugin,
    events: { migrations: { 3: 'events', 4: 'endpoint_state' } },
    eventTypes: commerceEventTypes,
    readiness: 'migrated',
    migrations: migrationsRoot,
    fixture: { collections: commerceFixture, demo: Path.join(demoDataRoot, 'commerce.json') },
    stores: {
        sqlite: (db, context) => new SqliteCommerceStore(db, context),
        postgres: async () => {

            const { PgCommerceStore } = await import('./postgres');
            return (db, context) => new PgCommerceStore(db, context);
        }
    },
    liveBodies: true,
    warmUp: (store) => store.listProducts({}, { limit: 20, offset: 0 })
};
