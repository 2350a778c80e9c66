import type { Server } from '@hapi/hapi';

import { noContent } from '../fields';
import { scopedRoutes, scopeOf } from '../instances/scoped-routes';
import type { FaultRuleInput } from '../data-set/fault-rules';
import { eventTypesOf } from '../events';
import { faultSchemas } from './schemas';
import type { FaultsApi } from './service';


const notes = [
    'Admin token required. Rules act on the API paths (/v1/...) of this data set only: never another data set, the admin routes or /health.',
    'Rules are tried in order and at most one acts on a request; after, times and probability let a request through to the next rule.',
    'The same seed and the same requests give the same faults.'
].join(' ');


/** The default data set's rules at /_faults, an instance's under /_instances/{instance_id}/faults. */
export function faultRoutes(server: Server, api: FaultsApi): void {

    const { faultRulesPayload, faultRulesSchema } = faultSchemas(eventTypesOf(server.app.localgate.settings.namespaces));
    scopedRoutes(server, ({ path, what, route }) => {

        route<{ Payload: { seed: number; rules: FaultRuleInput[] } }>({
            method: 'PUT',
            path: path('faults'),
            options: {
                description: `Replace the fault rules of ${what}`,
                notes,
                plugins: { localgate: { errors: { 400: 'a latency_ms pair [min, max] whose min is above its max (code validation_failed naming the rule\'s latency_ms)' } } },
                validate: { payload: faultRulesPayload },
                response: { status: { 200: faultRulesSchema } },
                handler: (request) => api.set(scopeOf(request), request.payload)
            }
        });

        route({
            method: 'GET',
            path: path('faults'),
            options: {
                description: `Read the fault rules of ${what}, with the hits of each`,
                response: { status: { 200: faultRulesSchema } },
                handler: (request) => api.get(scopeOf(request))
            }
        });

        route({
            method: 'DELETE',
            path: path('faults'),
            options: {
                description: `Remove the fault rules of ${what}`,
                response: { status: { 204: noContent } },
                handler(request, h) {

                    api.clear(scopeOf(request));
                    return h.response().code(204);
                }
            }
        });
    });
}
