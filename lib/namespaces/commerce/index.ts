import type { Plugin } from '@hapi/hapi';

import { commerceRoutes } from './routes';


export const commercePlugin: Plugin<void> = {
    name: 'localgate-commerce',
    register(server) {

        commerceRoutes(server);
    }
};
