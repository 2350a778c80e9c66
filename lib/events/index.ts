import type { Plugin } from '@hapi/hapi';
import Joi from 'joi';

import type { FailureLog } from '../safe-listener';
import { eventRoutes } from './routes';
import { EventStreams, maxStreamBufferBytes } from './service';


// Events: the log of each data set over HTTP (log.ts) and its Server-Sent Events stream (stream.ts), both read through
// service.ts and served by routes.ts. A stream hears of new events from the data set's runtime, which each write tells
// once it has committed.

// What the features beside events read of it: the server's event types, the type patterns of webhook and fault
// rules, and how a webhook secret is recognized and shown.
export { eventTypesOf } from '../outbox';
export { maskedSecret } from '../signing';
export { secretRegex, typePatternSchema } from './webhook-schemas';

export interface EventsOptions {
    // The default data set's poll for events other processes wrote (0: none; an instance lives in one process).
    pollMs: number;
    heartbeatMs: number;
    log: FailureLog;
}

const optionsSchema = Joi.object<EventsOptions>({
    pollMs: Joi.number().integer().min(0).required(),
    heartbeatMs: Joi.number().integer().min(1).required(),
    log: Joi.func().required()
});


/** The events plugin: each data set's events as a page and a stream, the streams closed as the server stops. */
export const eventsPlugin: Plugin<EventsOptions> = {
    name: 'localgate-events',
    register(server, options) {

        const settings = Joi.attempt(options, optionsSchema, 'Invalid events options');
        const streams = new EventStreams({ heartbeatMs: settings.heartbeatMs, maxBufferedBytes: maxStreamBufferBytes, log: settings.log });

        // No stream holds the server open as it stops.
        server.ext('onPreStop', () => streams.closeAll());

        eventRoutes(server, streams, settings.pollMs);
    }
};
