import Fs from 'node:fs';
import Path from 'node:path';

import Boom from '@hapi/boom';
import Code from '@hapi/code';
import Hapi, { type RequestRoute, type Server, type ServerInjectOptions, type ServerRoute } from '@hapi/hapi';
import Lab from '@hapi/lab';
import { Validator } from '@seriousme/openapi-schema-validator';
import Joi from 'joi';

import Pack from '../package.json';

import { pagePaths } from '../lib/console';
import { failure } from '../lib/errors';
import { asyncApiPath } from '../lib/events/asyncapi';
import { builtInNamespaces } from '../lib/namespaces';
import { docsAssetsPath, docsPath, documentPath, openapiPlugin } from '../lib/openapi';
import { errorSchema } from '../lib/openapi/error-responses';
import { SchemaConverter } from '../lib/openapi/joi-schema';
import { shapeOf } from '../lib/openapi/joi-shape';
import { securityScheme } from '../lib/openapi/route-responses';
import { requestIdHeaders } from '../lib/request-id';
import { bearer, body, testServer } from './helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


interface Response {
    description: string;
    headers?: Record<string, unknown>;
    content?: { 'application/json': { schema: { $ref?: string }; example?: object } };
}

interface Operation {
    summary?: string;
    operationId: string;
    tags?: string[];
    security?: Record<string, string[]>[];
    parameters?: { name: string; in: string; required?: boolean }[];
    requestBody?: { required?: boolean; content: { 'application/json': { schema: { $ref: string } } } };
    responses: Record<string, Response>;
}

interface Document {
    openapi: string;
    info: { title: string; version: string; description: string };
    tags: { name: string }[];
    components: { schemas: Record<string, { required?: string[]; properties: Record<string, unknown>; additionalProperties?: boolean }>; securitySchemes: Record<string, unknown> };
    paths: Record<string, Record<string, Operation>>;
}

const namespaces = ['commerce', 'logistics', 'pay', 'weather'];

const errorRef = '#/components/schemas/ErrorBody';


/** The routes the document describes: all but the documentation's own (the document, the docs page and its assets) and the console page's files. */
function documentedRoutes(server: Server): RequestRoute[] {

    return server.table().filter((route) => route.realm.plugin !== 'localgate-openapi' && !pagePaths.includes(route.path));
}


function operationOf(document: Document, route: RequestRoute): Operation {

    return document.paths[route.path]![route.method]!;
}


function authMode(server: Server, route: RequestRoute): 'none' | 'required' | 'optional' {

    const auth = route.settings.auth as false | { mode: 'required' | 'optional' } | undefined;
    if (auth === false) {
        return 'none';
    }

    return (auth ?? server.auth.settings.default).mode as 'required' | 'optional';
}


/** Every $ref in a part of the document. */
function refs(node: unknown): string[] {

    if (Array.isArray(node)) {
        return node.flatMap(refs);
    }

    if (node && typeof node === 'object') {
        return Object.entries(node).flatMap(([key, value]) => (key === '$ref' ? [value as string] : refs(value)));
    }

    return [];
}


