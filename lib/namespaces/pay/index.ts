import type { Plugin } from '@hapi/hapi';

import { payRoutes } from './routes';


export const payPlugin: Plugin<void> = {
    name: 'localgate-pay',
    register(server) {

        payRoutes(server);
    }
};
