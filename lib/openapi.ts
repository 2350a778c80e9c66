import Fs from 'node:fs';
import Http from 'node:http';
import Path from 'node:path';

import Boom from '@hapi/boom';
import Hapi, { type AuthSettings, type Plugin, type Request, type RequestRoute, type Server } from '@hapi/hapi';
import Inert from '@hapi/inert';
import type HapiSwagger from 'hapi-swagger';
import Joi from 'joi';

import { adminMessage, requireAdmin } from './auth';
import { defaultCode, errorBody, failure } from './errors';
import { limitReached } from './instances/registry';
import { packageRoot } from './paths';
import { requestIdHeaders } from './request-id';
import { swaggerUiFolder } from './swagger-ui';


// What a route may declare about errors its rules produce that its config cannot show (409, 422, 501 ...):
// `plugins: { localgate: { errors: { 409: 'booking_overlap: ...' } } }`, a plain list of statuses, or for a status
// the Boom error itself (`{ 501: notProvisioned() }`), whose body is then the example.
export type DeclaredErrors = number[] | Record<number, string | Boom.Boom>;

declare module '@hapi/hapi' {
    interface PluginSpecificConfiguration {
        localgate?: {
            errors?: DeclaredErrors;
        };
    }
}


export const documentPath = '/openapi.json';

export const docsPath = '/docs';

export const docsAssetsPath = '/docs/assets/';

export const securityScheme = 'bearer';

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


