import type { Plugin, Request } from '@hapi/hapi';
import Joi from 'joi';

import { requireAdmin } from '../auth';
import { DomainError } from '../errors';
import { liveInstance } from '../instances/lookup';
import type { InstanceRegistry } from '../instances/registry';
import { instanceParams } from '../instances/schemas';
import { listResponse } from '../lists';
import { requestIdHeaders } from '../request-id';
import type { FailureLog } from '../safe-listener';
import type { Scope } from '../scope';
import { cursorOf, lastCursor, listEvents } from './log';
import { eventTypes, typePattern, type TypePattern } from './model';
import { eventListQuery, eventListSchema, eventStreamHeaders, eventStreamQuery, maxEventsLimit } from './schemas';
import { EventSubscription, lateWindow, maxStreamsPerDataSet, type StreamSettings } from './stream';


// Events: the log of each data set over HTTP (log.ts), its Server-Sent Events stream (stream.ts), and the notice
// after each request that tells a data set's listeners what its request wrote.

export interface EventsOptions {
    registry: InstanceRegistry;
    // The default data set's poll for events other processes wrote (0: none; an instance lives in one process).
    pollMs: number;
    heartbeatMs: number;
    log: FailureLog;
}

const optionsSchema = Joi.object<EventsOptions>({
    registry: Joi.object().required(),
    pollMs: Joi.number().integer().min(0).required(),
    heartbeatMs: Joi.number().integer().min(1).required(),
    log: Joi.func().required()
});

/** A stream's reader that leaves this much unread is dropped. */
export const maxStreamBufferBytes = 1024 * 1024;

const tags = ['api', 'instances'];

const eventErrors = { 422: 'event_not_found: after (or Last-Event-ID) names no event the data set holds: never written, or older than the EVENTS_KEPT kept' };
const streamErrors = { ...eventErrors, 429: `too_many_streams: the data set has ${maxStreamsPerDataSet} streams open, the most it serves at once; close one` };

const typeNotes = `Types: ${eventTypes.join(', ')}.`;


// The types a query asks for: none is every type.
function typesOf(type: string | undefined): TypePattern[] | null {

    return type === undefined ? null : [typePattern(type)];
}


export const eventsPlugin: Plugin<EventsOptions> = {
    name: 'localgate-events',
    register(server, options) {

        const settings = Joi.attempt(options, optionsSchema, 'Invalid events options');
        const subscriptions = new Set<EventSubscription>();
        const admin = { ext: { onPostAuth: { method: requireAdmin } } };

        // No stream holds the server open as it stops.
        server.ext('onPreStop', () => {

            for (const subscription of subscriptions) {
                subscription.close();
            }
        });

        const targets = [
            { path: '/_events', scope: (request: Pick<Request, 'app' | 'params'>): Scope => request.app.scope, params: undefined, what: 'the default data set', pollMs: settings.pollMs },
            { path: '/_instances/{instance_id}/events', scope: (request: Pick<Request, 'app' | 'params'>): Scope => liveInstance(settings.registry, (request.params as { instance_id: string }).instance_id), params: instanceParams, what: 'an instance', pollMs: 0 }
        ];

        for (const { path, scope, params, what, pollMs } of targets) {
            const streamSettings: StreamSettings = { heartbeatMs: settings.heartbeatMs, pollMs, maxBufferedBytes: maxStreamBufferBytes, log: settings.log };

            server.route<{ Query: { after?: string; type?: string; limit: number } }>({
                method: 'GET',
                path,
                options: {
                    description: `The events of ${what}`,
                    notes: `Admin token required. In the data set's order, after the event \`after\` names (from the oldest kept without it), at most limit (1 to ${maxEventsLimit}); total counts every event of the type asked for after \`after\`, this page included. EVENTS_KEPT events are kept per event-writing namespace, and those a webhook delivery still waits for. ${typeNotes}`,
                    tags,
                    ...admin,
                    plugins: { localgate: { errors: eventErrors } },
                    validate: { params, query: eventListQuery },
                    response: { status: { 200: eventListSchema } },
                    async handler(request, h) {

                        const { after, type, limit } = request.query;
                        const logs = await scope(request).data.eventLogs();
                        return listResponse(h, await listEvents(logs, { after: after ?? null, types: typesOf(type), limit }));
                    }
                }
            });

            server.route<{ Query: { after?: string; type?: string }; Headers: { 'last-event-id'?: string } }>({
                method: 'GET',
                path: `${path}/stream`,
                options: {
                    description: `The events of ${what}, as Server-Sent Events`,
                    notes: `Admin token required. Each event as \`id: <event id>\`, \`event: <type>\` and \`data: <the event as GET ${path} lists it>\` lines, in the data set's order. It begins after the event the Last-Event-ID header names (it wins), or \`after\`; with neither, with the events written from now on. A \`: heartbeat\` comment every 15 s keeps proxies from closing it. A reader that leaves more than ${maxStreamBufferBytes / 2 ** 20} MiB unread is dropped (the stream ends; resume with Last-Event-ID); the stream ends too when the data set goes (an instance deleted). On PostgreSQL a transaction can commit after one that took a later position: a stream reads ${lateWindow} positions behind what it sent again, so an event up to that late reaches it. ${typeNotes}`,
                    tags,
                    ...admin,
                    plugins: {
                        localgate: { errors: streamErrors },
                        'hapi-swagger': { produces: ['text/event-stream'], responses: { 200: { description: '`id:`, `event:` and `data:` lines, one event each; `: heartbeat` comments between', headers: requestIdHeaders } } }
                    },
                    validate: { params, query: eventStreamQuery, headers: eventStreamHeaders },
                    async handler(request, h) {

                        const target = scope(request);
                        if ([...subscriptions].filter((open) => open.scope.services === target.services).length >= maxStreamsPerDataSet) {
                            throw new DomainError('limit', 'too_many_streams', `${maxStreamsPerDataSet} streams of this data set are open, the most it serves at once: close one before opening another`);
                        }

                        const logs = await target.data.eventLogs();
                        const resumed = request.headers['last-event-id'];
                        const after = resumed ?? request.query.after;
                        const cursor = after !== undefined ? await cursorOf(logs, after, resumed === undefined ? 'after' : 'Last-Event-ID') : await lastCursor(logs);
                        const subscription = new EventSubscription(target, cursor, typesOf(request.query.type), streamSettings);
                        subscriptions.add(subscription);
                        subscription.stream.once('close', () => subscriptions.delete(subscription));
                        request.raw.res.once('close', () => subscription.close());
                        return h.response(subscription.stream)
                            .type('text/event-stream')
                            .header('cache-control', 'no-store')
                            // A compressed stream would hold events back until the compressor's buffer fills.
                            .header('content-encoding', 'identity');
                    }
                }
            });
        }
    }
};