describe('the OpenAPI document', () => {

    let server: Server;
    let document: Document;

    before(async () => {

        server = await testServer();
        const res = await server.inject(documentPath);
        expect(res.statusCode).to.equal(200);
        expect(res.headers['content-type']).to.contain('application/json');
        document = body<Document>(res);
    });

    after(async () => {

        await server.stop();
    });

    it('is valid OpenAPI 3.0 by an independent validator', async () => {

        const result = await new Validator().validate(JSON.parse(JSON.stringify(document)));
        expect(result.errors).to.not.exist();
        expect(result.valid).to.be.true();
        expect(document.openapi).to.match(/^3\.0\.\d$/);

        const schemas = Object.keys(document.components.schemas);
        for (const ref of refs(document)) {
            expect(schemas, ref).to.include(ref.replace('#/components/schemas/', ''));
        }
    });

    it('names the service and its version from package.json', () => {

        expect(document.info).to.include({ title: 'localgate', version: Pack.version });
    });

    it('says how to mint a token as it runs, and what Swagger UI\'s padlocks mean', () => {

        const { description } = document.info;
        expect(description).to.startWith(`${Pack.description} Mint a token with \`npx localgate token <subject>\` and give it to Authorize.`);
        expect(description).to.contain('Swagger UI draws the padlock of an optional route open even once you authorized: the token is sent all the same.');
    });

    it('reads the keys of an object schema from joi\'s internals, as the joi installed keeps them', () => {

        expect(shapeOf(Joi.object({ name: Joi.string(), business_id: Joi.string(), owner_id: Joi.any().forbidden() }))).to.equal({ keys: ['name', 'business_id', 'owner_id'], referencesIds: true });
        expect(shapeOf(Joi.object({ owner_id: Joi.any().forbidden() }))).to.equal({ keys: ['owner_id'], referencesIds: false });
        expect(shapeOf(undefined)).to.equal({ keys: [], referencesIds: false });
    });

    it('describes every route of the server, and only those', () => {

        const exclusions = server.table().filter((route) => route.realm.plugin === 'localgate-openapi').map((route) => route.path);
        expect(exclusions).to.include([documentPath, asyncApiPath, docsPath, `${docsAssetsPath}swagger-ui-bundle.js`]);
        expect(exclusions.every((path) => path === documentPath || path === asyncApiPath || path === docsPath || path.startsWith(docsAssetsPath))).to.be.true();

        const routes = documentedRoutes(server).map((route) => `${route.method} ${route.path}`).sort();
        const operations = Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`)).sort();
        expect(operations).to.equal(routes);
        expect(routes).to.include(['get /health', 'get /v1/pay/status', 'get /v1/weather/forecast']);
    });

    it('groups operations by namespace, each with a summary and its own id', () => {

        expect(document.tags.map((tag) => tag.name)).to.include(namespaces);
        const ids = new Set<string>();
        for (const route of documentedRoutes(server)) {
            const operation = operationOf(document, route);
            const namespace = /^\/_(?:instances|faults|requests|export|clock|events|webhooks|scenarios?\b|presentations)/.test(route.path) ? 'instances' : /^\/(?:v1\/)?([^/]+)\//.exec(route.path)?.[1] ?? 'health';
            expect(operation.tags, route.path).to.equal([namespace]);
            expect(operation.summary, route.path).to.be.a.string().and.to.not.be.empty();
            expect(ids.has(operation.operationId), operation.operationId).to.be.false();
            ids.add(operation.operationId);
        }

        expect(document.tags.map((tag) => tag.name)).to.include([...new Set(Object.values(document.paths).flatMap((item) => Object.values(item).flatMap((operation) => operation.tags!)))]);
    });

    it('asks for the bearer token where a route needs or takes one', () => {

        expect(document.components.securitySchemes[securityScheme]).to.equal({
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'A JWT signed by this localgate: `npx localgate token <subject>` prints one'
        });

        const expected = { none: undefined, required: [{ bearer: [] }], optional: [{ bearer: [] }, {}] };
        for (const route of documentedRoutes(server)) {
            expect(operationOf(document, route).security, route.path).to.equal(expected[authMode(server, route)]);
        }
    });

    it('documents every success status with its schema, the Location of a creation and the X-Total-Count of a list', () => {

        for (const route of documentedRoutes(server)) {
            const responses = operationOf(document, route).responses;
            // A route that never succeeds here (the weather forecast) declares its 501 instead.
            const successes = Object.keys(responses).filter((status) => status.startsWith('2'));
            expect(successes.length > 0 || Object.keys(responses).includes('501'), `${route.method} ${route.path}`).to.be.true();
            for (const [status, schema] of Object.entries(route.settings.response!.status ?? {})) {
                if (status === '204') {
                    expect(responses[status], `${route.path} 204`).to.equal({ description: 'No Content', headers: requestIdHeaders });
                    continue;
                }

                const name = ((schema as Joi.Schema).describe().flags as { label: string }).label;
                expect(responses[status]!.content!['application/json'].schema.$ref, `${route.path} ${status}`).to.equal(`#/components/schemas/${name}`);
                if (status === '201') {
                    // A created record has a path; a snapshot, which has no id, has none.
                    const located = Object.keys((schema as Joi.Schema).describe().keys).includes('id');
                    expect(Object.keys(responses[status]!.headers!).includes('Location'), route.path).to.equal(located);
                    expect(located, route.path).to.equal(route.path !== '/_instances/{instance_id}/snapshots');
                }

                if (name.endsWith('List')) {
                    expect(responses[status]!.headers, route.path).to.include('X-Total-Count');
                }
            }
        }
    });

    it('documents the error statuses each route can give, with the error body', () => {

        const payGated = (route: RequestRoute) => route.path.startsWith('/v1/pay/') && route.path !== '/v1/pay/status';
        const rules: [number, (route: RequestRoute) => boolean][] = [
            [400, (route) => Object.values(route.settings.validate!).some((value) => Joi.isSchema(value)) || route.method !== 'get'],
            [401, (route) => authMode(server, route) !== 'none'],
            // Every path: an unknown route, an empty path parameter, an instance that is not live.
            [404, () => true],
            [405, () => true],
            // hapi reads a body on every method but GET.
            [413, (route) => route.method !== 'get'],
            [415, (route) => route.method !== 'get'],
            [501, (route) => payGated(route) || route.path === '/v1/weather/forecast']
        ];

        for (const route of documentedRoutes(server)) {
            const responses = operationOf(document, route).responses;
            for (const [status, applies] of rules) {
                expect(Boolean(responses[status]), `${route.method} ${route.path} ${status}`).to.equal(applies(route));
            }

            for (const [status, response] of Object.entries(responses).filter(([code]) => Number(code) >= 400 && code !== '503')) {
                const { schema, example } = response.content!['application/json'];
                expect(schema.$ref, `${route.path} ${status}`).to.equal(errorRef);
                expect(response.description, `${route.path} ${status}`).to.not.be.empty();
                expect(errorSchema.validate(example).error, `${route.path} ${status} example`).to.not.exist();
                expect(example).to.include({ statusCode: Number(status) });
            }
        }

        const payData = documentedRoutes(server).filter(payGated);
        expect(payData.map((route) => `${route.method.toUpperCase()} ${route.path}`).sort()).to.equal([
            'GET /v1/pay/gateway/providers',
            'GET /v1/pay/tokens',
            'GET /v1/pay/tokens/{token_symbol}',
            'GET /v1/pay/wallet',
            'GET /v1/pay/wallet/transactions',
            'GET /v1/pay/wallet/transactions/{transaction_id}',
            'POST /v1/pay/gateway/deposit',
            'POST /v1/pay/gateway/withdraw'
        ]);
        expect(operationOf(document, documentedRoutes(server).find((route) => route.path === '/v1/pay/status')!).responses).to.only.include(['200', '404', '405']);
        expect(document.paths['/v1/logistics/bookings/{booking_id}']!.get!.responses[401]!.headers).to.include('WWW-Authenticate');
    });

    it('documents 422 where a body names another record, and what each route declares', () => {

        for (const route of documentedRoutes(server)) {
            const responses = operationOf(document, route).responses;
            const payload = route.settings.validate!.payload as Joi.ObjectSchema | undefined;
            const keys = (payload?.describe().keys ?? {}) as Record<string, { flags?: { presence?: string } }>;
            const referencing = Object.entries(keys).some(([key, value]) => key.endsWith('_id') && value.flags?.presence !== 'forbidden');
            if (referencing) {
                expect(responses, `${route.path} 422`).to.include('422');
            }

            const declared = route.settings.plugins?.localgate?.errors ?? [];
            for (const [status, error] of Array.isArray(declared) ? declared.map((code) => [String(code), ''] as const) : Object.entries(declared)) {
                expect(responses, `${route.path} ${status}`).to.include(status);
                if (Boom.isBoom(error)) {
                    expect(responses[status]!.content!['application/json'].example, `${route.path} ${status}`).to.equal({ ...error.output.payload, ...error.data });
                }
                else if (error && status === '400') {
                    // A route's own 400 rules follow the words every route shares.
                    expect(responses[status]!.description).to.endWith(`; ${error}`);
                }
                else if (error) {
                    expect(responses[status]!.description).to.equal(error);
                }
            }
        }

        expect(document.paths['/v1/commerce/products']!.post!.responses).to.include('422');
        expect(document.paths['/v1/logistics/bookings']!.post!.responses).to.include(['409', '422']);
        expect(document.paths['/v1/commerce/scam-reports']!.post!.responses).to.include(['409', '422']);
        expect(document.paths['/v1/pay/gateway/deposit']!.post!.responses).to.include(['409', '422']);
        expect(document.paths['/v1/pay/gateway/withdraw']!.post!.responses).to.include(['409', '422']);
    });

    it('requires the body of every operation that takes one but those standing for their defaults, with the required fields of its schema and none set by the service', () => {

        for (const route of documentedRoutes(server).filter((candidate) => candidate.settings.validate!.payload)) {
            const requestBody = operationOf(document, route).requestBody!;
            const name = requestBody.content['application/json'].schema.$ref.replace('#/components/schemas/', '');
            // A body that may be left out stands for its defaults.
            expect(requestBody.required, route.path).to.equal(!['NewInstance', 'RequestPattern', 'WebhookDeliveryPattern', 'WebhookRotation', 'WebhookResend'].includes(name));
            const schema = document.components.schemas[name]!;
            // A new instance takes defaults for everything; a clock change takes one of two fields; an empty request
            // pattern matches every request, and an empty delivery pattern every attempt; a rotation takes its default
            // overlap, a resend every endpoint that matches; a presentation takes a catalogue id or a file's text.
            if (['NewInstance', 'InstanceClock', 'NewPresentation', 'RequestPattern', 'WebhookDeliveryPattern', 'WebhookRotation', 'WebhookResend'].includes(name)) {
                expect(schema.required, name).to.not.exist();
            }
            else {
                expect(schema.required, name).to.not.be.empty();
            }

            expect(Object.keys(schema.properties), name).to.not.include(['id', 'created_at', 'created_by', 'customer_id', 'reporter_id', 'owner_id']);
        }

        expect(document.components.schemas.NewBooking!.required).to.equal(['vehicle_id', 'pickup_location_id', 'dropoff_location_id', 'pickup_at', 'return_at']);
        expect(document.components.schemas.NewProduct!.required).to.include(['name', 'price', 'currency', 'business_id']);
    });

    describe('matches what the server answers', () => {

        const cases: { name: string; method: string; path: string; url: string; status: number; token?: boolean; authorization?: string; payload?: string; type?: string }[] = [
            { name: 'an invalid query', method: 'get', path: '/v1/commerce/products', url: '/v1/commerce/products?limit=0', status: 400 },
            { name: 'a body that is not JSON', method: 'post', path: '/v1/commerce/products', url: '/v1/commerce/products', status: 400, token: true, payload: '{' },
            { name: 'a missing token', method: 'get', path: '/v1/logistics/bookings', url: '/v1/logistics/bookings', status: 401 },
            { name: 'a refused token', method: 'get', path: '/v1/commerce/products', url: '/v1/commerce/products', status: 401, authorization: 'Bearer not.a.token' },
            { name: 'an unknown id', method: 'get', path: '/v1/logistics/vehicles/{vehicle_id}', url: '/v1/logistics/vehicles/nope', status: 404 },
            { name: 'a body too large', method: 'post', path: '/v1/logistics/bookings', url: '/v1/logistics/bookings', status: 413, token: true, payload: JSON.stringify({ notes: 'x'.repeat(70_000) }) },
            { name: 'a body of another type', method: 'post', path: '/v1/commerce/scam-reports', url: '/v1/commerce/scam-reports', status: 415, token: true, payload: 'reason=scam', type: 'text/plain' },
            { name: 'a body naming no record', method: 'post', path: '/v1/commerce/products', url: '/v1/commerce/products', status: 422, token: true, payload: JSON.stringify({ name: 'Kettle', price: 1, currency: 'USD', business_id: 'nope' }) },
            { name: 'an unprovisioned pay', method: 'get', path: '/v1/pay/tokens/{token_symbol}', url: '/v1/pay/tokens/MIT', status: 501, token: true },
            { name: 'an unprovisioned weather', method: 'get', path: '/v1/weather/forecast', url: '/v1/weather/forecast', status: 501 }
        ];

        const inject = ({ token, ...options }: ServerInjectOptions & { token?: boolean }) => {

            return server.inject({ ...options, headers: { ...options.headers, ...(token ? bearer(server, 'alice') : {}) } });
        };

        const documented = (path: string, method: string) => Object.keys(document.paths[path]![method]!.responses);

        for (const { name, method, path, url, status, token, authorization, payload, type } of cases) {
            it(`lists ${status} with the error body for ${name}`, async () => {

                const res = await inject({ method, url, token, payload, headers: { 'content-type': type ?? 'application/json', ...(authorization ? { authorization } : {}) } });
                expect(res.statusCode).to.equal(status);
                expect(documented(path, method)).to.include(String(status));
                expect(errorSchema.validate(body(res)).error).to.not.exist();
            });
        }
    });

    it('shows as the 501 example the body each unprovisioned namespace answers', async () => {

        const answers: [string, string, ServerInjectOptions][] = [
            ['/v1/pay/wallet', 'get', { url: '/v1/pay/wallet' }],
            ['/v1/pay/gateway/deposit', 'post', { method: 'POST', url: '/v1/pay/gateway/deposit', payload: {} }],
            ['/v1/weather/forecast', 'get', { url: '/v1/weather/forecast' }]
        ];

        for (const [path, method, request] of answers) {
            const res = await server.inject(request);
            expect(res.statusCode, path).to.equal(501);
            expect(document.paths[path]![method]!.responses[501]!.content!['application/json'].example, path).to.equal(body(res));
        }
    });

    it('serves exactly the asset files hapi-swagger serves, from the same folders', async () => {

        // The service serves the docs page's files itself, so that hapi-swagger loads only when asked for: its own list
        // of files and folders is the reference, and a new version of it that changes them fails here.
        await import('../lib/swagger-ui');
        const { default: HapiSwagger } = await import('hapi-swagger');
        const { default: Inert } = await import('@hapi/inert');
        const { default: Vision } = await import('@hapi/vision');
        const reference = Hapi.server();
        await reference.register([Inert, Vision, { plugin: HapiSwagger, options: { routesBasePath: docsAssetsPath, swaggerUIPath: docsAssetsPath } }]);
        await reference.initialize();
        const assets = (target: Server) => target.table().map((route) => route.path).filter((path) => path.startsWith(docsAssetsPath)).sort();
        expect(assets(reference)).to.have.length(13);
        expect(assets(server)).to.equal(assets(reference));
        for (const path of assets(reference)) {
            const [ours, theirs] = [await server.inject(path), await reference.inject(path)];
            expect(ours.statusCode, path).to.equal(200);
            expect(ours.rawPayload.equals(theirs.rawPayload), path).to.be.true();
        }

        await reference.stop();
    });

    it('serves the docs page and its assets from the service itself, without a token', async () => {

        const res = await server.inject(docsPath);
        expect(res.statusCode).to.equal(200);
        expect(res.headers['content-type']).to.contain('text/html');
        expect(res.payload).to.not.match(/(?:https?:)?\/\/[a-z0-9]/i);
        expect(res.payload).to.contain(`"${documentPath}"`);

        const assets = [...res.payload.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
        expect(assets).to.include([`${docsAssetsPath}swagger-ui-bundle.js`, `${docsAssetsPath}swagger-ui.css`]);
        for (const asset of assets) {
            expect(asset.startsWith(docsAssetsPath), asset).to.be.true();
            const served = await server.inject(asset);
            expect(served.statusCode, asset).to.equal(200);
        }
    });

    it('names every component for what it is, shadowing no global type', () => {

        // The globals of the language and the DOM, which a generated type of the same name would shadow.
        const libDir = Path.dirname(require.resolve('typescript/lib/lib.dom.d.ts'));
        const libs = Fs.readdirSync(libDir).filter((file) => /^lib\.(?:dom|es\d+|es5)[\w.]*\.d\.ts$/.test(file)).map((file) => Fs.readFileSync(Path.join(libDir, file), 'utf8')).join('\n');
        expect(libs).to.contain('interface Storage {');

        const names = Object.keys(document.components.schemas);
        for (const name of names) {
            expect(name, name).to.match(/^[A-Z][A-Za-z]*[a-z]$/);
            expect(new RegExp(`^(?:interface|declare var|type) ${name}\\b`, 'm').test(libs), `${name} shadows a global`).to.be.false();
        }

        expect(names).to.include(['Product', 'Booking', 'ErrorBody', 'PickupLocation', 'Health', 'NamespacesHealth']);
    });

    it('says that request bodies take no properties beyond their own, as the service enforces', () => {

        for (const route of documentedRoutes(server)) {
            const requestBody = document.paths[route.path]![route.method]!.requestBody;
            if (requestBody) {
                const name = requestBody.content['application/json'].schema.$ref.replace('#/components/schemas/', '');
                expect((document.components.schemas[name] as { additionalProperties?: boolean }).additionalProperties, name).to.equal(false);
            }
        }
    });

    it('marks the console\'s endpoints console-only, the admin token among them', () => {

        for (const [path, method] of [['/console/api/token', 'post'], ['/console/api/events', 'get']] as const) {
            const operation = document.paths[path]![method]! as Operation & { description?: string };
            expect(operation.tags, path).to.equal(['console']);
            expect(`${operation.summary} ${operation.description}`, path).to.contain('Console only').and.to.contain('CONSOLE_API=on');
        }

        // The live log never ends: tools read it as a stream rather than wait for its end.
        expect(document.paths['/console/api/events']!.get!.responses['200']!.content).to.equal({ 'text/event-stream': { schema: { type: 'string' } } } as unknown as Response['content']);

        const token = document.paths['/console/api/token']!.post! as Operation & { description?: string };
        expect(token.description).to.contain('admin: true');
        expect(document.components.schemas.ConsoleTokenRequest!.properties.admin).to.include({ type: 'boolean', default: false });
        expect(document.components.schemas.ConsoleToken!.required).to.include('admin');
        expect(document.tags.find((tag) => tag.name === 'console')).to.include({ description: 'Console only: persona and admin tokens and the live request log, mounted on a loopback address or with CONSOLE_API=on' });
    });

    it('describes each namespace of /health by name', () => {

        const namespacesHealth = document.components.schemas.NamespacesHealth!;
        expect(Object.keys(namespacesHealth.properties)).to.equal(['commerce', 'logistics', 'weather', 'pay']);
        expect(namespacesHealth.required).to.equal(['commerce', 'logistics', 'weather', 'pay']);
        expect(namespacesHealth.properties.commerce).to.equal({ $ref: '#/components/schemas/NamespaceHealth' });
    });

    it('gives every timestamp of a record format date-time', () => {

        let timestamps = 0;
        for (const [name, schema] of Object.entries(document.components.schemas)) {
            for (const [key, property] of Object.entries(schema.properties ?? {})) {
                if (/_at$|^valid_(?:from|until)$/.test(key) && !name.startsWith('New')) {
                    expect(property, `${name}.${key}`).to.include({ type: 'string', format: 'date-time' });
                    ++timestamps;
                }
            }
        }

        expect(timestamps).to.be.above(12);
    });

    it('documents Idempotent-Replayed on the answers a deposit or withdrawal replays', () => {

        for (const path of ['/v1/pay/gateway/deposit', '/v1/pay/gateway/withdraw']) {
            const { responses } = document.paths[path]!.post!;
            for (const status of path.endsWith('deposit') ? ['201', '402', '409', '422'] : ['201', '409', '422']) {
                expect(responses[status]!.headers, `${path} ${status}`).to.include(['Idempotent-Replayed', 'X-Request-Id']);
            }

            expect(responses['400']!.headers).to.not.include('Idempotent-Replayed');
        }
    });

    it('spells the wallet and token paths without a trailing slash, and serves both spellings', async () => {

        expect(Object.keys(document.paths)).to.include(['/v1/pay/wallet', '/v1/pay/tokens']);
        expect(Object.keys(document.paths).filter((path) => path.endsWith('/'))).to.equal([]);
        for (const path of ['/v1/pay/wallet', '/v1/pay/tokens']) {
            expect((await server.inject(path)).statusCode).to.equal(501);
            expect((await server.inject(`${path}/`)).statusCode).to.equal(501);
        }
    });
});


