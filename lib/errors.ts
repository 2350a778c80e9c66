import Http from 'node:http';
import type Net from 'node:net';

import Boom from '@hapi/boom';
import type { Plugin, Request, ResponseObject, ResponseToolkit, Server } from '@hapi/hapi';
import type { ValidationError } from 'joi';

import { requestId, requestIdOnWire, withRequestId } from './request-id';
import { safely } from './safe-listener';
import { fieldOf } from './thrown';


// What a store may report: domain outcomes only, never HTTP or an engine's own errors. This module turns them into Boom errors.
export type DomainErrorKind = 'invalid' | 'not_found' | 'payment_required' | 'conflict' | 'unprocessable' | 'busy' | 'unavailable' | 'limit';

export class DomainError extends Error {

    override name = 'DomainError';

    constructor(public readonly kind: DomainErrorKind, public readonly code: string, message: string, public readonly field?: string) {

        super(message);
    }
}


const statusOfKind: Record<DomainErrorKind, number> = {
    invalid: 400,
    not_found: 404,
    payment_required: 402,
    conflict: 409,
    unprocessable: 422,
    busy: 503,
    unavailable: 503,
    limit: 429
};

// The data of a Boom error made here: its code and extra body fields. Any other Boom's data is its own business.
class BodyFields {

    constructor(public readonly code: string, extra: Record<string, unknown>) {

        Object.assign(this, extra);
    }
}


/** The body of an error answer: Boom's status, reason and message, a code, and the extra fields of a failure(). */
export type ErrorBody = Boom.Payload & { code: string };



/** A Boom error carrying a stable machine-readable code and extra body fields. */
export function failure(statusCode: number, code: string, message: string, extra: Record<string, unknown> = {}): Boom.Boom {

    return new Boom.Boom(message, { statusCode, data: new BodyFields(code, extra) });
}


/** The code of an error that did not set one: the HTTP reason of its status in snake case (not_found, payload_too_large). */
export function defaultCode(statusCode: number): string {

    // A status Node has no reason for (an injected 499) is unknown, as Boom names its reason.
    return (Http.STATUS_CODES[statusCode] ?? 'Unknown').toLowerCase().replace(/[^a-z]+/g, '_');
}


/** The body a client gets for a Boom error: status, reason, message and code, plus the extra fields of a failure(). */
export function errorBody(boom: Boom.Boom): ErrorBody {

    const { statusCode, error, message } = boom.output.payload;
    const extra = boom.data instanceof BodyFields ? boom.data : { code: defaultCode(statusCode) };
    return { statusCode, error, message, ...extra };
}


/** What a request whose body is not declared as JSON is told. */
export const unsupportedMediaMessage = 'The body must be JSON, sent with the header Content-Type: application/json';


/** Maps anything a handler threw to the Boom error the client sees. */
export function toBoom(err: Boom.Boom): Boom.Boom {

    if (err instanceof DomainError) {
        const extra = err.field ? { details: [{ field: err.field, message: err.message }] } : {};
        return failure(statusOfKind[err.kind], err.code, err.message, extra);
    }

    if (err.output.statusCode === 415) {
        return failure(415, defaultCode(415), unsupportedMediaMessage);
    }

    // The JSON parser refuses a __proto__ key (it could poison prototypes) under the same words as broken JSON.
    if (err.data instanceof SyntaxError && err.data.message.includes('forbidden prototype property')) {
        return failure(400, 'bad_request', 'Invalid request payload JSON: a key named __proto__ is not accepted');
    }

    return err;
}



// What hapi's failAction receives for a request joi refused.
interface HapiValidationError extends ValidationError {
    output: { payload: { validation: { source: string } } };
}


/** Route failAction for joi validation: a 400 whose message names each field and says why. */
export function validationFailed(request: Request, h: ResponseToolkit, err?: Error): never {

    // hapi hands a failAction the joi error it boomified, the source it validated in the payload: its type says Error.
    const failed = err as HapiValidationError;
    const source = failed.output.payload.validation.source;
    const details = failed.details.map((detail) => {

        // A rule over several keys (xor, and) or over the whole body has no path: name the keys, else the source. An
        // empty key is named as JSON spells it (`""`), in the field and in the message, whose label joi made without
        // it (`metadata.`, or `value` at the top): a field is never empty.
        const field = detail.path.length ? detail.path.map((key) => (key === '' ? '""' : key)).join('.') : [detail.context?.peers ?? source].flat().join(', ');
        const label = String(detail.context?.label);
        const renamed = detail.path.includes('') && detail.message.startsWith(label);
        return { field, message: renamed ? `${field}${detail.message.slice(label.length)}` : detail.message };
    });
    const reasons = details.map((detail) => detail.message).join('; ');
    throw failure(400, 'validation_failed', `Invalid ${source}: ${reasons}`, { details });
}


// Methods a path may be routed on, each with the method of the route that takes it: a GET route answers HEAD too.
const routableMethods = [['GET', 'get'], ['HEAD', 'get'], ['POST', 'post'], ['PUT', 'put'], ['PATCH', 'patch'], ['DELETE', 'delete']] as const;


