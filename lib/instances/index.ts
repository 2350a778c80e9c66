import type { Plugin, Server } from '@hapi/hapi';

import { requireAdmin } from '../auth';
import { noContent } from '../fields';
import { failure } from '../errors';
import { FixtureError } from '../fixtures';
import { listResponse, type Page } from '../lists';
import type { Scope } from '../scope';
import { instanceGone, instanceOptions, InstanceRegistry, type Instance, type InstanceRecord, type NewInstance } from './registry';
import { clockSchema, durationMs, exportSchema, instanceListQuery, instanceListSchema, instanceParams, instanceSchema, newInstanceSchema, restoreSchema, snapshotSchema } from './schemas';


export { InstanceRegistry, type Instance } from './registry';

export interface InstancesOptions {
    registry: InstanceRegistry;
    defaultScope: Scope;
    /** The largest POST /_instances body: a fixture can be far larger than the API's own bodies. */
    maxFixtureBytes: number;
}

const prefix = '/i/';


// Made before routing too (an unknown instance in the path), where only an error made here keeps its own body.
function instanceNotFound(id: string): Error {

    return failure(404, 'instance_not_found', instanceGone(id).message);
}

const tags = ['api', 'instances'];

// What joi leaves in the request once it has validated and converted it.
type InstanceParams = { instance_id: string };



/** The header that runs a request to /v1/... in an instance, as under /i/<id>. */
export const instanceHeaderName = 'X-Localgate-Instance';
const instanceHeader = instanceHeaderName.toLowerCase();


// The paths an instance answers: the API and its health.
function apiPath(path: string): boolean {

    return path.startsWith('/v1/') || path === '/health';
}


// The instance a header names; unknown is the same 404 as an unknown base path.
function headerInstance(registry: InstanceRegistry, id: string): Instance {

    const instance = registry.find(id);
    if (!instance) {
        throw instanceNotFound(id);
    }

    return instance;
}


/** The instance a path names and the API path within it; null for a path outside every instance. */
export function instancePath(path: string): { id: string; rest: string } | null {

    if (!path.startsWith(prefix)) {
        return null;
    }

    const end = path.indexOf('/', prefix.length);
    return end === -1 ? { id: path.slice(prefix.length), rest: '/' } : { id: path.slice(prefix.length, end), rest: path.slice(end) };
}


export const instancesPlugin: Plugin<InstancesOptions> = {
    name: 'localgate-instances',
    register(server, { registry, defaultScope, maxFixtureBytes }) {

        // How a request finds its instance: /i/<id>/v1/... runs the API's own route for /v1/... against that
        // instance, so one set of routes, built once, serves every instance.
        server.ext('onRequest', (request, h) => {

            const header = request.headers[instanceHeader] as string | undefined;
            const named = instancePath(request.path);
            if (!named) {
                // A client whose base URL is fixed (a browser app) names its instance in a header instead of the path.
                request.app.scope = header !== undefined && apiPath(request.path) ? headerInstance(registry, header) : defaultScope;
                return h.continue;
            }

            const instance = registry.find(named.id);
            if (!instance) {
                throw instanceNotFound(named.id);
            }

            if (header !== undefined && header !== named.id) {
                throw failure(400, 'instance_mismatch', `The path names instance ${named.id} and the ${instanceHeaderName} header names ${JSON.stringify(header)}: name one instance, in either place`);
            }

            // The API's own paths only: not the admin routes, the console or the docs.
            if (!apiPath(named.rest)) {
                throw failure(404, 'not_found', `Under an instance only the API answers (${instance.basePath}/v1/..., ${instance.basePath}/health)`);
            }

            // The query as the client sent it: reading request.url would make hapi parse the whole URL once more.
            const raw = request.raw.req.url!;
            const query = raw.indexOf('?');
            request.app.scope = instance;
            request.setUrl(query === -1 ? named.rest : named.rest + raw.slice(query));
            return h.continue;
        });

        server.ext('onPostStop', () => registry.close());
        instanceRoutes(server, registry, maxFixtureBytes);
        defaultExportRoute(server, defaultScope);
    }
};


