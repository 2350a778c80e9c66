import { setTimeout as sleep } from 'node:timers/promises';

import Boom from '@hapi/boom';
import type { Plugin, Request, ResponseToolkit, Server } from '@hapi/hapi';

import { requireAdmin } from '../auth';
import { defaultCode, errorBody, failure, toBoom } from '../errors';
import { noContent } from '../fields';
import { liveInstance } from '../instances/lookup';
import type { InstanceRegistry } from '../instances/registry';
import { instanceParams } from '../instances/schemas';
import { servicesOf, type Scope } from '../scope';
import { FaultSet, type FaultRuleInput, type FaultRules } from './rules';
import { eventTypesOf } from '../events/model';
import { faultSchemas } from './schemas';


export { type FaultRuleInput, type FaultRules } from './rules';
export { faultSchemas } from './schemas';

/** What a fault did to a request, for the journal and the live log. */
export interface FaultMark {
    id: string;
    // The rule in words (describeRule).
    rule: string;
    // The rule's hits, this request counted.
    hits: number;
    drop: 'before' | 'after' | null;
    // The answer a dropped-after request would have had; unset when the client closed the connection before it.
    status?: number;
    code?: string | null;
}

/** The fault rules of each data set, for the routes and the test kit. */
export interface FaultsApi {
    /** Replaces a data set's rules; the input has passed faultSchemas' faultRulesPayload. */
    set(scope: Scope, input: { seed: number; rules: FaultRuleInput[] }): FaultRules;
    /** A data set's rules with their hits; none set reads as seed 0 and no rules. */
    get(scope: Scope): FaultRules;
    /** Removes a data set's rules. */
    clear(scope: Scope): void;
}

const pluginName = 'localgate-faults';

declare module '@hapi/hapi' {
    interface RequestApplicationState {
        fault?: FaultMark;
    }

    interface PluginProperties {
        [pluginName]: FaultsApi;
    }
}

const tags = ['api', 'instances'];


/** The fault rules of a server's data sets, as its faults plugin exposes them. */
export function faultsOf(server: Server): FaultsApi {

    return server.plugins[pluginName];
}


export const faultsPlugin: Plugin<{ registry: InstanceRegistry }> = {
    name: pluginName,
    register(server, { registry }) {

        // Each data set carries its rules: a deleted instance takes them with it.
        const api: FaultsApi = {
            set(scope, input) {

                const set = new FaultSet(input.seed, input.rules);
                scope.services.faults = set;
                return set.describe();
            },
            get: (scope) => scope.services.faults?.describe() ?? { seed: 0, rules: [] },
            clear(scope) {

                scope.services.faults = null;
            }
        };

        server.expose(api);

        // After the instances plugin has found the request's data set and made its path the API's own.
        server.ext('onRequest', async (request, h) => {

            const set = servicesOf(request).faults;
            if (!set || !request.path.startsWith('/v1/')) {
                return h.continue;
            }

            // A browser sends a request again when a kept-alive connection closes with no answer (Chromium does), so
            // a dropped reply would come back as the answer to a copy. While a rule may drop one, no answer of the
            // data set keeps its connection open, so none of its connections is used again for the request to drop
            // (one kept alive from before the rule is closed by the server's keep-alive timeout).
            if (set.drops) {
                request.raw.res.setHeader('Connection', 'close');
            }

            const decision = set.decide(request.method.toUpperCase(), request.path);
            if (!decision) {
                return h.continue;
            }

            const { rule, latencyMs } = decision;
            request.app.fault = { id: rule.id, rule: rule.description, hits: rule.hits, drop: rule.drop ?? null };
            if (latencyMs) {
                await sleep(latencyMs);
            }

            if (rule.status !== undefined) {
                const boom = failure(rule.status, rule.code ?? defaultCode(rule.status), rule.message ?? `Injected fault: ${rule.description}`);
                if (rule.retry_after !== undefined) {
                    boom.output.headers['Retry-After'] = String(rule.retry_after);
                }

                throw boom;
            }

            return rule.drop === 'before' ? drop(request, h) : h.continue;
        }, { after: ['localgate-instances'] });

        // Before the errors plugin, which ends the step for an error: a failed request's reply is lost too.
        server.ext('onPreResponse', (request, h) => {

            const mark = request.app.fault;
            if (mark?.drop !== 'after') {
                return h.continue;
            }

            const response = request.response!;
            if (Boom.isBoom(response)) {
                const boom = toBoom(response);
                mark.status = boom.output.statusCode;
                mark.code = (errorBody(boom) as { code: string }).code;
            }
            else {
                mark.status = response.statusCode;
                mark.code = null;
            }

            return drop(request, h);
        }, { before: ['localgate-errors'] });

        faultRoutes(server, registry, api);
    }
};


// Closes the connection with no answer: a client sees it reset (an injected request ends aborted, with 499).
function drop(request: Request, h: ResponseToolkit): symbol {

    request.raw.res.destroy();
    return h.abandon;
}


function faultRoutes(server: Server, registry: InstanceRegistry, api: FaultsApi): void {

    const admin = { ext: { onPostAuth: { method: requireAdmin } } };
    const { faultRulesPayload, faultRulesSchema } = faultSchemas(eventTypesOf(server.app.localgate.settings.namespaces));
    const notes = [
        'Admin token required. Rules act on the API paths (/v1/...) of this data set only: never another data set, the admin routes or /health.',
        'Rules are tried in order and at most one acts on a request; after, times and probability let a request through to the next rule.',
        'The same seed and the same requests give the same faults.'
    ].join(' ');

    // The default data set's rules at /_faults, an instance's under /_instances/{instance_id}/faults.
    const targets = [
        { path: '/_faults', scope: (request: Pick<Request, 'app' | 'params'>) => request.app.scope, params: undefined, what: 'the default data set' },
        { path: '/_instances/{instance_id}/faults', scope: (request: Pick<Request, 'app' | 'params'>) => liveInstance(registry, (request.params as { instance_id: string }).instance_id), params: instanceParams, what: 'an instance' }
    ];

    for (const { path, scope, params, what } of targets) {
        server.route<{ Payload: { seed: number; rules: FaultRuleInput[] } }>({
            method: 'PUT',
            path,
            options: {
                description: `Replace the fault rules of ${what}`,
                notes,
                tags,
                ...admin,
                validate: { params, payload: faultRulesPayload },
                response: { status: { 200: faultRulesSchema } },
                handler: (request) => api.set(scope(request), request.payload)
            }
        });

        server.route({
            method: 'GET',
            path,
            options: {
                description: `Read the fault rules of ${what}, with the hits of each`,
                tags,
                ...admin,
                validate: { params },
                response: { status: { 200: faultRulesSchema } },
                handler: (request) => api.get(scope(request))
            }
        });

        server.route({
            method: 'DELETE',
            path,
            options: {
                description: `Remove the fault rules of ${what}`,
                tags,
                ...admin,
                validate: { params },
                response: { status: { 204: noContent } },
                handler(request, h) {

                    api.clear(scope(request));
                    return h.response().code(204);
                }
            }
        });
    }
}
