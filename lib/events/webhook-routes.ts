import type { Plugin, Server } from '@hapi/hapi';

import { noContent, optionalBody } from '../fields';
import { scopedRoutes, scopeOf, type ScopedTarget } from '../instances/scoped-routes';
import { listResponse, type Page } from '../lists';
import type { DeliveryPattern } from '../data-set/deliveries';
import { eventTypesOf } from '../outbox';
import { attemptedSchema, deliveryCountSchema, deliveryFindSchema, deliveryListQuery, deliveryListSchema, endpointChangePayload, endpointParams, endpointRotatedSchema, endpointSchema, endpointsSchema, endpointsSetSchema, eventParams, flushSchema, recoverPayload, resendPayload, rotatePayload } from './webhook-schemas';
import { webhooksService, type EndpointInput, type WebhooksApi } from './webhooks';


const pluginName = 'localgate-webhooks';

declare module '@hapi/hapi' {
    interface PluginProperties {
        [pluginName]: WebhooksApi;
    }
}


/** The webhooks of a server's data sets, as its webhooks plugin exposes them. */
export function webhooksOf(server: Server): WebhooksApi {

    return server.plugins[pluginName];
}


/** The webhook routes of the default data set (/_webhooks…) and of each instance (/_instances/{id}/webhooks…). */
export const webhooksPlugin: Plugin<{ hosts: readonly string[] }> = {
    name: pluginName,
    register(server, { hosts }) {

        const api = webhooksService(hosts, eventTypesOf(server.app.localgate.settings.namespaces));
        scopedRoutes(server, (target) => {

            endpointRoutes(target, api);
            endpointStateRoutes(target, api);
            deliveryRoutes(target, api);
        });

        server.expose(api);
    }
};


function endpointRoutes({ path, what, route }: ScopedTarget, api: WebhooksApi): void {

    const webhooks = path('webhooks');

    route<{ Payload: { endpoints: EndpointInput[] } }>({
        method: 'PUT',
        path: webhooks,
        options: {
            description: `Replace the webhook endpoints of ${what}`,
            notes: [
                'Admin token required. Each event of the types an endpoint asks for is POSTed to it, signed as Standard Webhooks says',
                '(webhook-id, webhook-timestamp, webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">), and retried on the data set\'s clock',
                'after each failed attempt as retry_schedule says, then given up (a webhook.delivery.given_up event). The answer is the only one that shows the secrets in full.',
                'Deliveries pending to the endpoints replaced are dropped.'
            ].join(' '),
            validate: { payload: api.payload },
            response: { status: { 200: endpointsSetSchema } },
            handler: (request) => api.set(scopeOf(request), request.payload.endpoints)
        }
    });

    route({
        method: 'GET',
        path: webhooks,
        options: {
            description: `Read the webhook endpoints of ${what}, with their counts`,
            notes: 'Admin token required. Secrets read whsec_********: the PUT that set them answered them once.',
            response: { status: { 200: endpointsSchema } },
            handler: (request) => api.get(scopeOf(request))
        }
    });

    route({
        method: 'DELETE',
        path: webhooks,
        options: {
            description: `Remove the webhook endpoints of ${what}, and the deliveries pending to them`,
            response: { status: { 204: noContent } },
            async handler(request, h) {

                await api.set(scopeOf(request), []);
                return h.response().code(204);
            }
        }
    });

    route({
        method: 'POST',
        path: `${webhooks}/flush`,
        options: {
            description: `Make every webhook attempt of ${what} due at its clock's instant`,
            notes: 'Admin token required. Answers once each attempt has been made (answered, failed or timed out), with how many were.',
            response: { status: { 200: flushSchema } },
            handler: async (request) => ({ attempted: await scopeOf(request).services.dispatcher.flush() })
        }
    });
}