// The default data set's records as a fixture file: what `localgate export` writes.
function defaultExportRoute(server: Server, defaultScope: Scope): void {

    server.route({
        method: 'GET',
        path: '/_export',
        options: {
            description: 'Export the default data set as a fixture file',
            notes: [
                'Admin token required. Every record of every collection of the default data set, as `npx localgate export` writes it, opened by',
                '{"localgate": {"format": 1, "migrations": {...}}}. SEED=<file>, `npx localgate seed --file` and POST /_instances {"fixture": <file>} load it.'
            ].join(' '),
            tags,
            ext: { onPostAuth: { method: requireAdmin } },
            response: { status: { 200: exportSchema } },
            async handler(_request, h) {

                return h.response(await defaultScope.data.exportRecords()).header('content-disposition', 'attachment; filename="localgate.json"');
            }
        }
    });
}


function instanceRoutes(server: Server, registry: InstanceRegistry, maxFixtureBytes: number): void {

    const describe = (instance: Instance): InstanceRecord => instance.describe(registry.idleTtlMs);
    const live = (request: { params: InstanceParams }): Instance => {

        const id = request.params.instance_id;
        const instance = registry.find(id);
        if (!instance) {
            throw instanceNotFound(id);
        }

        return instance;
    };

    // Right after authentication, so that a token without the role learns nothing of the body's rules; the document
    // shows a 403 on every route with this step.
    const admin = { ext: { onPostAuth: { method: requireAdmin } } };

    // One by one: hapi types each route's request by its own query, params and payload.
    server.route<{ Payload: NewInstance }>({
        method: 'POST',
        path: '/_instances',
        options: {
            description: 'Make an isolated instance of the API',
            notes: [
                'Admin token required. The instance answers every endpoint under its base_path (/i/<id>/v1/...), with its own data, clock and ids.',
                'It lives in memory and expires after INSTANCE_IDLE_TTL without a request; MAX_INSTANCES caps how many are live (429 instance_limit_reached).',
                'A fixture record that breaks a rule is a 400 invalid_fixture whose details name the namespace, collection, index and field; nothing is made.',
                'With from, the instance is a fork: a copy of that live instance as it is now (an unknown one is a 422 instance_not_found).',
                'A fixture exported by GET /_instances/{instance_id}/export loads back as it is; its clock and id counter are taken unless clock or ids is set. A file of a newer format, or from a newer schema, is a 400 invalid_fixture that says so.'
            ].join(' '),
            tags,
            ...admin,
            plugins: { localgate: { errors: [422, 429] } },
            payload: { maxBytes: maxFixtureBytes },
            validate: { payload: newInstanceSchema },
            response: { status: { 201: instanceSchema } },
            handler(request, h) {

                const instance = createInstance(registry, request.payload);
                return h.response(describe(instance)).code(201).location(`/_instances/${instance.id}`);
            }
        }
    });

    server.route<{ Params: InstanceParams }>({
        method: 'GET',
        path: '/_instances/{instance_id}/export',
        options: {
            description: 'Export an instance\'s whole state as a fixture file',
            notes: [
                'Admin token required. Every record of every collection the API shows, with ids and created_at, in the API\'s shape, opened by',
                '{"localgate": {"format": 1, "migrations": {...}, "instance": {"clock", "ids", "id_counter"}}}.',
                'POST /_instances {"seed": "none", "fixture": <file>} and `npx localgate seed --file` load it back.'
            ].join(' '),
            tags,
            ...admin,
            validate: { params: instanceParams },
            response: { status: { 200: exportSchema } },
            async handler(request, h) {

                const instance = live(request);
                return h.response(await instance.exportFile()).header('content-disposition', `attachment; filename="localgate-${instance.id}.json"`);
            }
        }
    });

    server.route<{ Query: Page }>({
        method: 'GET',
        path: '/_instances',
        options: {
            description: 'List the live instances',
            notes: 'Admin token required. Oldest first.',
            tags,
            ...admin,
            validate: { query: instanceListQuery },
            response: { status: { 200: instanceListSchema } },
            handler(request, h) {

                const { limit, offset } = request.query;
                const instances = registry.list();
                return listResponse(h, { data: instances.slice(offset, offset + limit).map(describe), total: instances.length });
            }
        }
    });

    server.route<{ Params: InstanceParams }>({
        method: 'GET',
        path: '/_instances/{instance_id}',
        options: {
            description: 'Get one live instance',
            tags,
            ...admin,
            validate: { params: instanceParams },
            response: { status: { 200: instanceSchema } },
            handler: (request) => describe(live(request))
        }
    });

    server.route<{ Params: InstanceParams }>({
        method: 'DELETE',
        path: '/_instances/{instance_id}',
        options: {
            description: 'Delete an instance and its data',
            notes: 'Every path under its base_path answers 404 instance_not_found afterwards.',
            tags,
            ...admin,
            validate: { params: instanceParams },
            response: { status: { 204: noContent } },
            handler(request, h) {

                registry.delete(live(request).id);
                return h.response().code(204);
            }
        }
    });

    server.route<{ Params: InstanceParams }>({
        method: 'POST',
        path: '/_instances/{instance_id}/reset',
        options: {
            description: 'Put an instance back as it was when made',
            notes: 'Its data (fixture included), clock and id counter.',
            tags,
            ...admin,
            validate: { params: instanceParams },
            response: { status: { 200: instanceSchema } },
            handler(request) {

                const instance = live(request);
                instance.reset();
                return describe(instance);
            }
        }
    });

    server.route<{ Params: InstanceParams }>({
        method: 'POST',
        path: '/_instances/{instance_id}/snapshots',
        options: {
            description: 'Keep a copy of an instance\'s state',
            notes: `Data, clock and id counter; restore it with POST /_instances/{instance_id}/restore. An instance keeps at most 50 (409 snapshot_limit_reached).`,
            tags,
            ...admin,
            plugins: { localgate: { errors: { 409: 'snapshot_limit_reached: the instance holds 50 snapshots' } } },
            validate: { params: instanceParams },
            response: { status: { 201: snapshotSchema } },
            handler(request, h) {

                return h.response({ snapshot_id: live(request).snapshot() }).code(201);
            }
        }
    });

    server.route<{ Params: InstanceParams; Payload: { snapshot_id: string } }>({
        method: 'POST',
        path: '/_instances/{instance_id}/restore',
        options: {
            description: 'Put back the state a snapshot holds',
            notes: 'The snapshot stays and can be restored again.',
            tags,
            ...admin,
            plugins: { localgate: { errors: { 422: 'snapshot_not_found: snapshot_id names no snapshot of this instance' } } },
            validate: { params: instanceParams, payload: restoreSchema },
            response: { status: { 200: instanceSchema } },
            handler(request) {

                const instance = live(request);
                instance.restore(request.payload.snapshot_id);
                return describe(instance);
            }
        }
    });

    server.route<{ Params: InstanceParams; Payload: { now?: string; advance?: string } }>({
        method: 'PUT',
        path: '/_instances/{instance_id}/clock',
        options: {
            description: 'Set or advance an instance\'s clock',
            notes: '{"now": "2030-01-01T00:00:00Z"} freezes it at an instant; {"advance": "2h"} moves it forward. Either way it then stands still until moved again.',
            tags,
            ...admin,
            plugins: { localgate: { errors: { 422: 'clock_out_of_range: the clock would stand outside 1970-01-01 to 9999-12-31, which records cannot hold' } } },
            validate: { params: instanceParams, payload: clockSchema },
            response: { status: { 200: instanceSchema } },
            handler(request) {

                const instance = live(request);
                const { now, advance } = request.payload;
                if (now) {
                    instance.setClock(new Date(now));
                }
                else {
                    instance.advanceClock(durationMs(advance!));
                }

                return describe(instance);
            }
        }
    });
}


function createInstance(registry: InstanceRegistry, payload: NewInstance): Instance {

    try {
        return registry.create(instanceOptions(payload, 'request body fixture', registry.namespaces));
    }
    catch (err) {
        if (err instanceof FixtureError) {
            const details = [{ field: err.field ? `fixture.${err.field}` : 'fixture', message: err.message }];
            throw failure(400, 'invalid_fixture', err.message, { details });
        }

        throw err;
    }
}
