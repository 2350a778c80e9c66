import type { Plugin } from '@hapi/hapi';

import type { PayReadiness } from './readiness';
import { payRoutes } from './routes';


export interface PayPluginOptions {
    readiness: PayReadiness;
}


export const payPlugin: Plugin<PayPluginOptions> = {
    name: 'localgate-pay',
    register(server, options) {

        server.route(payRoutes(options.readiness));
    }
};
