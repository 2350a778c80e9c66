import type { Plugin } from '@hapi/hapi';
import Joi from 'joi';

import { placedNamespaces } from './config';
import { dataOf } from './scope';
import { engineNames } from './storage/engines';

const namespaceHealth = Joi.object({
    state: Joi.string().valid('ready', 'unavailable', 'unconfigured', 'configured').required().label('NamespaceState'),
    engine: Joi.string().valid(...engineNames).required().label('NamespaceEngine'),
    schema_version: Joi.number().integer().min(0).allow(null).required(),
    storage: Joi.string().valid('file', 'memory', 'server').required().label('NamespaceStorage')
}).label('NamespaceHealth');

// Every namespace by name, so that a typed client reads namespaces.commerce.
const namespacesHealth = Joi.object(Object.fromEntries([...placedNamespaces, 'pay'].map((namespace) => [namespace, namespaceHealth.required()]))).label('NamespacesHealth');

export const healthSchema = Joi.object({
    status: Joi.string().valid('ok', 'degraded').required().label('HealthStatus'),
    namespaces: namespacesHealth.required()
}).label('Health');


export const healthPlugin: Plugin<void> = {
    name: 'localgate-health',
    register(server) {

        server.route({
            method: 'GET',
            path: '/health',
            options: {
                auth: false,
                description: 'Each namespace\'s database state and schema version',
                notes: 'Under an instance\'s base path, the instance\'s databases.',
                tags: ['api', 'health'],
                response: { status: { 200: healthSchema, 503: healthSchema } },
                async handler(request, h) {

                    const namespaces = await dataOf(request).health();
                    const healthy = Object.values(namespaces).every((entry) => entry.state !== 'unavailable');
                    return h.response({ status: healthy ? 'ok' : 'degraded', namespaces }).code(healthy ? 200 : 503);
                }
            }
        });
    }
};
