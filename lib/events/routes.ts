import type { Server } from '@hapi/hapi';

import { scopedRoutes, scopeOf } from '../instances/scoped-routes';
import { listResponse } from '../lists';
import { requestIdHeaders } from '../request-id';
import { eventTypesOf } from '../outbox';
import { eventSchemas, eventStreamHeaders, maxEventsLimit } from './schemas';
import { eventPage, maxStreamBufferBytes, type EventStreams } from './service';
import { lateWindow, maxStreamsPerDataSet } from './stream';


const eventErrors = { 422: 'event_not_found: after (or Last-Event-ID) names no event the data set holds: never written, or older than the EVENTS_KEPT kept' };
const streamErrors = { ...eventErrors, 429: `too_many_streams: the data set has ${maxStreamsPerDataSet} streams open, the most it serves at once; close one` };


/** The default data set's events at /_events, an instance's under /_instances/{instance_id}/events: a page, or a stream. */
export function eventRoutes(server: Server, streams: EventStreams, pollMs: number): void {

    const types = eventTypesOf(server.app.localgate.settings.namespaces);
    const schemas = eventSchemas(types);
    const typeNotes = `Types: ${types.join(', ')}.`;
    scopedRoutes(server, ({ instance, path, what, route }) => {

        const events = path('events');
        // The default data set's poll for events other processes wrote; an instance lives in one process.
        const streamPollMs = instance ? 0 : pollMs;

        route<{ Query: { after?: string; type?: string; limit: number } }>({
            method: 'GET',
            path: events,
            options: {
                description: `The events of ${what}`,
                notes: `Admin token required. In the data set's order, after the event \`after\` names (from the oldest kept without it), at most limit (1 to ${maxEventsLimit}); total counts every event of the type asked for after \`after\`, this page included. EVENTS_KEPT events are kept per event-writing namespace, and those a webhook delivery still waits for. ${typeNotes}`,
                plugins: { localgate: { errors: eventErrors } },
                validate: { query: schemas.listQuery },
                response: { status: { 200: schemas.list } },
                async handler(request, h) {

                    return listResponse(h, await eventPage(scopeOf(request), request.query));
                }
            }
        });

        route<{ Query: { after?: string; type?: string }; Headers: { 'last-event-id'?: string } }>({
            method: 'GET',
            path: `${events}/stream`,
            options: {
                description: `The events of ${what}, as Server-Sent Events`,
                notes: `Admin token required. Each event as \`id: <event id>\`, \`event: <type>\` and \`data: <the event as GET ${events} lists it>\` lines, in the data set's order. It begins after the event the Last-Event-ID header names (it wins), or \`after\`; with neither, with the events written from now on. A \`: heartbeat\` comment every 15 s keeps proxies from closing it. A reader that leaves more than ${maxStreamBufferBytes / 2 ** 20} MiB unread is dropped (the stream ends; resume with Last-Event-ID); the stream ends too when the data set goes (an instance deleted). On PostgreSQL a transaction can commit after one that took a later position: a stream reads ${lateWindow} positions behind what it sent again, so an event up to that late reaches it. ${typeNotes}`,
                plugins: {
                    localgate: { errors: streamErrors },
                    'hapi-swagger': { produces: ['text/event-stream'], responses: { 200: { description: '`id:`, `event:` and `data:` lines, one event each; `: heartbeat` comments between', headers: requestIdHeaders } } }
                },
                validate: { query: schemas.streamQuery, headers: eventStreamHeaders },
                async handler(request, h) {

                    const start = { after: request.query.after, resumed: request.headers['last-event-id'], type: request.query.type };
                    const subscription = await streams.open(scopeOf(request), start, streamPollMs);
                    request.raw.res.once('close', () => subscription.close());
                    return h.response(subscription.stream)
                        .type('text/event-stream')
                        .header('cache-control', 'no-store')
                        // A compressed stream would hold events back until the compressor's buffer fills.
                        .header('content-encoding', 'identity');
                }
            }
        });
    });
}