function endpointStateRoutes({ path, what, route }: ScopedTarget, api: WebhooksApi): void {

    const endpointPath = `${path('webhooks')}/{endpoint_id}`;
    const notFound = { 404: 'endpoint_not_found: endpoint_id names no endpoint of the data set' };
    const attemptsNotes = 'Answers once each attempt has been made (answered, failed or timed out), with how many were, as flush does. An attempt counts on from the delivery\'s last (a failure is retried as the endpoint\'s retry_schedule says from there, and given up past its end); a disabled endpoint\'s deliveries are made due and wait, pending, until it is enabled (not counted); a delivery in flight is left to its attempt.';

    route<{ Params: { endpoint_id: string }; Payload: { disabled: boolean } }>({
        method: 'PATCH',
        path: endpointPath,
        options: {
            description: `Pause or enable a webhook endpoint of ${what}`,
            notes: 'Admin token required. disabled: true pauses it: its deliveries stay pending, neither claimed nor attempted (disabled_reason paused). false enables it, whether a client paused it or it gave up WEBHOOK_DISABLE_AFTER deliveries in a row (disabled_reason given_up): what waited is sent at once, in due order. Answers the endpoint as GET reads it.',
            plugins: { localgate: { errors: notFound } },
            validate: { params: endpointParams, payload: endpointChangePayload },
            response: { status: { 200: endpointSchema } },
            handler: (request) => api.update(scopeOf(request), request.params.endpoint_id, request.payload)
        }
    });

    route<{ Params: { endpoint_id: string }; Payload: { overlap: string } }>({
        method: 'POST',
        path: `${endpointPath}/rotate`,
        options: {
            description: `Give a webhook endpoint of ${what} a new secret`,
            notes: 'Admin token required. Mints a new secret and answers the endpoint with it in full (the only answer that shows it). Until previous_secret_until (now plus overlap, on the data set\'s clock) every attempt is signed with both, webhook-signature: v1,<old> v1,<new>, so that a receiver that knows either verifies while it rolls its secret; then with the new one only. A rotation during an overlap ends it: the secret it replaces is the one before it.',
            plugins: { localgate: { errors: notFound } },
            validate: { params: endpointParams, payload: rotatePayload },
            response: { status: { 200: endpointRotatedSchema } },
            handler: (request) => api.rotate(scopeOf(request), request.params.endpoint_id, request.payload.overlap)
        }
    });

    route<{ Params: { endpoint_id: string }; Payload: { since: string } }>({
        method: 'POST',
        path: `${endpointPath}/recover`,
        options: {
            description: `Send again the failed and given-up deliveries to a webhook endpoint of ${what}`,
            notes: `Admin token required. Each delivery to the endpoint whose event was created at or after since (the data set's clock), failed (waiting for its next attempt) or given up, gets a new attempt now, the same webhook-id, in due order. ${attemptsNotes}`,
            plugins: { localgate: { errors: notFound } },
            validate: { params: endpointParams, payload: recoverPayload },
            response: { status: { 200: attemptedSchema } },
            handler: (request) => api.recover(scopeOf(request), request.params.endpoint_id, request.payload.since)
        }
    });

    // The data set's events, whose resend lives here.
    route<{ Params: { event_id: string }; Payload: { endpoint_id?: string } }>({
        method: 'POST',
        path: `${path('events')}/{event_id}/resend`,
        options: {
            description: `Send one event of ${what} again to its webhook endpoints`,
            notes: `Admin token required. A new attempt now of the event to each endpoint whose types match it, or to endpoint_id only, with the same webhook-id as its earlier attempts; an endpoint set after the event gets its first. ${attemptsNotes} No endpoint matching answers attempted 0.`,
            plugins: {
                localgate: {
                    errors: {
                        404: 'event_not_found: event_id names no event the data set holds: never written, or older than the EVENTS_KEPT kept',
                        422: 'event_not_delivered (a webhook.* event, which is never delivered), endpoint_not_found (endpoint_id names no endpoint) or event_type_not_matched (the endpoint named does not ask for the event\'s type)'
                    }
                }
            },
            validate: { params: eventParams, payload: resendPayload },
            response: { status: { 200: attemptedSchema } },
            handler: (request) => api.resend(scopeOf(request), request.params.event_id, request.payload.endpoint_id)
        }
    });
}


function deliveryRoutes({ path, what, route }: ScopedTarget, api: WebhooksApi): void {

    const deliveries = path('webhooks/deliveries');
    const patternNotes = 'Admin token required. The body is a pattern: type (an event type, or a prefix ending with *), status (the receiver\'s, or null for none), attempt, endpoint_id, webhook_id; each one given must match, and an empty body matches every attempt.';

    route<{ Query: Page }>({
        method: 'GET',
        path: deliveries,
        options: {
            description: `The webhook attempts ${what} made`,
            notes: 'Admin token required. In the order they were made, at most JOURNAL_SIZE kept (the oldest dropped), in memory only.',
            validate: { query: deliveryListQuery },
            response: { status: { 200: deliveryListSchema } },
            handler(request, h) {

                const { limit, offset } = request.query;
                const kept = scopeOf(request).services.deliveries.list();
                return listResponse(h, { data: kept.slice(offset, offset + limit), total: kept.length });
            }
        }
    });

    route<{ Payload: DeliveryPattern }>({
        method: 'POST',
        path: `${deliveries}/count`,
        options: {
            description: `Count the webhook attempts ${what} made that match a pattern`,
            notes: patternNotes,
            validate: { payload: optionalBody(api.pattern) },
            response: { status: { 200: deliveryCountSchema } },
            handler: (request) => ({ count: api.find(scopeOf(request), request.payload).length })
        }
    });

    route<{ Payload: DeliveryPattern }>({
        method: 'POST',
        path: `${deliveries}/find`,
        options: {
            description: `Find the webhook attempts ${what} made that match a pattern`,
            notes: patternNotes,
            validate: { payload: optionalBody(api.pattern) },
            response: { status: { 200: deliveryFindSchema } },
            handler: (request) => ({ deliveries: api.find(scopeOf(request), request.payload) })
        }
    });

    route({
        method: 'DELETE',
        path: deliveries,
        options: {
            description: `Forget the webhook attempts ${what} made`,
            response: { status: { 204: noContent } },
            handler(request, h) {

                scopeOf(request).services.deliveries.clear();
                return h.response().code(204);
            }
        }
    });
}
