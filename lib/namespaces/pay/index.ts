import type { Plugin } from '@hapi/hapi';

import { paySchema } from '../../storage/migrations';
import { ledgerPosting, ledgerStatements } from './ledger-sql';
import { SqlitePayStore } from './sqlite';
import type { Namespace } from '../../namespace';
import { payEventTypes, payTransitions } from './events';
import { byTimeOrder, payFixture } from './fixture';
import { payRoutes } from './routes';
import type { PayStore } from './store';


export const payPlugin: Plugin<void> = {
    name: 'localgate-pay',
    register(server) {

        payRoutes(server, payNamespace);
    }
};

// Pay is provisioned (PAY_DB_URL and its keys), not placed by the settings: its store is there once its readiness
// says so, and its migrations are storage's paySchema, which provisioning reads without the descriptor. A fixture's
// transactions are posted to the ledger as the API posts them. Its success bodies (wallets, the ledger) stay off the
// live log's shared screen. Its pending moves settle with time.
export const payNamespace: Namespace<PayStore> = {
    name: 'pay',
    description: 'Wallets, token types and the fiat gateway: data endpoints answer 501 until pay is provisioned',
    plugin: payPlugin,
    events: paySchema.events,
    eventTypes: payEventTypes,
    transitions: payTransitions,
    readiness: 'provisioned',
    migrations: paySchema.migrations,
    fixture: { collections: payFixture, posting: { collection: 'transactions', order: byTimeOrder, statements: ledgerStatements, steps: ledgerPosting } },
    stores: {
        sqlite: (db, context) => new SqlitePayStore(db, context),
        postgres: async () => {

            const { PgPayStore } = await import('./postgres');
            return (db, context) => new PgPayStore(db, context);
        }
    },
    liveBodies: false,
    timed: (store) => store
};
