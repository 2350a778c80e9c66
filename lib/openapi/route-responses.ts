import Http from 'node:http';

import type { RequestRoute, Server } from '@hapi/hapi';

import { requestIdHeaders } from '../request-id';
import { errorResponses, errorSchemaWith, type RouteFacts } from './error-responses';
import { shapeOf } from './joi-shape';
import { routeFacts } from './route-facts';


/** The name of the bearer token's security scheme in the document. */
export const securityScheme = 'bearer';

const locationHeader = {
    Location: { description: 'Path of the new record', required: true, schema: { type: 'string' } }
};

const totalCountHeader = {
    'X-Total-Count': { description: 'Number of records matching the filters (total in the body)', required: true, schema: { type: 'integer', minimum: 0 } }
};

const authenticateHeader = {
    'WWW-Authenticate': { description: 'Bearer, with the reason when a token was refused', required: true, schema: { type: 'string' } }
};

const allowHeader = {
    Allow: { description: 'The methods the path routes', required: true, schema: { type: 'string' } }
};

const replayedHeader = {
    'Idempotent-Replayed': { description: 'true when this is the stored answer to an earlier request with the same Idempotency-Key', schema: { type: 'string', enum: ['true'] } }
};



/** The responses of a route beyond its success schemas, as hapi-swagger reads them: success headers, and errors with their body. */
function extraResponses(route: RequestRoute, facts: RouteFacts): Record<number, object> {

    const responses: Record<number, object> = {};
    const status = route.settings.response?.status ?? {};
    // A route with an Idempotency-Key replays its answers, errors too.
    const replayed = shapeOf(route.settings.validate?.headers).keys.includes('idempotency-key') ? replayedHeader : {};
    for (const code of Object.keys(status).map(Number)) {
        responses[code] = { description: code === 200 ? 'Successful' : Http.STATUS_CODES[code], headers: { ...requestIdHeaders, ...replayed } };
    }

    // A created record (one with an id) has a path; a snapshot has none.
    if (shapeOf(status[201]).keys.includes('id')) {
        responses[201] = { description: 'Created', headers: { ...requestIdHeaders, ...locationHeader, ...replayed } };
    }

    if (['data', 'count', 'total'].every((key) => shapeOf(status[200]).keys.includes(key))) {
        responses[200] = { description: 'Successful', headers: { ...requestIdHeaders, ...totalCountHeader } };
    }

    for (const [code, { description, example }] of errorResponses(facts)) {
        const headers = { ...requestIdHeaders, ...(code === 401 ? authenticateHeader : {}), ...(code === 405 ? allowHeader : {}), ...(code === 402 || code === 409 || code === 422 ? replayed : {}) };
        responses[code] = { description, schema: errorSchemaWith(example), headers };
    }

    return responses;
}


// The security requirement of a route: none, the bearer token, or the bearer token or nothing.
function security(auth: RouteFacts['auth']): object[] | undefined {

    if (auth === 'none') {
        return undefined;
    }

    return auth === 'required' ? [{ [securityScheme]: [] }] : [{ [securityScheme]: [] }, {}];
}


/** Gives every route but those of skipPlugin (the documentation's own) its error responses, success headers and security requirement. */
export function describeRoutes(server: Server, skipPlugin: string): void {

    for (const route of server.table()) {
        if (route.realm.plugin === skipPlugin) {
            continue;
        }

        const facts = routeFacts(server, route);
        const own = route.settings.plugins?.['hapi-swagger'] ?? {};
        route.settings.plugins = {
            ...route.settings.plugins,
            'hapi-swagger': {
                security: security(facts.auth),
                ...own,
                responses: { ...extraResponses(route, facts), ...own.responses }
            }
        };
    }
}
