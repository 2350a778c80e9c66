import type { Plugin, Request, Server } from '@hapi/hapi';
import type Joi from 'joi';

import { requireAdmin } from '../auth';
import { noContent, optionalBody } from '../fields';
import { liveInstance } from '../instances/lookup';
import type { InstanceRegistry } from '../instances/registry';
import { durationMs, instanceParams } from '../instances/schemas';
import { listResponse, type Page } from '../lists';
import type { Scope } from '../scope';
import { matchesDelivery, type DeliveryEntry, type DeliveryPattern } from './deliveries';
import { typePattern, type SigningClock, type StoredEndpoint, type TypePattern } from './model';
import { maskedSecret, mintSecret } from './signing';
import { deliveryCountSchema, deliveryFindSchema, deliveryListQuery, deliveryListSchema, deliveryPatternPayload, endpointsPayload, endpointsSchema, endpointsSetSchema, flushSchema } from './webhook-schemas';


/** An endpoint as PUT …/webhooks takes it, defaults applied. */
export interface EndpointInput {
    url: string;
    types?: string[];
    secret?: string;
    signing_clock: SigningClock;
    retry_schedule: string[];
}

/** An endpoint as a caller gives it: url, and what it leaves out takes its default. */
export type WebhookEndpointInput = Pick<EndpointInput, 'url' | 'types' | 'secret'> & Partial<Pick<EndpointInput, 'signing_clock' | 'retry_schedule'>>;

/** An endpoint as set: its secret in full, shown this once. */
export interface WebhookEndpointSet {
    id: string;
    url: string;
    // As given; null: every type.
    types: string[] | null;
    secret: string;
    signing_clock: SigningClock;
    retry_schedule: string[];
    created_at: string;
}

/** An endpoint as read back: its secret masked, and its deliveries that succeeded and attempts that failed. */
export interface WebhookEndpointRead extends WebhookEndpointSet {
    delivered: number;
    failed: number;
}

/** The webhooks of each data set, for the test kit. */
export interface WebhooksApi {
    /** The body of PUT …/webhooks, with the hosts WEBHOOK_HOSTS allows. */
    payload: Joi.ObjectSchema;
    /** Replaces a data set's endpoints (none removes them); the input has passed payload. */
    set(scope: Scope, endpoints: EndpointInput[]): Promise<{ endpoints: WebhookEndpointSet[] }>;
    /** A data set's endpoints, secrets masked, with their counts. */
    get(scope: Scope): Promise<{ endpoints: WebhookEndpointRead[] }>;
    /** The attempts a data set made that a pattern matches (it has passed deliveryPatternPayload), in the order they were made. */
    find(scope: Scope, pattern: DeliveryPattern): DeliveryEntry[];
}

const pluginName = 'localgate-webhooks';

declare module '@hapi/hapi' {
    interface PluginProperties {
        [pluginName]: WebhooksApi;
    }
}

const tags = ['api', 'instances'];

const durationUnitsMs: [string, number][] = [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]];


/** A delay in its largest whole unit, as an endpoint's retry_schedule reads back: 300000 is 5m, 1500 is 1500ms. */
export function delayText(ms: number): string {

    const [unit, size] = durationUnitsMs.find(([, unitMs]) => ms > 0 && ms % unitMs === 0) ?? ['ms', 1];
    return `${ms / size}${unit}`;
}


function patternText({ pattern, prefix }: TypePattern): string {

    return prefix ? `${pattern}*` : pattern;
}


// How an endpoint reads back, its secret as the caller may see it.
function shown(endpoint: StoredEndpoint, secret: string): WebhookEndpointSet {

    return {
        id: endpoint.id,
        url: endpoint.url,
        types: endpoint.types && endpoint.types.map(patternText),
        secret,
        signing_clock: endpoint.signing_clock,
        retry_schedule: endpoint.retry_schedule.map(delayText),
        created_at: endpoint.created_at
    };
}


