import type { Plugin } from '@hapi/hapi';

import { routes } from './routes';


export const weatherPlugin: Plugin<void> = {
    name: 'localgate-weather',
    register(server) {

        server.route(routes);
    }
};