describe('the route descriptions', () => {

    // A bare server: no default auth strategy, routes that declare errors and speak to hapi-swagger themselves.
    async function bareServer(routes: ServerRoute[]): Promise<Server> {

        const server = Hapi.server();
        await server.register({ plugin: openapiPlugin, options: { namespaces: builtInNamespaces } });
        server.route(routes);
        await server.initialize();
        return server;
    }

    it('take declared errors as a list or with descriptions, and keep what a route tells hapi-swagger itself', async () => {

        const handler = () => 'ok';
        const unplugged = failure(501, 'teapot_not_provisioned', 'No kettle is plugged in', { configured: false });
        const server = await bareServer([
            { method: 'GET', path: '/teapots', options: { tags: ['api'], handler, plugins: { localgate: { errors: [402, 409, 501] } }, response: { status: { 200: Joi.string() } } } },
            { method: 'PUT', path: '/teapots/{id}', options: { tags: ['api'], handler, plugins: { localgate: { errors: { 409: 'teapot_busy: it is brewing', 501: unplugged } } } } },
            { method: 'DELETE', path: '/teapots', options: { tags: ['api'], handler, plugins: { 'hapi-swagger': { responses: { 413: { description: 'Never: nothing to read' } } } } } }
        ]);

        const document = body<Document>(await server.inject(documentPath));
        expect(Object.keys(document.paths['/teapots']!.get!.responses)).to.equal(['200', '402', '404', '405', '409', '501']);
        expect(document.paths['/teapots']!.get!.responses[402]!.description).to.equal('The payment provider refused the payment at once (code card_declined): nothing moved');
        expect(document.paths['/teapots']!.get!.responses[402]!.content!['application/json'].example).to.include({ statusCode: 402, code: 'card_declined' });
        expect(document.paths['/teapots']!.get!.responses[409]!.description).to.equal('The request conflicts with the current state of a record');
        expect(document.paths['/teapots']!.get!.responses[501]!.content!['application/json'].example).to.include({ statusCode: 501, code: 'not_implemented' });
        expect(document.paths['/teapots']!.get!.security).to.not.exist();
        expect(Object.keys(document.paths['/teapots/{id}']!.put!.responses)).to.equal(['400', '404', '405', '409', '413', '415', '501']);
        expect(document.paths['/teapots/{id}']!.put!.responses[409]!.description).to.equal('teapot_busy: it is brewing');
        expect(document.paths['/teapots/{id}']!.put!.responses[501]!.description).to.equal('teapot_not_provisioned: No kettle is plugged in');
        expect(document.paths['/teapots/{id}']!.put!.responses[501]!.content!['application/json'].example).to.equal({
            statusCode: 501, error: 'Not Implemented', message: 'No kettle is plugged in', code: 'teapot_not_provisioned', configured: false
        });
        expect(document.paths['/teapots']!.delete!.responses[413]!.description).to.equal('Never: nothing to read');
        expect(document.paths['/teapots']!.delete!.responses[413]!.content).to.not.exist();
        await server.stop();
    });

    it('document a 422 wherever a body names another record, declared or not', async () => {

        const server = await bareServer([
            { method: 'POST', path: '/teapots', options: { tags: ['api'], handler: () => 'ok', validate: { payload: Joi.object({ kettle_id: Joi.string(), id: Joi.forbidden() }) } } }
        ]);

        const document = body<Document>(await server.inject(documentPath));
        const unprocessable = document.paths['/teapots']!.post!.responses[422]!;
        expect(unprocessable.description).to.equal('The body references a record that does not exist');
        expect(unprocessable.content!['application/json'].example).to.include({ statusCode: 422, code: 'business_not_found' });
        await server.stop();
    });

    it('refuse to start a server whose route declares a status the document cannot describe', async () => {

        const route: ServerRoute = { method: 'GET', path: '/teapot', options: { handler: () => 'ok', plugins: { localgate: { errors: [418] } } } };
        await expect(bareServer([route])).to.reject(/Invalid plugins\.localgate\.errors of GET \/teapot/);
    });
});


