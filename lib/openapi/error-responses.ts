import Boom from '@hapi/boom';
import Joi from 'joi';

import { adminMessage } from '../auth';
import { defaultCode, errorBody, failure, unsupportedMediaMessage } from '../errors';
import { limitReached } from '../instances/registry';
import { maxJsonDepth } from '../nesting';
import { always } from '../always';


// What a route may declare about errors its rules produce that its config cannot show (409, 422, 501 ...):
// `plugins: { localgate: { errors: { 409: 'booking_overlap: ...' } } }`, a plain list of statuses, or for a status
// the Boom error itself (`{ 501: notProvisioned() }`), whose body is then the example.
export type DeclaredErrors = number[] | Record<number, string | Boom.Boom>;

// Facts about a route, read from its own config: what the error rules of this file decide on.
export interface RouteFacts {
    auth: 'none' | 'required' | 'optional';
    validates: boolean;
    hasParams: boolean;
    admin: boolean;
    maxBytes: number | undefined;
    referencesIds: boolean;
    declared: Map<number, string | Boom.Boom>;
}


/** The body of every error response: hapi's Boom shape plus a stable code. */
export const errorSchema = Joi.object({
    statusCode: Joi.number().integer().min(400).max(599).required().description('The HTTP status'),
    error: Joi.string().required().description('The HTTP reason phrase'),
    message: Joi.string().required().description('What went wrong, in words a person can act on'),
    code: Joi.string().pattern(/^[a-z0-9_]+$/).required().description('Stable machine-readable code, snake_case (validation_failed, booking_overlap, pay_not_provisioned ...)'),
    details: Joi.array().items(Joi.object({
        field: Joi.string().required().description('The parameter or body field, dotted for nested ones'),
        message: Joi.string().required().description('Why it was refused')
    }).label('ErrorDetail')).description('One entry per refused field').label('ErrorDetails'),
    configured: Joi.boolean().description('501 only: whether the namespace backend is configured'),
    schema_ready: Joi.boolean().description('501 from pay only: whether the pay schema is provisioned')
}).label('ErrorBody');


// A rule without `applies` documents its status only where a route declares it.
interface ErrorRule {
    applies?: (route: RouteFacts) => boolean;
    description: (route: RouteFacts) => string;
    example: (route: RouteFacts) => object;
}


// The same few error bodies and their schemas recur on every route of every server: each is built once per process.
const examples = new Map<string, object>();
const exampleSchemas = new Map<string, Joi.ObjectSchema>();


/** An error body as the server sends it (see lib/errors.ts): Boom's payload plus code and extra fields. */
function errorExample(statusCode: number, code: string, message: string, extra: Record<string, unknown> = {}): object {

    const key = JSON.stringify([statusCode, code, message, extra]);
    let example = examples.get(key);
    if (!example) {
        example = errorBody(failure(statusCode, code, message, extra));
        examples.set(key, example);
    }

    return example;
}


/** The error schema with an example body. */
export function errorSchemaWith(example: object): Joi.ObjectSchema {

    const key = JSON.stringify(example);
    let schema = exampleSchemas.get(key);
    if (!schema) {
        schema = errorSchema.meta({ examples: example });
        exampleSchemas.set(key, schema);
    }

    return schema;
}


