import type { Plugin } from '@hapi/hapi';
import Joi from 'joi';

import { dataOf } from './scope';
import { engineNames } from './storage/engines';

const namespaceHealth = Joi.object({
    state: Joi.string().valid('ready', 'unavailable', 'unconfigured', 'configured').required().label('NamespaceState'),
    engine: Joi.string().valid(...engineNames).required().label('NamespaceEngine'),
    schema_version: Joi.number().integer().min(0).allow(null).required(),
    storage: Joi.string().valid('file', 'memory', 'server').required().label('NamespaceStorage')
}).label('NamespaceHealth');


/** The /health body of a server's namespaces: each by name, so that a typed client reads namespaces.commerce. */
export function healthSchema(namespaces: readonly string[]): Joi.ObjectSchema {

    return Joi.object({
        status: Joi.string().valid('ok', 'degraded').required().label('HealthStatus'),
        namespaces: Joi.object(Object.fromEntries(namespaces.map((namespace) => [namespace, namespaceHealth.required()]))).required().label('NamespacesHealth')
    }).label('Health');
}


export const healthPlugin: Plugin<void> = {
    name: 'localgate-health',
    register(server) {

        const schema = healthSchema(server.app.localgate.settings.namespaces.map((namespace) => namespace.name));
        server.route({
            method: 'GET',
            path: '/health',
            options: {
                auth: false,
                description: 'Each namespace\'s database state and schema version',
                notes: 'Under an instance\'s base path, the instance\'s databases.',
                tags: ['api', 'health'],
                response: { status: { 200: schema, 503: schema } },
                async handler(request, h) {

                    const namespaces = await dataOf(request).health();
                    const healthy = Object.values(namespaces).every((entry) => entry.state !== 'unavailable');
                    return h.response({ status: healthy ? 'ok' : 'degraded', namespaces }).code(healthy ? 200 : 503);
                }
            }
        });
    }
};
