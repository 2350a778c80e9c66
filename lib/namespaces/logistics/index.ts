import type { Plugin } from '@hapi/hapi';
import Sqlite from 'better-sqlite3';
import Joi from 'joi';

import type { Database } from '../../db';
import { logisticsRoutes } from './routes';
import { LogisticsStore } from './store';


export interface LogisticsPluginOptions {
    db: Database;
}


const optionsSchema = Joi.object<LogisticsPluginOptions>({
    db: Joi.object().instance(Sqlite, 'better-sqlite3 Database').required()
});


export const logisticsPlugin: Plugin<LogisticsPluginOptions> = {
    name: 'localgate-logistics',
    register(server, options) {

        const settings: LogisticsPluginOptions = Joi.attempt(options, optionsSchema, 'Invalid logistics plugin options');
        server.route(logisticsRoutes(new LogisticsStore(settings.db)));
    }
};