// Every error status a route can give, decided from its config; a route declares those only its rules know (409, 501).
const errorRules: Record<number, ErrorRule> = {
    400: {
        applies: (route) => route.validates || route.maxBytes !== undefined,
        description: (route) => `Invalid parameters or body (code validation_failed, with details naming each field)${route.maxBytes === undefined ? '' : `, a body that is not JSON, or one nested deeper than ${maxJsonDepth} levels (code body_too_deep)`}`,
        example: () => errorExample(400, 'validation_failed', 'Invalid query: limit must be less than or equal to 100', { details: [{ field: 'limit', message: 'limit must be less than or equal to 100' }] })
    },
    401: {
        applies: (route) => route.auth !== 'none',
        description(route) {

            return route.auth === 'required' ?
                'The bearer token is missing, malformed, expired or badly signed' :
                'A bearer token was sent and is malformed, expired or badly signed (sending none is fine)';
        },
        example: () => errorExample(401, 'unauthorized', 'Token expired')
    },
    402: {
        description: () => 'The payment provider refused the payment at once (code card_declined): nothing moved',
        example: () => errorExample(402, 'card_declined', 'Provider card declined this deposit: the card was refused, nothing moved', { details: [{ field: 'amount', message: 'Provider card declined this deposit: the card was refused, nothing moved' }] })
    },
    403: {
        applies: (route) => route.admin,
        description: () => 'The token is valid but its role claim is not admin (code admin_required)',
        example: () => errorExample(403, 'admin_required', adminMessage)
    },
    // Any path may answer 404 and 405 in the one error shape: an id that names nothing, an empty path parameter
    // (/_instances//reset routes nowhere), a path or a method no route takes, and an instance that is not live.
    404: {
        applies: () => true,
        description: (route) => `${route.hasParams ? 'No record with this id, or one that belongs to another caller (code <record>_not_found); no' : 'No'} route at this path, an empty path parameter among them (code not_found); under /i/<id>, an instance that is not live (code instance_not_found)`,
        example: (route) => (route.hasParams ? errorExample(404, 'not_found', 'There is no record with this id') : errorExample(404, 'not_found', 'No route serves /v1/nowhere: the routes are listed at /docs'))
    },
    405: {
        applies: () => true,
        description: () => 'The path does not route this method (code method_not_allowed), with an Allow header naming those it routes',
        example: () => errorExample(405, 'method_not_allowed', 'PATCH is not allowed on /v1/commerce/products: use GET, POST')
    },
    409: {
        description: () => 'The request conflicts with the current state of a record',
        example: () => errorExample(409, 'conflict', 'A record with the same key already exists')
    },
    413: {
        applies: (route) => route.maxBytes !== undefined,
        description: (route) => `The body is larger than ${always(route.maxBytes, 'a body route\'s limit') / 1024} KiB`,
        example: (route) => errorExample(413, defaultCode(413), `Payload content length greater than maximum allowed: ${route.maxBytes}`)
    },
    415: {
        applies: (route) => route.maxBytes !== undefined,
        description: () => 'The body is not application/json',
        example: () => errorExample(415, defaultCode(415), unsupportedMediaMessage)
    },
    // A body field naming another record (business_id, vehicle_id ...) must name one that exists.
    422: {
        applies: (route) => route.referencesIds,
        description: () => 'The body references a record that does not exist',
        example: () => errorExample(422, 'business_not_found', 'business_id refers to no existing business', { details: [{ field: 'business_id', message: 'business_id refers to no existing business' }] })
    },
    429: {
        description: () => 'MAX_INSTANCES instances are live (code instance_limit_reached): delete one or let idle ones expire',
        example: () => errorExample(429, 'instance_limit_reached', limitReached(1000).message)
    },
    501: {
        description: () => 'The namespace backend is not provisioned in this environment: the body says what to run',
        example: () => errorExample(501, defaultCode(501), 'The namespace backend is not provisioned in this environment')
    }
};

/** The error statuses a route may declare: those the rules above describe. */
export const errorStatuses = Object.keys(errorRules).map(Number);


// What a route declares of a status (its words, or the error itself) replaces the rule's words, but for 400: there it adds the rules its schemas cannot
// say to the words every route shares.
function describedError(status: number, shared: string, declared: string | Boom.Boom | undefined): string {

    if (Boom.isBoom(declared)) {
        const { code, message } = errorBody(declared);
        return `${code}: ${message}`;
    }

    if (!declared) {
        return shared;
    }

    return status === 400 ? `${shared}; ${declared}` : declared;
}


/** The error responses a route can give, each with its description and an example body. */
export function errorResponses(route: RouteFacts): Map<number, { description: string; example: object }> {

    const statuses = new Map<number, { description: string; example: object }>();
    for (const [status, rule] of Object.entries(errorRules)) {
        const declared = route.declared.get(Number(status));
        if (rule.applies?.(route) || declared !== undefined) {
            statuses.set(Number(status), {
                description: describedError(Number(status), rule.description(route), declared),
                example: Boom.isBoom(declared) ? errorBody(declared) : rule.example(route)
            });
        }
    }

    return statuses;
}
