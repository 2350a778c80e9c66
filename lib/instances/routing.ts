import type { Lifecycle, Request, ResponseToolkit } from '@hapi/hapi';

import { failure } from '../errors';
import type { Scope } from '../scope';
import { liveInstance, type InstanceFinder } from './lookup';
import { always } from '../always';


const prefix = '/i/';

/** The header that runs a request to /v1/... in an instance, as under /i/<id>. */
export const instanceHeaderName = 'X-Localgate-Instance';
const instanceHeader = instanceHeaderName.toLowerCase();


// The paths an instance answers: the API and its health.
function apiPath(path: string): boolean {

    return path.startsWith('/v1/') || path === '/health';
}


/** The instance a path names and the API path within it; null for a path outside every instance. */
export function instancePath(path: string): { id: string; rest: string } | null {

    if (!path.startsWith(prefix)) {
        return null;
    }

    const end = path.indexOf('/', prefix.length);
    return end === -1 ? { id: path.slice(prefix.length), rest: '/' } : { id: path.slice(prefix.length, end), rest: path.slice(end) };
}


/**
 * The onRequest step that finds a request's instance: /i/<id>/v1/... runs the API's own route for /v1/... against
 * that instance, so one set of routes, built once, serves every instance; a client whose base URL is fixed (a browser
 * app) names its instance in a header instead. Anything else runs against the default data set.
 */
export function instanceRouting(instances: InstanceFinder, defaultScope: Scope): Lifecycle.Method {

    return (request: Request, h: ResponseToolkit) => {

        const header = request.headers[instanceHeader] as string | undefined;
        const named = instancePath(request.path);
        if (!named) {
            request.app.scope = header !== undefined && apiPath(request.path) ? liveInstance(instances, header) : defaultScope;
            return h.continue;
        }

        const instance = liveInstance(instances, named.id);
        if (header !== undefined && header !== named.id) {
            throw failure(400, 'instance_mismatch', `The path names instance ${named.id} and the ${instanceHeaderName} header names ${JSON.stringify(header)}: name one instance, in either place`);
        }

        // The query as the client sent it: reading request.url would make hapi parse the whole URL once more.
        const raw = always(request.raw.req.url, 'the request\'s raw URL');
        const query = raw.indexOf('?');
        request.setUrl(query === -1 ? named.rest : named.rest + raw.slice(query));
        // The API's own paths only, as the URL resolves (an escape hapi left, %2%65, resolves as a dot): not the admin
        // routes, the console or the docs.
        if (!apiPath(request.path)) {
            throw failure(404, 'not_found', `Under an instance only the API answers (${instance.basePath}/v1/..., ${instance.basePath}/health)`);
        }

        request.app.scope = instance;
        return h.continue;
    };
}
