import type { Server } from '@hapi/hapi';

import { requireAdmin } from '../auth';
import { failure } from '../errors';
import { noContent } from '../fields';
import { FixtureError } from '../fixtures';
import { listResponse, type Page } from '../lists';
import type { Scope } from '../scope';
import type { Instance, InstanceRecord } from './instance';
import { liveInstance } from './lookup';
import { instanceOptions, type NewInstance } from './options';
import type { InstanceRegistry } from './registry';
import { exportSchema, instanceListQuery, instanceListSchema, instanceParams, instanceSchema, newInstanceSchema, restoreSchema, snapshotParams, snapshotSchema } from './schemas';


const tags = ['api', 'instances'];

// What joi leaves in the request once it has validated and converted it.
type InstanceParams = { instance_id: string };


/** GET /_export: the default data set's records as a fixture file. */
export function defaultExportRoute(server: Server, defaultScope: Scope): void {

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


/** The /_instances admin routes: make, list, get, delete, export, reset, snapshot and restore an instance. */
export function instanceRoutes(server: Server, registry: InstanceRegistry, maxFixtureBytes: number): void {

    const describe = (instance: Instance): InstanceRecord => instance.describe(registry.idleTtlMs);
    const live = (request: { params: InstanceParams }): Instance => liveInstance(registry, request.params.instance_id);

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
                'With from, the instance is a fork: a copy of that live instance\'s data, event log, clock and ids as they are now, with no webhook endpoint, pending delivery or attempt of it (an unknown one is a 422 instance_not_found).',
                'A fixture exported by GET /_instances/{instance_id}/export loads back as it is; its clock and id counter are taken unless clock or ids is set. A file of a newer format, or from a newer schema, is a 400 invalid_fixture that says so.'
            ].join(' '),
            tags,
            ...admin,
            plugins: {
                localgate: {
                    errors: {
                        400: 'a fixture record that breaks a rule of the API, a key another record holds, a pay move the API would refuse, or a header from a newer localgate (code invalid_fixture, with details naming fixture.<namespace>.<collection>[<index>].<field>)',
                        422: 'instance_not_found: from names no live instance',
                        429: 'instance_limit_reached: MAX_INSTANCES instances are live: delete one or let idle ones expire'
                    }
                }
            },
            payload: { maxBytes: maxFixtureBytes },
            validate: { payload: newInstanceSchema(registry.namespaces) },
            response: { status: { 201: instanceSchema } },
            async handler(request, h) {

                const instance = await createInstance(registry, request.payload);
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
            async handler(request, h) {

                await registry.delete(live(request).id);
                return h.response().code(204);
            }
        }
    });

    server.route<{ Params: InstanceParams }>({
        method: 'POST',
        path: '/_instances/{instance_id}/reset',
        options: {
            description: 'Put an instance back as it was when made',
            notes: 'Its data (fixture included), event log, clock and id counter, with no delivery pending of an event it removes. Its webhook endpoints (with their counts), fault rules and journals stay as they are.',
            tags,
            ...admin,
            validate: { params: instanceParams },
            response: { status: { 200: instanceSchema } },
            async handler(request) {

                const instance = live(request);
                await instance.reset();
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
            async handler(request, h) {

                return h.response({ snapshot_id: await live(request).snapshot() }).code(201);
            }
        }
    });

    server.route<{ Params: InstanceParams & { snapshot_id: string } }>({
        method: 'DELETE',
        path: '/_instances/{instance_id}/snapshots/{snapshot_id}',
        options: {
            description: 'Drop a snapshot of an instance',
            notes: 'Gives the memory its copy holds back to MAX_SNAPSHOT_MIB and frees its place among the 50 an instance keeps. The state the instance is in stays as it is.',
            tags,
            ...admin,
            plugins: { localgate: { errors: { 404: 'snapshot_not_found: snapshot_id names no snapshot of this instance' } } },
            validate: { params: snapshotParams },
            response: { status: { 204: noContent } },
            handler(request, h) {

                live(request).forget(request.params.snapshot_id);
                return h.response().code(204);
            }
        }
    });

    server.route<{ Params: InstanceParams; Payload: { snapshot_id: string } }>({
        method: 'POST',
        path: '/_instances/{instance_id}/restore',
        options: {
            description: 'Put back the state a snapshot holds',
            notes: 'Its data, event log, clock and id counter, and the deliveries it had pending to the webhook endpoints still set. The endpoints (with their counts), fault rules and journals stay as they are. The snapshot stays and can be restored again.',
            tags,
            ...admin,
            plugins: { localgate: { errors: { 422: 'snapshot_not_found: snapshot_id names no snapshot of this instance' } } },
            validate: { params: instanceParams, payload: restoreSchema },
            response: { status: { 200: instanceSchema } },
            async handler(request) {

                const instance = live(request);
                await instance.restore(request.payload.snapshot_id);
                return describe(instance);
            }
        }
    });
}


async function createInstance(registry: InstanceRegistry, payload: NewInstance): Promise<Instance> {

    try {
        return await registry.create(instanceOptions(payload, 'request body fixture', registry.namespaces));
    }
    catch (err) {
        if (err instanceof FixtureError) {
            const details = [{ field: err.field ? `fixture.${err.field}` : 'fixture', message: err.message }];
            throw failure(400, 'invalid_fixture', err.message, { details });
        }

        throw err;
    }
}
