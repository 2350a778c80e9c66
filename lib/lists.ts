import type { Request, RequestRoute, ResponseObject, ResponseToolkit } from '@hapi/hapi';
import Joi from 'joi';


// A type, not an interface, so that hapi's request.query converts to it (joi has validated and converted the query).
export type Page = {
    limit: number;
    offset: number;
};

export interface ListResult<T> {
    data: T[];
    total: number;
}

export const maxLimit = 100;

/** The limit and offset query parameters every paginated list accepts. */
export const pageQuery = {
    limit: Joi.number().integer().min(1).max(maxLimit).default(20).description('Records per page, 1 to 100'),
    offset: Joi.number().integer().min(0).default(0).description('Records to skip')
};


/** The list envelope `{data, count, total}`, with the total also in X-Total-Count. */
export function listResponse<T>(h: Pick<ResponseToolkit, 'response'>, result: ListResult<T>): ResponseObject {

    return h.response({ data: result.data, count: result.data.length, total: result.total })
        .header('X-Total-Count', String(result.total));
}


declare module '@hapi/hapi' {
    interface RequestApplicationState {
        // True once the request's handler has committed a new record: what a dropped reply says was written.
        written?: boolean;
    }
}


/**
 * A 201 with the record as body and its path in Location: the path the request was posted to plus the record's id,
 * or, for a record made by a POST elsewhere, the path of its collection within the namespace (after the route prefix);
 * under an instance, behind its base path. The request is marked written, unless it is replayed: then the record is
 * an earlier request's, and the answer says so with Idempotent-Replayed.
 */
export function createdResponse(h: Pick<ResponseToolkit, 'response'>, request: Pick<Request, 'path' | 'app'> & { route: Pick<RequestRoute, 'realm'> }, record: { id: string }, collection?: string, replayed = false): ResponseObject {

    const path = collection === undefined ? request.path : `${request.route.realm.modifiers.route.prefix}${collection}`;
    const response = h.response(record).code(201).location(`${request.app.scope.basePath}${path}/${record.id}`);
    if (replayed) {
        return response.header('Idempotent-Replayed', 'true');
    }

    request.app.written = true;
    return response;
}


/** The joi schema of a list envelope of the given record schema. */
export function listSchema(record: Joi.ObjectSchema, name: string): Joi.ObjectSchema {

    return Joi.object({
        data: Joi.array().items(record).required().label(`${name}Data`),
        count: Joi.number().integer().min(0).required(),
        total: Joi.number().integer().min(0).required()
    }).label(name);
}
