import { setTimeout as sleep } from 'node:timers/promises';

import Boom from '@hapi/boom';
import type { Plugin, Request, ResponseToolkit, Server } from '@hapi/hapi';

import { defaultCode, errorBody, failure, toBoom } from '../errors';
import { servicesOf } from '../scope';
import { faultRoutes } from './routes';
import { faultsService, type FaultsApi } from './service';


export { type FaultRuleInput, type FaultRules } from '../data-set/fault-rules';
export { faultSchemas } from './schemas';
export { type FaultsApi } from './service';

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

const pluginName = 'localgate-faults';

declare module '@hapi/hapi' {
    interface RequestApplicationState {
        fault?: FaultMark;
    }

    interface PluginProperties {
        [pluginName]: FaultsApi;
    }
}


/** The fault rules of a server's data sets, as its faults plugin exposes them. */
export function faultsOf(server: Server): FaultsApi {

    return server.plugins[pluginName];
}


/** The faults plugin: each data set's rules acting on its API requests, and the routes that set them. */
export const faultsPlugin: Plugin<void> = {
    name: pluginName,
    register(server) {

        server.expose(faultsService);

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

            const response = request.response;
            if (Boom.isBoom(response)) {
                const boom = toBoom(response);
                mark.status = boom.output.statusCode;
                mark.code = errorBody(boom).code;
            }
            else {
                mark.status = response.statusCode;
                mark.code = null;
            }

            return drop(request, h);
        }, { before: ['localgate-errors'] });

        faultRoutes(server, faultsService);
    }
};


// Closes the connection with no answer: a client sees it reset (an injected request ends aborted, with 499).
function drop(request: Request, h: ResponseToolkit): symbol {

    request.raw.res.destroy();
    return h.abandon;
}
