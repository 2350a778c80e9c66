import type { Plugin } from '@hapi/hapi';
import Sqlite from 'better-sqlite3';
import Joi from 'joi';

import type { Database } from '../../db';
import { commerceRoutes } from './routes';
import { CommerceStore } from './store';


export interface CommercePluginOptions {
    db: Database;
}


const optionsSchema = Joi.object<CommercePluginOptions>({
    db: Joi.object().instance(Sqlite, 'better-sqlite3 Database').required()
});


export const commercePlugin: Plugin<CommercePluginOptions> = {
    name: 'localgate-commerce',
    register(server, options) {

        const settings: CommercePluginOptions = Joi.attempt(options, optionsSchema, 'Invalid commerce plugin options');
        server.route(commerceRoutes(new CommerceStore(settings.db)));
    }
};
