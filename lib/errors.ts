import Http from 'node:http';

import Boom from '@hapi/boom';
import type { Plugin, Request, ResponseToolkit } from '@hapi/hapi';
import type { ValidationError } from 'joi';


// What a store may report: domain outcomes only, never HTTP or an engine's own errors. This module turns them into Boom errors.
export type DomainErrorKind = 'not_found' | 'conflict' | 'unprocessable' | 'busy' | 'limit';

export class DomainError extends Error {

    override name = 'DomainError';

    constructor(public readonly kind: DomainErrorKind, public readonly code: string, message: string, public readonly field?: string) {

        super(message);
    }
}


const statusOfKind: Record<DomainErrorKind, number> = {
    not_found: 404,
    conflict: 409,
    unprocessable: 422,
    busy: 503,
    limit: 429
};

/** A Boom error carrying a stable machine-readable code and extra body fields. */
export function failure(statusCode: number, code: string, message: string, extra: Record<string, unknown> = {}): Boom.Boom {

    return new Boom.Boom(message, { statusCode, data: { code, ...extra } });
}


/** The code of an error that did not set one: the HTTP reason of its status in snake case (not_found, payload_too_large). */
export function defaultCode(statusCode: number): string {

    return Http.STATUS_CODES[statusCode]!.toLowerCase().replace(/[^a-z]+/g, '_');
}


/** The body a client gets for a Boom error: Boom's payload plus the error's code (or its default) and extra fields. */
export function errorBody(boom: Boom.Boom): object {

    const data = boom.data as Record<string, unknown> | null | undefined;
    const extra = data && typeof data.code === 'string' ? data : { code: defaultCode(boom.output.statusCode) };
    return { ...boom.output.payload, ...extra };
}


/** Maps anything a handler threw to the Boom error the client sees. */
export function toBoom(err: Boom.Boom): Boom.Boom {

    if (err instanceof DomainError) {
        const extra = err.field ? { details: [{ field: err.field, message: err.message }] } : {};
        return failure(statusOfKind[err.kind], err.code, err.message, extra);
    }

    return err;
}


/** Route failAction for joi validation: a 400 whose message names each field and says why. */
export function validationFailed(request: Request, h: ResponseToolkit, err?: Error): never {

    const { validation } = (err as Boom.Boom).output.payload as unknown as { validation: { source: string } };
    const source = validation.source;
    const details = (err as ValidationError).details.map((detail) => ({
        // A rule over several keys (xor, and) or over the whole body has no path: name the keys, else the source.
        field: detail.path.length ? detail.path.join('.') : [detail.context!.peers ?? source].flat().join(', '),
        message: detail.message
    }));
    const reasons = details.map((detail) => detail.message).join('; ');
    throw failure(400, 'validation_failed', `Invalid ${source}: ${reasons}`, { details });
}


export const errorsPlugin: Plugin<void> = {
    name: 'localgate-errors',
    register(server) {

        server.ext('onPreResponse', (request, h) => {

            const response = request.response;
            if (!Boom.isBoom(response)) {
                return h.continue;
            }

            const boom = toBoom(response);
            boom.output.payload = errorBody(boom) as Boom.Payload;
            return boom;
        });
    }
};