/** Replaces a data set's endpoints in each of its event logs; answers them with their secrets in full. */
async function setEndpoints(scope: Scope, inputs: EndpointInput[]): Promise<{ endpoints: WebhookEndpointSet[] }> {

    const createdAt = scope.services.clock.now().toISOString();
    const endpoints = inputs.map((input, ordinal): StoredEndpoint => {

        return {
            id: scope.services.ids.endpointId(),
            ordinal,
            url: input.url,
            types: input.types ? input.types.map(typePattern) : null,
            secret: input.secret ?? mintSecret(),
            signing_clock: input.signing_clock,
            retry_schedule: input.retry_schedule.map(durationMs),
            created_at: createdAt,
            delivered: 0,
            failed: 0
        };
    });

    const logs = await scope.data.eventLogs();
    for (const log of logs) {
        await log.replaceEndpoints(endpoints);
    }

    return { endpoints: endpoints.map((endpoint) => shown(endpoint, endpoint.secret)) };
}


/** A data set's endpoints, secrets masked, with their counts summed over its event logs. */
async function readEndpoints(scope: Scope): Promise<{ endpoints: WebhookEndpointRead[] }> {

    const logs = await scope.data.eventLogs();
    const read = await Promise.all(logs.map((log) => log.endpoints()));
    const [first = []] = read;
    return {
        endpoints: first.map((endpoint) => {

            const counted = read.flat().filter(({ id }) => id === endpoint.id);
            return {
                ...shown(endpoint, maskedSecret),
                delivered: counted.reduce((sum, { delivered }) => sum + delivered, 0),
                failed: counted.reduce((sum, { failed }) => sum + failed, 0)
            };
        })
    };
}


// The attempts a data set made that a pattern matches.
function findDeliveries(scope: Scope, pattern: DeliveryPattern): DeliveryEntry[] {

    return scope.services.deliveries.list().filter((entry) => matchesDelivery(entry, pattern));
}


/** The webhooks of a server's data sets, as its webhooks plugin exposes them. */
export function webhooksOf(server: Server): WebhooksApi {

    return server.plugins[pluginName];
}


/** The webhook routes of the default data set (/_webhooks…) and of each instance (/_instances/{id}/webhooks…). */
export const webhooksPlugin: Plugin<{ registry: InstanceRegistry; hosts: readonly string[] }> = {
    name: pluginName,
    register(server, { registry, hosts }) {

        const targets = [
            { path: '/_webhooks', scope: (request: Pick<Request, 'app' | 'params'>) => request.app.scope, params: undefined, what: 'the default data set' },
            { path: '/_instances/{instance_id}/webhooks', scope: (request: Pick<Request, 'app' | 'params'>) => liveInstance(registry, (request.params as { instance_id: string }).instance_id), params: instanceParams, what: 'an instance' }
        ];

        const payload = endpointsPayload(hosts);
        for (const target of targets) {
            endpointRoutes(server, target, payload);
            deliveryRoutes(server, target);
        }

        const api: WebhooksApi = { payload, set: setEndpoints, get: readEndpoints, find: findDeliveries };
        server.expose(api);
    }
};


interface Target {
    path: string;
    scope: (request: Pick<Request, 'app' | 'params'>) => Scope;
    params: typeof instanceParams | undefined;
    what: string;
}

const admin = { ext: { onPostAuth: { method: requireAdmin } } };