// Facts about a route, read from its own config: what the error rules below decide on.
interface RouteFacts {
    auth: 'none' | 'required' | 'optional';
    validates: boolean;
    hasParams: boolean;
    admin: boolean;
    maxBytes: number | undefined;
    referencesIds: boolean;
    declared: Map<number, string | Boom.Boom>;
}

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
function errorSchemaWith(example: object): Joi.ObjectSchema {

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
        description: () => 'Invalid parameters or body (code validation_failed, with details naming each field), or a body that is not JSON',
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
    403: {
        applies: (route) => route.admin,
        description: () => 'The token is valid but its role claim is not admin (code admin_required)',
        example: () => errorExample(403, 'admin_required', adminMessage)
    },
    404: {
        applies: (route) => route.hasParams,
        description: () => 'No record with this id, or one that belongs to another caller',
        example: () => errorExample(404, 'not_found', 'There is no record with this id')
    },
    409: {
        description: () => 'The request conflicts with the current state of a record',
        example: () => errorExample(409, 'conflict', 'A record with the same key already exists')
    },
    413: {
        applies: (route) => route.maxBytes !== undefined,
        description: (route) => `The body is larger than ${route.maxBytes! / 1024} KiB`,
        example: (route) => errorExample(413, defaultCode(413), `Payload content length greater than maximum allowed: ${route.maxBytes}`)
    },
    415: {
        applies: (route) => route.maxBytes !== undefined,
        description: () => 'The body is not application/json',
        example: () => errorExample(415, defaultCode(415), 'Unsupported Media Type')
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

const errorStatus = Joi.number().valid(...Object.keys(errorRules).map(Number));

const declaredSchema = Joi.alternatives(
    Joi.array().items(errorStatus),
    Joi.object().pattern(errorStatus, Joi.alternatives(Joi.string().min(1), Joi.object().instance(Boom.Boom)))
);


const locationHeader = {
    Location: { description: 'Path of the new record', schema: { type: 'string' } }
};

const totalCountHeader = {
    'X-Total-Count': { description: 'Number of records matching the filters (total in the body)', schema: { type: 'integer' } }
};

const authenticateHeader = {
    'WWW-Authenticate': { description: 'Bearer, with the reason when a token was refused', schema: { type: 'string' } }
};

const replayedHeader = {
    'Idempotent-Replayed': { description: 'true when this is the stored answer to an earlier request with the same Idempotency-Key', schema: { type: 'string', enum: ['true'] } }
};


interface SchemaShape {
    keys: string[];
    // A key named *_id that the schema does not forbid: the body names another record.
    referencesIds: boolean;
}


// From joi's extension API rather than describe(), which walks and validates a whole schema: a tenth of a second
// at every start for the schemas of all the routes.
function shapeOf(schema: unknown): SchemaShape {

    const children: { key: string; schema: Joi.Schema }[] = Joi.isSchema(schema) ? schema.$_terms.keys ?? [] : [];
    return {
        keys: children.map((child) => child.key),
        referencesIds: children.some((child) => child.key.endsWith('_id') && child.schema.$_getFlag('presence') !== 'forbidden')
    };
}


function routeFacts(server: Server, route: RequestRoute): RouteFacts {

    const { settings } = route;
    const auth = (settings.auth as AuthSettings | false | undefined) === false ? null : settings.auth ?? server.auth.settings.default;
    const validate = settings.validate!;
    const declared: DeclaredErrors = Joi.attempt(settings.plugins?.localgate?.errors ?? [], declaredSchema, `Invalid plugins.localgate.errors of ${route.method.toUpperCase()} ${route.path}:`);

    return {
        auth: auth ? auth.mode as 'required' | 'optional' : 'none',
        validates: Boolean(validate.params || validate.query || validate.payload || validate.headers),
        hasParams: route.path.includes('{'),
        // hapi keeps a route's extensions as lists of methods.
        admin: Boolean((settings.ext as { onPostAuth?: { method: unknown[] }[] } | undefined)?.onPostAuth?.some((step) => step.method.includes(requireAdmin))),
        // hapi reads a body on every method but GET (settings.payload is null there).
        maxBytes: settings.payload?.maxBytes,
        referencesIds: shapeOf(validate.payload).referencesIds,
        declared: new Map(Array.isArray(declared) ? declared.map((status) => [status, '']) : Object.entries(declared).map(([status, error]) => [Number(status), error]))
    };
}


/** The error responses a route can give, each with its description and an example body. */
function errorStatuses(route: RouteFacts): Map<number, { description: string; example: object }> {

    const statuses = new Map<number, { description: string; example: object }>();
    for (const [status, rule] of Object.entries(errorRules)) {
        const declared = route.declared.get(Number(status));
        if (rule.applies?.(route) || declared !== undefined) {
            statuses.set(Number(status), {
                description: typeof declared === 'string' && declared ? declared : rule.description(route),
                example: Boom.isBoom(declared) ? errorBody(declared) : rule.example(route)
            });
        }
    }

    return statuses;
}


/** The responses of a route beyond its success schemas, as hapi-swagger reads them: success headers, and errors with their body. */
function extraResponses(route: RequestRoute, facts: RouteFacts): Record<number, object> {

    const responses: Record<number, object> = {};
    const status = route.settings.response?.status ?? {};
    // A route with an Idempotency-Key replays its answers, errors too.
    const replayed = shapeOf(route.settings.validate!.headers).keys.includes('idempotency-key') ? replayedHeader : {};
    for (const code of Object.keys(status).map(Number)) {
        responses[code] = { description: code === 200 ? 'Successful' : Http.STATUS_CODES[code], headers: { ...requestIdHeaders, ...replayed } };
    }

    if (status[201]) {
        responses[201] = { description: 'Created', headers: { ...requestIdHeaders, ...locationHeader, ...replayed } };
    }

    if (['data', 'count', 'total'].every((key) => shapeOf(status[200]).keys.includes(key))) {
        responses[200] = { description: 'Successful', headers: { ...requestIdHeaders, ...totalCountHeader } };
    }

    for (const [code, { description, example }] of errorStatuses(facts)) {
        const headers = { ...requestIdHeaders, ...(code === 401 ? authenticateHeader : {}), ...(code === 409 || code === 422 ? replayed : {}) };
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


/** Gives every route but the documentation's own its error responses, success headers and security requirement. */
function describeRoutes(server: Server): void {

    for (const route of server.table()) {
        if (route.realm.plugin === pluginName) {
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


interface SchemaObject {
    $ref?: string;
    additionalProperties?: boolean;
    [keyword: string]: unknown;
}

interface OpenApiDocument {
    paths: Record<string, Record<string, { requestBody?: { required?: boolean; content: Record<string, { schema: SchemaObject }> } }>>;
    components: { schemas: Record<string, SchemaObject> };
}

const componentRef = '#/components/schemas/';

// hapi-swagger names a component after the key it first met it under (status, type, string, Model1) unless it has a
// label; a label would rename the field in the joi errors of a request body, so such components are inlined instead.
const unnamedComponent = /^(?:[a-z].*|Model\d*)$/;


/** A copy of a schema where every reference to an unnamed component is replaced by that component. */
function inlineUnnamed(node: unknown, schemas: Record<string, SchemaObject>): unknown {

    if (Array.isArray(node)) {
        return node.map((item) => inlineUnnamed(item, schemas));
    }

    if (!(node instanceof Object)) {
        return node;
    }

    const { $ref } = node as SchemaObject;
    const name = $ref?.slice(componentRef.length);
    if (name && unnamedComponent.test(name)) {
        return inlineUnnamed(schemas[name], schemas);
    }

    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inlineUnnamed(value, schemas)]));
}


/**
 * Completes what hapi-swagger leaves out: the body of an operation that takes one is required (hapi refuses a missing
 * one) and has no properties beyond its own (joi refuses them), and no component is named after a field.
 */
function completeDocument(document: OpenApiDocument): void {

    const { schemas } = document.components;
    for (const item of Object.values(document.paths)) {
        for (const operation of Object.values(item)) {
            if (operation.requestBody) {
                operation.requestBody.required = true;
                const { $ref } = operation.requestBody.content['application/json']!.schema;
                schemas[$ref!.slice(componentRef.length)]!.additionalProperties = false;
            }
        }
    }

    document.paths = inlineUnnamed(document.paths, schemas) as OpenApiDocument['paths'];
    const named = Object.entries(schemas).filter(([name]) => !unnamedComponent.test(name));
    document.components.schemas = inlineUnnamed(Object.fromEntries(named), schemas) as Record<string, SchemaObject>;
}


function readPackage(): { name: string; version: string; description: string } {

    return JSON.parse(Fs.readFileSync(Path.join(packageRoot, 'package.json'), 'utf8'));
}


// The files of the docs page, as hapi-swagger serves them: swagger-ui's own, and hapi-swagger's extend.js.
const uiFiles = [
    'favicon-16x16.png', 'favicon-32x32.png', 'index.html', 'oauth2-redirect.html',
    'swagger-ui-bundle.js', 'swagger-ui-bundle.js.map', 'swagger-ui-standalone-preset.js', 'swagger-ui-standalone-preset.js.map',
    'swagger-ui.css', 'swagger-ui.css.map', 'swagger-ui.js', 'swagger-ui.js.map'
];

const extendFolder = Path.join(Path.dirname(require.resolve('hapi-swagger/package.json')), 'public');


/** hapi-swagger's options for this service. */
function swaggerOptions(): Omit<HapiSwagger.RegisterOptions, 'validatorUrl'> & { validatorUrl: null } {

    const pack = readPackage();
    return {
        OAS: 'v3.0',
        info: {
            title: pack.name,
            version: pack.version,
            description: `${pack.description} Mint a token with \`localgate token <subject>\` and use it as the bearer token (Authorize).`
        },
        jsonPath: documentPath,
        documentationPath: docsPath,
        swaggerUIPath: docsAssetsPath,
        routesBasePath: docsAssetsPath,
        auth: false,
        grouping: 'tags',
        definitionPrefix: 'useLabel',
        // Only standard keywords: no x-format, x-constraint or x-meta beside them.
        xProperties: false,
        tags: [
            { name: 'commerce', description: 'Local businesses, products, offers, inquiries and scam reports' },
            { name: 'logistics', description: 'Vehicles, bookings and pickup and drop-off locations' },
            { name: 'pay', description: 'Wallets, token types and the fiat gateway: data endpoints answer 501 until pay is provisioned' },
            { name: 'weather', description: 'Reserved: forecasts answer 501 until a weather backend is provisioned' },
            { name: 'health', description: 'The state of each namespace database' },
            { name: 'instances', description: 'Isolated, disposable data sets for test suites (admin token): every endpoint above also answers under an instance\'s base path /i/<id>' },
            { name: 'console', description: 'Console only: persona and admin tokens and the live request log, mounted on a loopback address or with CONSOLE_API=on' }
        ],
        securityDefinitions: {
            [securityScheme]: {
                type: 'http',
                scheme: 'bearer',
                bearerFormat: 'JWT',
                description: 'A JWT signed by this localgate: `localgate token <subject>` prints one'
            }
        },
        // No call leaves the machine: no online validator badge.
        validatorUrl: null,
        uiOptions: { persistAuthorization: true }
    };
}


interface Documentation {
    // A server of its own for hapi-swagger, vision and handlebars: it renders the docs page, and builds the document
    // of the service's routes from a request to the service (hapi-swagger reads the routes from request.server).
    server: Server;
    document(request: Request): Promise<OpenApiDocument>;
}


/** Loads hapi-swagger and its page renderer, on a server of their own; the routes are described once, here. */
async function loadDocumentation(service: Server): Promise<Documentation> {

    // The stand-in for swagger-ui-dist goes first (see lib/swagger-ui.ts).
    await import('./swagger-ui');
    const [{ default: HapiSwagger }, { default: Vision }] = await Promise.all([import('hapi-swagger'), import('@hapi/vision')]);
    const server = Hapi.server();
    await server.register([Inert, Vision, { plugin: HapiSwagger, options: swaggerOptions() }]);
    await server.initialize();
    describeRoutes(service);
    // hapi-swagger's exposed builder: the one its own document route calls, given the service's request.
    const { getJSON } = (server.plugins as Record<string, unknown>)['hapi-swagger'] as { getJSON(options: null, request: Request): Promise<OpenApiDocument> };
    return { server, document: (request) => getJSON(null, request) };
}


const pluginName = 'localgate-openapi';

export const openapiPlugin: Plugin<void> = {
    name: pluginName,
    async register(server) {

        // hapi-swagger, vision and handlebars take a fifth of a start: they load with the first request for the
        // document or the docs page, which are the only ones that need them.
        let documentation: Promise<Documentation> | undefined;
        const loaded = () => {

            documentation ??= loadDocumentation(server);
            return documentation;
        };

        await server.register(Inert);
        server.ext('onPreStart', () => {

            // A declaration the document cannot describe stops the start, not the first request for the document.
            for (const route of server.table()) {
                routeFacts(server, route);
            }
        });
        server.ext('onPostStop', async () => {

            await (await documentation)?.server.stop();
        });

        const own = { auth: false as const, tags: [] as string[] };
        server.route([
            {
                method: 'GET',
                path: documentPath,
                options: {
                    ...own,
                    async handler(request) {

                        const document = await (await loaded()).document(request);
                        completeDocument(document);
                        return document;
                    }
                }
            },
            {
                method: 'GET',
                path: docsPath,
                options: {
                    ...own,
                    async handler(request) {

                        // The page as hapi-swagger renders it (its type is hapi's for a string: text/html, utf-8).
                        const page = await (await loaded()).server.inject({ url: request.url.pathname + request.url.search });
                        return page.payload;
                    }
                }
            },
            ...uiFiles.map((file) => ({ method: 'GET' as const, path: docsAssetsPath + file, options: { ...own, files: { relativeTo: swaggerUiFolder }, handler: { file } } })),
            { method: 'GET' as const, path: `${docsAssetsPath}extend.js`, options: { ...own, files: { relativeTo: extendFolder }, handler: { file: 'extend.js' } } }
        ]);
    }
};