// The methods the server routes for a path, as an Allow header lists them; empty for an unknown path.
function allowedMethods(server: Server, path: string): string[] {

    return routableMethods.filter(([, routed]) => server.match(routed, path) !== null).map(([method]) => method);
}


// hapi answers requests no route takes through its own catch-all routes: the 404, and the CORS preflight for any path,
// whose refusals are 200s with a bare message. Here they become the answers every other error gets.
function unrouted(request: Request, h: ResponseToolkit): Boom.Boom | ResponseObject {

    const response = request.response;
    const allowed = allowedMethods(request.server, request.path);
    const requested: unknown = request.headers['access-control-request-method'];
    if (request.method === 'options' && typeof requested === 'string' && allowed.length) {
        // hapi's refusals: a 404 Boom (method not routed, Origin missing) or a 200 whose body is the reason.
        const reason = Boom.isBoom(response) ? response.message : fieldOf(response.source, 'message');
        if (typeof reason !== 'string') {
            return response;
        }

        const refusal = reason === 'Not Found' ? `${requested} is not allowed on ${request.path}` : reason.replace(/^CORS error: /, '');
        return failure(403, 'cors_not_allowed', `CORS preflight refused: ${refusal}`);
    }

    if (!allowed.length) {
        // The path as the client sent it, an instance's base path included.
        return failure(404, 'not_found', `No route serves ${request.raw.req.url?.replace(/\?.*/s, '')}: the routes are listed at /docs`);
    }

    if (request.method === 'options') {
        return h.response().code(204).header('Allow', [...allowed, 'OPTIONS'].join(', '));
    }

    const boom = failure(405, 'method_not_allowed', `${request.method.toUpperCase()} is not allowed on ${request.path}: use ${allowed.join(', ')}`);
    boom.output.headers.Allow = allowed.join(', ');
    return boom;
}


// What Node's parser refuses before there is a request, by its code: too many header bytes, a request that took too long, else 400.
const clientErrors = new Map([
    ['HPE_HEADER_OVERFLOW', { statusCode: 431, message: `The request's headers are larger than ${Http.maxHeaderSize} bytes` }],
    ['ERR_HTTP_REQUEST_TIMEOUT', { statusCode: 408, message: 'The request took too long to arrive' }]
]);

const notHttp = { statusCode: 400, message: 'The request is not valid HTTP' };


/** Answers a connection whose bytes Node's parser refused: a logged code, and a common error body while the client can take one. */
export function answerClientError(server: Server, err: NodeJS.ErrnoException, socket: Net.Socket): void {

    // The error's code and fixed text only: its rawPacket holds the request's bytes, credentials included.
    server.log(['client', 'warn'], { code: err.code, message: err.message });
    try {
        if (socket.writable && socket.bytesWritten === 0) {
            const { statusCode, message } = clientErrors.get(String(err.code)) ?? notHttp;
            const payload = JSON.stringify(errorBody(failure(statusCode, defaultCode(statusCode), message)));
            socket.write([
                `HTTP/1.1 ${statusCode} ${Http.STATUS_CODES[statusCode]}`,
                'Content-Type: application/json; charset=utf-8',
                `Content-Length: ${Buffer.byteLength(payload)}`,
                `${requestIdOnWire}: ${requestId(undefined)}`,
                'Connection: close',
                '',
                payload
            ].join('\r\n'));
        }
    }
    finally {
        // As Node does when nobody listens for client errors; an answer that failed still frees the socket.
        socket.destroy();
    }
}


export const errorsPlugin: Plugin<void> = {
    name: 'localgate-errors',
    register(server) {

        // hapi answers what the parser refused with an empty 400, and logs the error whole, raw request bytes included.
        server.listener.removeAllListeners('clientError');
        // A failure here is logged: thrown into Node's HTTP server, it would end the process.
        server.listener.on('clientError', safely('clientError', (tags, data) => server.log(tags, data), (err: NodeJS.ErrnoException, socket: Net.Socket) => answerClientError(server, err, socket)));

        server.ext('onPreResponse', (request, h) => {

            const response = request.response;
            const boom = Boom.isBoom(response);
            // hapi's catch-all routes: the 404 and the CORS preflight; an invalid path is their 400. A failure made here
            // before routing (an unknown instance) is already the answer.
            const unknown = String(request.route.method) === '_special' && (!boom || (response.output.statusCode === 404 && !(response.data instanceof BodyFields)));
            let answer: Boom.Boom | ResponseObject;
            if (unknown) {
                answer = unrouted(request, h);
            }
            else if (boom) {
                answer = toBoom(response);
            }
            else {
                return h.continue;
            }

            if (Boom.isBoom(answer)) {
                answer.output.payload = errorBody(answer);
                // Returning an error ends onPreResponse: no later extension sees it.
                withRequestId(request, answer);
            }

            return answer;
        });
    }
};