function endpointRoutes(server: Server, { path, scope, params, what }: Target, payload: ReturnType<typeof endpointsPayload>): void {

    server.route<{ Payload: { endpoints: EndpointInput[] } }>({
        method: 'PUT',
        path,
        options: {
            description: `Replace the webhook endpoints of ${what}`,
            notes: [
                'Admin token required. Each event of the types an endpoint asks for is POSTed to it, signed as Standard Webhooks says',
                '(webhook-id, webhook-timestamp, webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">), and retried on the data set\'s clock',
                'after each failed attempt as retry_schedule says, then given up (a webhook.delivery.given_up event). The answer is the only one that shows the secrets in full.',
                'Deliveries pending to the endpoints replaced are dropped.'
            ].join(' '),
            tags,
            ...admin,
            validate: { params, payload },
            response: { status: { 200: endpointsSetSchema } },
            handler: (request) => setEndpoints(scope(request), request.payload.endpoints)
        }
    });

    server.route({
        method: 'GET',
        path,
        options: {
            description: `Read the webhook endpoints of ${what}, with their counts`,
            notes: 'Admin token required. Secrets read whsec_********: the PUT that set them answered them once.',
            tags,
            ...admin,
            validate: { params },
            response: { status: { 200: endpointsSchema } },
            handler: (request) => readEndpoints(scope(request))
        }
    });

    server.route({
        method: 'DELETE',
        path,
        options: {
            description: `Remove the webhook endpoints of ${what}, and the deliveries pending to them`,
            tags,
            ...admin,
            validate: { params },
            response: { status: { 204: noContent } },
            async handler(request, h) {

                await setEndpoints(scope(request), []);
                return h.response().code(204);
            }
        }
    });

    server.route({
        method: 'POST',
        path: `${path}/flush`,
        options: {
            description: `Make every webhook attempt of ${what} due at its clock's instant`,
            notes: 'Admin token required. Answers once each attempt has been made (answered, failed or timed out), with how many were.',
            tags,
            ...admin,
            validate: { params },
            response: { status: { 200: flushSchema } },
            handler: async (request) => ({ attempted: await scope(request).services.dispatcher.flush() })
        }
    });
}


function deliveryRoutes(server: Server, { path, scope, params, what }: Target): void {

    const deliveries = `${path}/deliveries`;
    const patternNotes = 'Admin token required. The body is a pattern: type (an event type, or a prefix ending with *), status (the receiver\'s, or null for none), attempt, endpoint_id, webhook_id; each one given must match, and an empty body matches every attempt.';
    const find = (request: Pick<Request, 'app' | 'params'>, pattern: DeliveryPattern) => findDeliveries(scope(request), pattern);

    server.route<{ Query: Page }>({
        method: 'GET',
        path: deliveries,
        options: {
            description: `The webhook attempts ${what} made`,
            notes: 'Admin token required. In the order they were made, at most JOURNAL_SIZE kept (the oldest dropped), in memory only.',
            tags,
            ...admin,
            validate: { params, query: deliveryListQuery },
            response: { status: { 200: deliveryListSchema } },
            handler(request, h) {

                const { limit, offset } = request.query;
                const kept = scope(request).services.deliveries.list();
                return listResponse(h, { data: kept.slice(offset, offset + limit), total: kept.length });
            }
        }
    });

    server.route<{ Payload: DeliveryPattern }>({
        method: 'POST',
        path: `${deliveries}/count`,
        options: {
            description: `Count the webhook attempts ${what} made that match a pattern`,
            notes: patternNotes,
            tags,
            ...admin,
            validate: { params, payload: optionalBody(deliveryPatternPayload) },
            response: { status: { 200: deliveryCountSchema } },
            handler: (request) => ({ count: find(request, request.payload).length })
        }
    });

    server.route<{ Payload: DeliveryPattern }>({
        method: 'POST',
        path: `${deliveries}/find`,
        options: {
            description: `Find the webhook attempts ${what} made that match a pattern`,
            notes: patternNotes,
            tags,
            ...admin,
            validate: { params, payload: optionalBody(deliveryPatternPayload) },
            response: { status: { 200: deliveryFindSchema } },
            handler: (request) => ({ deliveries: find(request, request.payload) })
        }
    });

    server.route({
        method: 'DELETE',
        path: deliveries,
        options: {
            description: `Forget the webhook attempts ${what} made`,
            tags,
            ...admin,
            validate: { params },
            response: { status: { 204: noContent } },
            handler(request, h) {

                scope(request).services.deliveries.clear();
                return h.response().code(204);
            }
        }
    });
}
