import type { Plugin, Request, Server } from '@hapi/hapi';

import { safelyPerRequest } from '../safe-listener';
import { servicesOf } from '../scope';
import { recordOf, type NearMiss } from '../data-set/journal-entry';
import type { Journal } from '../data-set/journal';
import { nearMissFinder } from './near-miss';
import { journalRoutes } from './routes';
import { journalService, type JournalApi } from './service';


export { type JournalEntry } from '../data-set/journal-entry';
export { jsonPath, requestPatternSchema, type RequestPattern } from './pattern-schema';
export { type JournalApi } from './service';

export interface JournalOptions {
    // Whether requests are recorded (JOURNAL_SIZE above 0); each data set's journal holds them.
    record: boolean;
    bodyBytes: number;
    // Values that never reach an entry: the server's token secret and pay keys.
    secrets: string[];
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


/** The request journals of a server's data sets, as its journal plugin exposes them. */
export function journalOf(server: Server): JournalApi {

    return server.plugins[pluginName];
}


/** The journal plugin: each data set's requests recorded as they are answered, and the routes that read them. */
export const journalPlugin: Plugin<JournalOptions> = {
    name: pluginName,
    register(server, settings) {

        server.expose(journalService);
        if (settings.record) {
            recordRequests(server, settings);
        }

        journalRoutes(server, journalService);
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
