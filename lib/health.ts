import type { Plugin } from '@hapi/hapi';
import Joi from 'joi';

import { schemaVersion, type Database } from './db';
import type { PayReadiness } from './namespaces/pay/readiness';


export interface HealthOptions {
    databases: Record<string, Database>;
    pay: PayReadiness;
    storage: 'file' | 'memory';
}

const namespaceHealth = Joi.object({
    state: Joi.string().valid('ready', 'unavailable', 'unconfigured', 'configured').required().label('NamespaceState'),
    schema_version: Joi.number().integer().min(0).allow(null).required(),
    storage: Joi.string().valid('file', 'memory').required().label('NamespaceStorage')
}).label('NamespaceHealth');

// Every namespace by name, so that a typed client reads namespaces.commerce.
const namespacesHealth = Joi.object({
    commerce: namespaceHealth.required(),
    logistics: namespaceHealth.required(),
    weather: namespaceHealth.required(),
    pay: namespaceHealth.required()
}).label('NamespacesHealth');

export const healthSchema = Joi.object({
    status: Joi.string().valid('ok', 'degraded').required().label('HealthStatus'),
    namespaces: namespacesHealth.required()
}).label('Health');


function databaseHealth(db: Database): { state: 'ready' | 'unavailable'; schema_version: number | null } {

    try {
        return { state: 'ready', schema_version: schemaVersion(db) };
    }
    catch {
        return { state: 'unavailable', schema_version: null };
    }
}


export const healthPlugin: Plugin<HealthOptions> = {
    name: 'localgate-health',
    register(server, options) {

        server.route({
            method: 'GET',
            path: '/health',
            options: {
                auth: false,
                description: 'Each namespace\'s database state and schema version',
                tags: ['api', 'health'],
                response: { status: { 200: healthSchema, 503: healthSchema } },
                handler(request, h) {

                    const namespaces: Record<string, object> = {};
                    for (const [name, db] of Object.entries(options.databases)) {
                        namespaces[name] = { ...databaseHealth(db), storage: options.storage };
                    }

                    const pay = options.pay.status();
                    namespaces.pay = {
                        state: pay.schema_ready ? 'ready' : (pay.configured ? 'configured' : 'unconfigured'),
                        schema_version: options.pay.schemaVersion(),
                        storage: 'file'
                    };

                    const healthy = Object.values(namespaces).every((entry) => (entry as { state: string }).state !== 'unavailable');
                    return h.response({ status: healthy ? 'ok' : 'degraded', namespaces }).code(healthy ? 200 : 503);
                }
            }
        });
    }
};
