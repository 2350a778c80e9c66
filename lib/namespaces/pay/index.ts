import type { Plugin } from '@hapi/hapi';
import Joi from 'joi';

import { PayReadiness } from './readiness';
import { payRoutes } from './routes';


export interface PayPluginOptions {
    readiness: PayReadiness;
}


const optionsSchema = Joi.object<PayPluginOptions>({
    readiness: Joi.object().instance(PayReadiness, 'PayReadiness').required()
});


export const payPlugin: Plugin<PayPluginOptions> = {
    name: 'localgate-pay',
    register(server, options) {

        const settings: PayPluginOptions = Joi.attempt(options, optionsSchema, 'Invalid pay plugin options');
        server.route(payRoutes(settings.readiness));
    }
};
