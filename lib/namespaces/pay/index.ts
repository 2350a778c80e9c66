import type { Plugin } from '@hapi/hapi';

import { migrationsRoot } from '../../paths';
import type { Namespace } from '../namespace';
import { payFixture } from './fixture';
import { payRoutes } from './routes';
import type { PayStore } from './store';


export const payPlugin: Plugin<void> = {
    name: 'localgate-pay',
    register(server) {

        payRoutes(server);
    }
};

// Pay's store comes with its readiness (PAY_DB_URL and its keys), not from a database the settings place. Its
// success bodies (wallets, the ledger) stay off the live log's shared screen. Its pending moves settle with time.
export const payNamespace: Namespace<PayStore> = {
    name: 'pay',
    description: 'Wallets, token types and the fiat gateway: data endpoints answer 501 until pay is provisioned',
    plugin: payPlugin,
    readiness: 'provisioned',
    migrations: migrationsRoot,
    fixture: { collections: payFixture },
    liveBodies: false,
    timed: (store) => store
};