describe('the joi schema converter', () => {

    it('says a sibling\'s presence rules, and leaves the rules of other references to the description', () => {

        const converter = new SchemaConverter();
        const schema = Joi.object({
            a: Joi.string(),
            b: Joi.string().when('a', { is: Joi.exist(), then: Joi.forbidden() }),
            c: Joi.string().when('a', { is: Joi.exist(), otherwise: Joi.required() }),
            d: Joi.string().when('a', { is: Joi.exist(), then: Joi.forbidden(), otherwise: Joi.required() }),
            e: Joi.string().when('$headers', { is: Joi.exist(), then: Joi.forbidden() }),
            f: Joi.string().when('a', { is: 'x', then: Joi.forbidden() }),
            g: Joi.string().when('a', { is: Joi.exist(), then: Joi.string().max(1) }),
            h: Joi.string().when('a.length', { is: Joi.exist(), then: Joi.forbidden() }),
            i: Joi.string().when(Joi.ref('a', { ancestor: 2 }), { is: Joi.exist(), then: Joi.forbidden() }),
            j: Joi.string().when(Joi.string(), { then: Joi.forbidden() }),
            k: Joi.string().when('a', { is: Joi.string(), then: Joi.forbidden() })
        });

        expect(converter.schemaOf(schema)).to.equal({
            type: 'object',
            properties: Object.fromEntries(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k'].map((key) => [key, { type: 'string', minLength: 1 }])),
            additionalProperties: false,
            allOf: [
                { not: { required: ['b', 'a'] } },
                { anyOf: [{ required: ['c'] }, { required: ['a'] }] },
                { oneOf: [{ required: ['d'], not: { required: ['a'] } }, { required: ['a'], not: { required: ['d'] } }] }
            ]
        });
    });

    it('makes a component of a label once, and keeps inline a second shape under the same label', () => {

        const converter = new SchemaConverter();
        const first = Joi.object({ a: Joi.number().unsafe() }).label('Thing');
        expect(converter.schemaOf(Joi.object({ one: first, two: first.description('The same thing'), three: Joi.object({ b: Joi.boolean() }).label('Thing') }))).to.equal({
            type: 'object',
            properties: {
                one: { $ref: '#/components/schemas/Thing' },
                two: { $ref: '#/components/schemas/Thing' },
                three: { type: 'object', properties: { b: { type: 'boolean' } }, additionalProperties: false }
            },
            additionalProperties: false
        });
        expect(converter.components).to.equal({ Thing: { type: 'object', properties: { a: { type: 'number' } }, additionalProperties: false } });
    });

    it('says arrays, patterns and values of any type as joi checks them', () => {

        const converter = new SchemaConverter();
        expect(converter.schemaOf(Joi.array().min(1))).to.equal({ type: 'array', items: {}, minItems: 1 });
        expect(converter.schemaOf(Joi.array().items(Joi.string(), Joi.number().integer().min(0)))).to.equal({
            type: 'array',
            items: { anyOf: [{ type: 'string', minLength: 1 }, { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER }] }
        });
        expect(converter.schemaOf(Joi.array().ordered(Joi.string()).items(Joi.boolean()))).to.equal({ type: 'array', items: { anyOf: [{ type: 'string', minLength: 1 }, { type: 'boolean' }] } });
        expect(converter.schemaOf(Joi.string().pattern(/^a/).pattern(/b$/))).to.equal({ type: 'string', minLength: 1, pattern: '^a', allOf: [{ pattern: 'b$' }] });
        expect(converter.schemaOf(Joi.string().pattern(/^a$/i))).to.equal({ type: 'string', minLength: 1 });
        expect(converter.schemaOf(Joi.any().allow(null).description('Anything'))).to.equal({ description: 'Anything' });
        expect(converter.parametersOf(Joi.object({ q: Joi.number(), id: Joi.forbidden() }), 'query')).to.equal([
            { name: 'q', in: 'query', required: false, schema: { type: 'number', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER } }
        ]);
    });
});
