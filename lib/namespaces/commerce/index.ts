import type { Plugin } from '@hapi/hapi';

import type { Database } from '../../db';
import { commerceRoutes } from './routes';
import { CommerceStore } from './store';


export interface CommercePluginOptions {
    db: Database;
}


export const commercePlugin: Plugin<CommercePluginOptions> = {
    name: 'localgate-commerce',
    register(server, options) {

        server.route(commerceRoutes(new CommerceStore(options.db)));
    }
};
