import type { Plugin, Request, Server } from '@hapi/hapi';

import { requireAdmin } from '../auth';
import { noContent } from '../fields';
import { liveInstance } from '../instances/lookup';
import type { InstanceRegistry } from '../instances/registry';
import { instanceParams } from '../instances/schemas';
import { listResponse, type Page } from '../lists';
import { safelyPerRequest } from '../safe-listener';
import { servicesOf, type Scope } from '../scope';
import { recordOf, type JournalEntry, type Recorded } from './entry';
import type { Journal } from './journal';
import { maxMatchingSteps } from './json-match';
import { nearMissFinder, type NearMiss } from './near-miss';
import { compilePattern } from './pattern-compiler';
import { requestPatternSchema, type RequestPattern } from './pattern-schema';
import { journalCountSchema, journalFindSchema, journalListQuery, journalListSchema } from './schemas';


export { type JournalEntry } from './entry';
export { requestPatternSchema, type RequestPattern } from './pattern-schema';

export interface JournalOptions {
    registry: InstanceRegistry;
    // Whether requests are recorded (JOURNAL_SIZE above 0); each data set's journal holds them.
    record: boolean;
    bodyBytes: number;
    // Values that never reach an entry: the server's token secret and pay keys.
    secrets: string[];
}

/** The request journal of each data set, for the routes and the test kit. */
export interface JournalApi {
    /** A data set's entries, oldest first. */
    list(scope: Scope): JournalEntry[];
    /** The entries a pattern (which has passed requestPatternSchema) matches, oldest first. */
    find(scope: Scope, pattern: RequestPattern): JournalEntry[];
    /** Forgets a data set's entries. */
    clear(scope: Scope): void;
}

const pluginName = 'localgate-journal';

declare module '@hapi/hapi' {
    interface RequestApplicationState {
        arrival?: number;
        journal?: Journal;
    }

    interface PluginProperties {
        [pluginName]: JournalApi;
    }
}

const tags = ['api', 'instances'];


/** The request journals of a server's data sets, as its journal plugin exposes them. */
export function journalOf(server: Server): JournalApi {

    return server.plugins[pluginName];
}


export const journalPlugin: Plugin<JournalOptions> = {
    name: pluginName,
    register(server, settings) {

        const records = (scope: Scope): readonly Recorded[] => scope.services.journal.list();
        const api: JournalApi = {
            list: (scope) => records(scope).map(({ entry }) => entry),
            find(scope, pattern) {

                const matches = compilePattern(pattern);
                return records(scope).filter(matches).map(({ entry }) => entry);
            },
            clear: (scope) => scope.services.journal.clear()
        };

        server.expose(api);
        if (settings.record) {
            recordRequests(server, settings);
        }

        // The routes read the records, so that a page builds the entries it shows and parses no other body.
        journalRoutes(server, settings.registry, api, records);
    }
};


function recordRequests(server: Server, settings: JournalOptions): void {

    const nearMiss = nearMissFinder(server);
    let arrivals = 0;

    // As the request arrives, while its data set is live: its place in the journal is its arrival.
    server.ext('onRequest', (request, h) => {

        if (request.path.startsWith('/v1/')) {
            request.app.arrival = ++arrivals;
            request.app.journal = servicesOf(request).journal;
        }

        return h.continue;
    }, { after: ['localgate-instances'] });

    // A failure here is logged with the request's id: thrown into hapi's response event, it would end the process.
    server.events.on('response', safelyPerRequest('journal', (request: Request) => {

        const journal = request.app.journal;
        if (!journal) {
            return;
        }

        let route: string | null = request.route.path;
        let near: NearMiss | null = null;
        if ((request.route.method as string) === '_special') {
            // A fault that answered as the request arrived left it unrouted: the route it would have taken is looked
            // up here, and it is no near miss.
            const found = request.app.fault ? request.server.match(request.method, request.path) : null;
            route = found?.path ?? null;
            near = request.app.fault ? null : nearMiss(request.method.toUpperCase(), request.path);
        }

        journal.add(recordOf(request, settings, route, near));
    }));
}


function journalRoutes(server: Server, registry: InstanceRegistry, api: JournalApi, records: (scope: Scope) => readonly Recorded[]): void {

    const admin = { ext: { onPostAuth: { method: requireAdmin } } };
    const patternNotes = `The body is a request pattern in WireMock's JSON: method (or ANY); url, urlPath, urlPathPattern or urlPattern; headers and queryParameters with equalTo, contains, matches or absent; bodyPatterns with equalToJson (ignoreExtraElements, ignoreArrayOrder), matchesJsonPath (an expression, or {expression} with a sub-matcher) or contains. An empty body matches every request. Regular expressions run on RE2 (no backreferences or lookaround, at most 200 compiled instructions); a JSONPath holds one recursive descent at most, unions of at most 16 branches together, and no function calls. Pairing array items under both ignoreArrayOrder and ignoreExtraElements spends at most ${maxMatchingSteps} comparison steps a request, else a 400.`;

    const targets = [
        { path: '/_requests', scope: (request: Pick<Request, 'app' | 'params'>) => request.app.scope, params: undefined, what: 'the default data set' },
        { path: '/_instances/{instance_id}/requests', scope: (request: Pick<Request, 'app' | 'params'>) => liveInstance(registry, (request.params as { instance_id: string }).instance_id), params: instanceParams, what: 'an instance' }
    ];

    for (const { path, scope, params, what } of targets) {
        server.route<{ Query: Page & { unmatched: boolean } }>({
            method: 'GET',
            path,
            options: {
                description: `The requests ${what} received`,
                notes: 'Admin token required. In arrival order, at most JOURNAL_SIZE kept (the oldest dropped). unmatched=true lists only requests no route took (404, 405), each with its near_miss.',
                tags,
                ...admin,
                validate: { params, query: journalListQuery },
                response: { status: { 200: journalListSchema } },
                handler(request, h) {

                    const { limit, offset, unmatched } = request.query;
                    const kept = records(scope(request)).filter(({ head }) => !unmatched || head.near_miss !== null);
                    return listResponse(h, { data: kept.slice(offset, offset + limit).map(({ entry }) => entry), total: kept.length });
                }
            }
        });

        server.route<{ Payload: RequestPattern }>({
            method: 'POST',
            path: `${path}/count`,
            options: {
                description: `Count the requests ${what} received that match a pattern`,
                notes: `Admin token required. ${patternNotes}`,
                tags,
                ...admin,
                validate: { params, payload: requestPatternSchema },
                response: { status: { 200: journalCountSchema } },
                handler: (request) => ({ count: api.find(scope(request), request.payload).length })
            }
        });

        server.route<{ Payload: RequestPattern }>({
            method: 'POST',
            path: `${path}/find`,
            options: {
                description: `Find the requests ${what} received that match a pattern`,
                notes: `Admin token required. ${patternNotes}`,
                tags,
                ...admin,
                validate: { params, payload: requestPatternSchema },
                response: { status: { 200: journalFindSchema } },
                handler: (request) => ({ requests: api.find(scope(request), request.payload) })
            }
        });

        server.route({
            method: 'DELETE',
            path,
            options: {
                description: `Forget the requests ${what} received`,
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
