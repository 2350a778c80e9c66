import Crypto from 'node:crypto';

import type Boom from '@hapi/boom';
import type { Plugin, Request, ResponseObject } from '@hapi/hapi';


export const requestIdHeader = 'X-Request-Id';

/** The header as every answer spells it: hapi sends its responses' headers in lower case, and an error's as written. */
export const requestIdOnWire = requestIdHeader.toLowerCase();

/** How the document describes the header every response carries. */
export const requestIdHeaders = {
    [requestIdHeader]: { description: 'The id of the request, as its log line carries it: the X-Request-Id the client sent when it is 1 to 128 characters of A-Z a-z 0-9 . _ : -, else a new one', required: true, schema: { type: 'string' } }
};

// What a client may choose as the id of its request: short, and safe to echo in a header and a log line.
const saneId = /^[A-Za-z0-9._:-]{1,128}$/;


/** The id of a request: the client's X-Request-Id when it is sane, else a new one. */
export function requestId(incoming: unknown): string {

    return typeof incoming === 'string' && saneId.test(incoming) ? incoming : Crypto.randomUUID();
}


/** Puts the request's id on its answer. */
export function withRequestId<T extends Boom.Boom | ResponseObject>(request: Request, answer: T): T {

    if ('isBoom' in answer) {
        answer.output.headers[requestIdOnWire] = request.info.id;
    }
    else {
        answer.header(requestIdOnWire, request.info.id);
    }

    return answer;
}


/**
 * Gives every request its id before anything logs it, and every answer that is not an error the same id in
 * X-Request-Id (the errors plugin, which has the last word on errors, puts it on those).
 */
export const requestIdPlugin: Plugin<void> = {
    name: 'localgate-request-id',
    register(server) {

        server.ext('onRequest', (request, h) => {

            request.info.id = requestId(request.headers['x-request-id']);
            return h.continue;
        });

        server.ext('onPreResponse', (request, h) => {

            withRequestId(request, request.response);
            return h.continue;
        }, { after: ['localgate-errors'] });
    }
};
