import type { Plugin } from '@hapi/hapi';

import { logisticsRoutes } from './routes';


export const logisticsPlugin: Plugin<void> = {
    name: 'localgate-logistics',
    register(server) {

        logisticsRoutes(server);
    }
};
