import Code from '@hapi/code';
import type { Server, ServerInjectResponse } from '@hapi/hapi';
import Lab from '@hapi/lab';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';

import { storablePattern } from '../../lib/fields';
import { documentPath } from '../../lib/openapi';
import { adminBearer, bearer, body, testServer } from '../helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


// The document walked with requests generated from its own schemas (fast-check arbitraries built from them, ajv as
// the judge of what the document calls valid), every answer checked against it.

type Schema = Record<string, unknown> & {
    type?: string;
    properties?: Record<string, Schema>;
    required?: string[];
    additionalProperties?: boolean | Schema;
    items?: Schema;
    anyOf?: Schema[];
    enum?: unknown[];
    format?: string;
    pattern?: string;
    minLength?: number;
    maxLength?: number;
    minimum?: number;
    maximum?: number;
    maxItems?: number;
    minItems?: number;
    nullable?: boolean;
};

interface Parameter {
    name: string;
    in: 'path' | 'query' | 'header';
    required: boolean;
    schema: Schema;
}

interface Response {
    description: string;
    headers?: Record<string, { required?: boolean; schema: Schema }>;
    content?: Record<string, { schema: Schema }>;
}

interface Operation {
    operationId: string;
    parameters?: Parameter[];
    requestBody?: { required: boolean; content: { 'application/json': { schema: Schema }; 'application/yaml'?: { schema: Schema } } };
    responses: Record<string, Response>;
}

interface Document {
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, Schema> };
}

// A request as generated: the values of the parameters by name, and the body (undefined: none sent).
interface Generated {
    params: Record<string, unknown>;
    body: unknown;
}

type Role = 'user' | 'admin';


/** A copy of a schema with every $ref replaced by the component it names. */
function dereference(node: unknown, components: Record<string, Schema>): unknown {

    if (Array.isArray(node)) {
        return node.map((item) => dereference(item, components));
    }

    if (!(node instanceof Object)) {
        return node;
    }

    const { $ref } = node as { $ref?: string };
    if ($ref) {
        return dereference(components[$ref.replace('#/components/schemas/', '')], components);
    }

    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, dereference(value, components)]));
}


// Bodies are judged as sent; parameters as the strings they travel as, the way OpenAPI tools read them.
const strict = addFormats(new Ajv({ strict: false, allErrors: false }));
const coercing = addFormats(new Ajv({ strict: false, coerceTypes: true }));
const bodyValidators = new WeakMap<Schema, ValidateFunction>();
const paramValidators = new WeakMap<Schema, ValidateFunction>();

function validBody(schema: Schema, value: unknown): boolean {

    let validate = bodyValidators.get(schema);
    if (!validate) {
        validate = strict.compile(schema);
        bodyValidators.set(schema, validate);
    }

    return validate(value);
}

function validParam(schema: Schema, value: string): boolean {

    let validate = paramValidators.get(schema);
    if (!validate) {
        validate = coercing.compile({ type: 'object', properties: { value: schema } });
        paramValidators.set(schema, validate);
    }

    return validate({ value });
}


// Rules the document gives in words only, as OpenAPI 3.0 cannot say them (docs/api.md lists them): valid requests
// keep to them by the field's name, and the test below proves the server enforces each.
const describedOnly: Record<string, fc.Arbitrary<unknown>> = {
    // A price with no more decimals than its currency has.
    price: fc.integer({ min: 0, max: 1_000_000 }),
    // Regular expressions and JSONPath that compile; JSON, or a string holding JSON.
    urlPathPattern: fc.constantFrom('/v1/.*', '/v1/commerce/products'),
    urlPattern: fc.constantFrom('/v1/.*', '.*limit=.*'),
    matches: fc.constantFrom('.*', 'alice|bob'),
    matchesJsonPath: fc.constantFrom('$.name', '$..id'),
    equalToJson: fc.constantFrom({ name: 'Kettle' }, '{"name":"Kettle"}', 12, null),
    // A fixture follows the rules of every record it holds: an empty one holds none.
    fixture: fc.constant({})
};


/** Keeps an object to the rules across its fields that only descriptions say: a return after its pickup, [min, max] in order. */
function keepDescribedRules(value: unknown): unknown {

    // fast-check's records have no prototype.
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        return value;
    }

    const record = value as Record<string, unknown>;
    if (typeof record.pickup_at === 'string' && typeof record.return_at === 'string' && record.return_at <= record.pickup_at) {
        record.return_at = new Date(Date.parse(record.pickup_at) + 3_600_000).toISOString();
    }

    if (Array.isArray(record.latency_ms)) {
        record.latency_ms = [...record.latency_ms].sort((a: number, b: number) => a - b);
    }

    return record;
}


/** Values of a schema: those of known records first where a field names one, then any the schema allows. */
function arbitraryOf(schema: Schema, name: string, known: Record<string, string[]>): fc.Arbitrary<unknown> {

    const own = describedOnly[name] ?? (known[name]?.length ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...known[name]!) }, { weight: 1, arbitrary: fromSchema(schema, known) }) : fromSchema(schema, known));
    return schema.nullable ? fc.option(own, { nil: null }) : own;
}


function fromSchema(schema: Schema, known: Record<string, string[]>): fc.Arbitrary<unknown> {

    if (schema.anyOf) {
        return fc.oneof(...schema.anyOf.map((option) => fromSchema(option, known)));
    }

    if (schema.enum) {
        return fc.constantFrom(...schema.enum);
    }

    switch (schema.type) {
        case 'string':
            return stringOf(schema);
        case 'integer':
            return fc.integer({ min: Math.max(schema.minimum ?? -1e9, -1e15), max: Math.min(schema.maximum ?? 1e9, 1e15) });
        case 'number':
            return fc.double({ min: schema.minimum ?? -1e9, max: schema.maximum ?? 1e9, noNaN: true, noDefaultInfinity: true });
        case 'boolean':
            return fc.boolean();
        case 'array':
            return fc.array(fromSchema(schema.items!, known), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 3, 3) }).map(keepDescribedRules);
        case 'object':
            return objectOf(schema, known);
        default:
            return fc.jsonValue({ maxDepth: 2 });
    }
}


function stringOf(schema: Schema): fc.Arbitrary<string> {

    const fits = (value: string) => value.length >= (schema.minLength ?? 0) && value.length <= (schema.maxLength ?? Infinity);
    if (schema.format === 'date-time') {
        return fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((date) => date.toISOString());
    }

    if (schema.format === 'uuid') {
        return fc.uuid();
    }

    const maxLength = Math.min(schema.maxLength ?? 24, 24);
    // Text (the pattern that refuses NUL and lone surrogates): any characters, now and then as many as it may hold.
    if (schema.pattern === storablePattern.source) {
        const longest = schema.maxLength === undefined ? fc.constant('é'.repeat(24)) : fc.constant('é'.repeat(schema.maxLength));
        const unicode = fc.string({ unit: 'binary', minLength: schema.minLength ?? 0, maxLength: Math.max(maxLength, schema.minLength ?? 0) }).map((value) => value.replace(/[\0\p{Cs}]/gu, '\u{1F600}'));
        return fc.oneof({ weight: 4, arbitrary: unicode }, { weight: 1, arbitrary: longest }).filter((value) => fits(value) && new RegExp(schema.pattern!).test(value));
    }

    if (schema.pattern?.startsWith('^')) {
        return fc.stringMatching(new RegExp(schema.pattern)).filter(fits);
    }

    // Any code points, NUL and lone surrogates among them, kept where the document's pattern takes them.
    const pattern = schema.pattern ? new RegExp(schema.pattern) : undefined;
    return fc.string({ unit: 'binary', minLength: schema.minLength ?? 0, maxLength: Math.max(maxLength, schema.minLength ?? 0) }).filter((value) => fits(value) && (pattern?.test(value) ?? true));
}


function objectOf(schema: Schema, known: Record<string, string[]>): fc.Arbitrary<unknown> {

    if (!schema.properties) {
        // A map: a few keys, each value of the schema the map gives.
        const values = schema.additionalProperties instanceof Object ? fromSchema(schema.additionalProperties, known) : fc.jsonValue({ maxDepth: 1 });
        return fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9-]{0,11}$/), values, { maxKeys: 2 });
    }

    const properties = Object.fromEntries(Object.entries(schema.properties).map(([key, property]) => [key, arbitraryOf(property, key, known)]));
    return fc.record(properties, { requiredKeys: schema.required ?? [] }).map(keepDescribedRules).filter((value) => validBody(schema, value));
}


/** The parameters of an operation in one list. */
function parametersOf(operation: Operation): Parameter[] {

    return operation.parameters ?? [];
}


/** Requests the document calls valid. */
function validRequests(operation: Operation, known: Record<string, string[]>): fc.Arbitrary<Generated> {

    const params = Object.fromEntries(parametersOf(operation).map((parameter) => {

        const value = arbitraryOf(parameter.schema, parameter.name, known);
        return [parameter.name, parameter.required ? value : fc.option(value, { nil: undefined })];
    }));

    const request = operation.requestBody;
    const bodySchema = request?.content['application/json'].schema;
    const bodyValue = bodySchema ? objectOf(bodySchema, known) : fc.constant(undefined);
    const sent = request && !request.required ? fc.option(bodyValue, { nil: undefined }) : bodyValue;
    return fc.record({ params: fc.record(params), body: sent }).filter((generated) => documentSays(operation, generated));
}


/** Whether the document calls a request valid: every parameter and the body as their schemas say. */
function documentSays(operation: Operation, generated: Generated): boolean {

    for (const parameter of parametersOf(operation)) {
        const value = generated.params[parameter.name];
        if (value === undefined ? parameter.required : !validParam(parameter.schema, String(value))) {
            return false;
        }
    }

    const request = operation.requestBody;
    if (!request) {
        return true;
    }

    return generated.body === undefined ? !request.required : validBody(request.content['application/json'].schema, generated.body);
}


// What an invalid value may be: a wrong type, an empty or an overlong text, a number past its bounds.
const wrongValues = [null, 12345, -1, 1.5, 'x', '', 'not-a-uuid', true, [], {}, 'x'.repeat(5001), 2 ** 53, '2030-02-30T10:00:00Z', 'a\u0000b', 'a\uD800', '\uDC00b', '1969-12-31T23:59:59Z', 'usd'];

const wrongParams = ['abc', '-1', '1.5', '', 'x'.repeat(300), '9007199254740993', 'not-a-uuid', '2030-02-30T10:00:00Z'];


// One part of a request broken: a parameter set to a value or left out, the body replaced, or a key of it set or left out.
type Break = { param: string; value: unknown } | { body: unknown } | { key: string; value: unknown };


function broken(generated: Generated, change: Break): Generated {

    if ('param' in change) {
        return { ...generated, params: { ...generated.params, [change.param]: change.value } };
    }

    if ('body' in change) {
        return { ...generated, body: change.body };
    }

    // As sent: a key set to undefined is left out.
    return { ...generated, body: JSON.parse(JSON.stringify({ ...(generated.body as object | undefined), [change.key]: change.value })) };
}


/** Requests the document calls invalid: a valid one with one part broken. */
function invalidRequests(operation: Operation, known: Record<string, string[]>): fc.Arbitrary<Generated> {

    const breaks: fc.Arbitrary<Break>[] = [];
    for (const parameter of parametersOf(operation)) {
        // An empty path segment routes elsewhere.
        const values: (string | undefined)[] = parameter.in === 'path' ? wrongParams.filter(Boolean) : [...wrongParams, undefined];
        breaks.push(fc.constantFrom(...values).map((value) => ({ param: parameter.name, value })));
    }

    const schema = operation.requestBody?.content['application/json'].schema;
    if (schema) {
        breaks.push(fc.constantFrom<unknown>(null, [], 'text', 42, undefined).map((value) => ({ body: value })));
        breaks.push(fc.record({ key: fc.constantFrom(...Object.keys(schema.properties ?? {}), '__unknown', ''), value: fc.constantFrom(...wrongValues, undefined) }));
        // One character past a text's bound.
        const bounded = Object.entries(schema.properties ?? {}).filter(([, property]) => property.type === 'string' && property.maxLength !== undefined && !property.enum);
        if (bounded.length) {
            breaks.push(fc.constantFrom(...bounded).map(([key, property]) => ({ key, value: 'é'.repeat(property.maxLength! + 1) })));
        }
    }

    return fc.tuple(validRequests(operation, known), fc.oneof(...breaks)).map(([generated, change]) => broken(generated, change)).filter((generated) => !documentSays(operation, generated));
}


/** Whether an operation takes requests at all: a never-ending event stream is not walked (inject would wait for its end). */
// An event stream never ends; a scenario's body has rules across its fields that no schema says (a step of one kind, an
// actor its actors name, a capture of a step before it), which test/scenarios.ts holds to their words instead.
function walked(operation: Operation): boolean {

    // A scenario's text, as a run's YAML body or a presentation's text, is a file: a string its schema allows is no
    // scenario, and is refused as one (test/scenarios.ts and test/presentations.ts send real ones).
    return !Object.values(operation.responses).some((response) => response.content?.['text/event-stream']) && !operation.requestBody?.content['application/yaml'] && operation.operationId !== 'post_presentations';
}


describe('the OpenAPI document, walked with requests generated from its schemas', () => {

    let server: Server;
    let document: Document;
    let base: string;
    const known: Record<string, string[]> = {};
    const tokens = {} as Record<Role, { authorization: string }>;

    const inject = async (method: string, url: string, role: Role, payload?: unknown, headers: Record<string, string> = {}) => {

        return await server.inject({ method, url, payload: payload === undefined ? undefined : JSON.stringify(payload), headers: { ...tokens[role], ...(payload === undefined ? {} : { 'content-type': 'application/json' }), ...headers } });
    };

    before(async () => {

        server = await testServer();
        const served = body<Document>(await server.inject(documentPath));
        document = { ...served, paths: dereference(served.paths, served.components.schemas) as Document['paths'] };
        tokens.user = bearer(server, 'alice');
        tokens.admin = adminBearer(server);

        // A data set with pay and a record of every kind alice can make: forks of it give each operation its own.
        base = body<{ id: string }>(await inject('POST', '/_instances', 'admin', { pay: true })).id;
        const read = async (path: string) => body<{ data: { id: string; symbol?: string; status?: string; supports_deposit?: boolean; assets?: string[] }[] }>(await inject('GET', `/i/${base}${path}`, 'user')).data;
        const products = (await read('/v1/commerce/products')).map((record) => record.id);
        const businesses = (await read('/v1/commerce/businesses')).map((record) => record.id);
        const vehicles = (await read('/v1/logistics/vehicles')).map((record) => record.id);
        const locations = (await read('/v1/logistics/locations')).map((record) => record.id);
        const providers = (await read('/v1/pay/gateway/providers')).filter((record) => record.status === 'active').map((record) => record.id);
        const depositing = (await read('/v1/pay/gateway/providers')).find((record) => record.status === 'active' && record.supports_deposit && record.assets!.includes('USD'))!.id;
        const create = async (path: string, payload: object, headers?: Record<string, string>) => {

            const res = await inject('POST', `/i/${base}${path}`, 'user', payload, headers);
            expect(res.statusCode, `${path} ${res.payload}`).to.equal(201);
            return body<{ id: string }>(res).id;
        };

        Object.assign(known, {
            product_id: products,
            business_id: businesses,
            vehicle_id: vehicles,
            pickup_location_id: locations,
            dropoff_location_id: locations,
            target_id: [products[0]!, businesses[0]!],
            provider_id: providers,
            asset: ['USD', 'EUR', 'MIT'],
            token_symbol: (await read('/v1/pay/tokens')).map((record) => record.symbol!),
            inquiry_id: [await create('/v1/commerce/inquiries', { product_id: products[0], message: 'Still for sale?' })],
            report_id: [await create('/v1/commerce/scam-reports', { target_type: 'product', target_id: products[1], reason: 'Too cheap' })],
            booking_id: [await create('/v1/logistics/bookings', { vehicle_id: vehicles[0], pickup_location_id: locations[0], dropoff_location_id: locations[0], pickup_at: '2030-06-01T10:00:00Z', return_at: '2030-06-02T10:00:00Z' })],
            transaction_id: [await create('/v1/pay/gateway/deposit', { provider_id: depositing, asset: 'USD', amount: 5000 }, { 'idempotency-key': 'first-deposit' })],
            from: [base]
        });
    });

    after(async () => {

        await server.stop();
    });

    /** Checks an answer against the document: a listed status, its content type, its body's schema and its required headers. */
    function expectDocumented(operation: Operation, res: ServerInjectResponse, what: string): void {

        const response = operation.responses[res.statusCode];
        expect(response, `${what}: ${res.statusCode} is not documented (${res.payload.slice(0, 300)})`).to.exist();
        const [type, content] = Object.entries(response!.content ?? {})[0] ?? [];
        if (type) {
            expect(String(res.headers['content-type']), what).to.startWith(type);
            const valid = validBody(content!.schema, JSON.parse(res.payload));
            expect(valid, `${what}: the ${res.statusCode} body is off its schema: ${JSON.stringify(bodyValidators.get(content!.schema)!.errors)} ${res.payload.slice(0, 300)}`).to.be.true();
        }
        else {
            expect(res.payload, what).to.equal('');
        }

        for (const [name, header] of Object.entries(response!.headers ?? {})) {
            const value = res.headers[name.toLowerCase()];
            if (header.required) {
                expect(value, `${what}: header ${name}`).to.exist();
            }

            if (value !== undefined) {
                expect(validParam(header.schema, String(value)), `${what}: header ${name} ${value}`).to.be.true();
            }
        }
    }

    /** Sends a generated request to an operation, under the fork for the API's own paths. */
    async function send(path: string, method: string, operation: Operation, generated: Generated, role: Role, fork: string): Promise<ServerInjectResponse> {

        let url = path.replace(/\{(\w+)\}/g, (match, name: string) => encodeURIComponent(String(generated.params[name] ?? '')));
        const query = new URLSearchParams();
        const headers: Record<string, string> = {};
        for (const parameter of parametersOf(operation)) {
            const value = generated.params[parameter.name];
            if (value !== undefined && parameter.in === 'query') {
                query.set(parameter.name, String(value));
            }

            if (value !== undefined && parameter.in === 'header') {
                headers[parameter.name] = String(value);
            }
        }

        url = `${path.startsWith('/v1/') ? `/i/${fork}` : ''}${url}${query.size ? `?${query}` : ''}`;
        return await inject(method, url, role, generated.body, headers);
    }

    /** Walks the operations under a prefix: valid and invalid requests, as a user and as an admin. */
    async function walk(prefix: string, seed: number): Promise<number> {

        let walkedOperations = 0;
        for (const [path, item] of Object.entries(document.paths).filter(([candidate]) => candidate.startsWith(prefix))) {
            for (const [method, operation] of Object.entries(item).filter(([, candidate]) => walked(candidate))) {
                ++walkedOperations;
                const fork = body<{ id: string }>(await inject('POST', '/_instances', 'admin', { from: base })).id;
                const knownHere = { ...known, instance_id: [fork] };
                const made: string[] = [];
                for (const role of ['user', 'admin'] as const) {
                    // A route that only an admin may call refuses a user before it reads the request.
                    const adminOnly = role === 'user' && Boolean(operation.responses[403]);
                    const what = (generated: Generated) => `${method.toUpperCase()} ${path} as ${role} with ${JSON.stringify(generated).slice(0, 400)}`;

                    await fc.assert(fc.asyncProperty(validRequests(operation, knownHere), async (generated) => {

                        const res = await send(path, method, operation, generated, role, fork);
                        expectDocumented(operation, res, what(generated));
                        if (res.statusCode === 201 && path === '/_instances') {
                            made.push(body<{ id: string }>(res).id);
                        }

                        // Accepted, or refused for what is stored (a record that is not there, a conflict with one), or never live here.
                        const stored = [404, 409, 422, 501];
                        expect(res.statusCode < 300 || stored.includes(res.statusCode) || (adminOnly && res.statusCode === 403), `${what(generated)}: ${res.statusCode} ${res.payload.slice(0, 300)}`).to.be.true();
                    }), { seed, numRuns: 6, includeErrorInReport: true });

                    // An operation without parameters or body takes no request the document calls invalid.
                    if (!parametersOf(operation).length && !operation.requestBody) {
                        continue;
                    }

                    await fc.assert(fc.asyncProperty(invalidRequests(operation, knownHere), async (generated) => {

                        const res = await send(path, method, operation, generated, role, fork);
                        expectDocumented(operation, res, what(generated));
                        expect(res.statusCode, `${what(generated)}: ${res.payload.slice(0, 300)}`).to.equal(adminOnly ? 403 : 400);
                    }), { seed, numRuns: 6, includeErrorInReport: true });
                }

                for (const id of [fork, ...made]) {
                    await inject('DELETE', `/_instances/${id}`, 'admin');
                }
            }
        }

        return walkedOperations;
    }

    // /_clock last: a walk moves the default data set's clock.
    const prefixes = ['/v1/commerce/', '/v1/logistics/', '/v1/pay/', '/v1/weather/', '/_instances', '/_requests', '/_faults', '/_events', '/_export', '/_scenario', '/_presentations', '/health', '/console/', '/_clock', '/_webhooks'];
    const walkedCounts: number[] = [];

    for (const [index, prefix] of prefixes.entries()) {
        // A group sends a few hundred requests, some making instances: seconds on a busy machine.
        it(`answers every operation under ${prefix} as the document says, for what it calls valid and invalid`, { timeout: 60_000 }, async () => {

            const count = await walk(prefix, 30 + index);
            expect(count, prefix).to.be.above(0);
            walkedCounts[index] = count;
        });
    }

    it('answers an empty key in any query or body with a 400 the document describes, its details naming the key', async () => {

        let sent = 0;
        // Every path parameter names the base instance or a record of it: a refusal changes nothing there.
        const instance = base;
        const fill = (match: string, name: string): string => encodeURIComponent(known[name]?.[0] ?? instance);
        for (const [path, item] of Object.entries(document.paths)) {
            for (const [method, operation] of Object.entries(item).filter(([, candidate]) => walked(candidate))) {
                const role: Role = operation.responses[403] ? 'admin' : 'user';
                const url = `${path.startsWith('/v1/') ? `/i/${instance}` : ''}${path.replace(/\{(\w+)\}/g, fill)}`;
                const requests: { url: string; payload?: unknown }[] = [];
                if (parametersOf(operation).some((parameter) => parameter.in === 'query')) {
                    requests.push({ url: `${url}?=x` });
                }

                if (operation.requestBody?.content['application/json'].schema.type === 'object') {
                    requests.push({ url, payload: { '': null } });
                }

                for (const request of requests) {
                    const what = `${method.toUpperCase()} ${request.url} ${JSON.stringify(request.payload ?? null)}`;
                    const res = await inject(method, request.url, role, request.payload, method === 'post' && path.startsWith('/v1/pay/gateway/') ? { 'idempotency-key': `empty-key-${sent}` } : {});
                    expect(res.statusCode, `${what}: ${res.payload.slice(0, 300)}`).to.equal(400);
                    expectDocumented(operation, res, what);
                    expect(body<{ details: { field: string }[] }>(res).details.map((detail) => detail.field), what).to.include('""');
                    ++sent;
                }
            }
        }

        expect(sent).to.equal(47);
    });

    it('walks every operation of the document but its event streams (the live log\'s, and the events\' of the default data set and of an instance) and the runs and presentations of a scenario', () => {

        const operations = Object.values(document.paths).flatMap((item) => Object.values(item));
        expect(walkedCounts.reduce((sum, count) => sum + count, 0)).to.equal(operations.filter(walked).length);
        expect(operations.length - operations.filter(walked).length).to.equal(7);
    });
});


describe('the rules the document gives in words', () => {

    let server: Server;
    let document: Document;
    let instance: string;

    before(async () => {

        server = await testServer();
        const served = body<Document>(await server.inject(documentPath));
        document = { ...served, paths: dereference(served.paths, served.components.schemas) as Document['paths'] };
        instance = body<{ id: string }>(await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server) })).id;
    });

    after(async () => {

        await server.stop();
    });

    const product = { name: 'Kettle', price: 12, currency: 'USD', business_id: 'd851fadb-03ca-5a24-ba16-c15cce19933b' };
    const booking = { vehicle_id: 'v', pickup_location_id: 'l', dropoff_location_id: 'l', pickup_at: '2030-06-02T10:00:00Z', return_at: '2030-06-01T10:00:00Z' };

    // The field whose description says the rule, a request the document calls valid that breaks it, and the words.
    const rules: { field: string; path: string; property: string[]; payload: object; role: Role; words: string }[] = [
        { field: 'price', path: '/v1/commerce/products', property: ['price'], payload: { ...product, price: 1.234 }, role: 'user', words: 'no more decimals than the currency has' },
        { field: 'return_at', path: '/v1/logistics/bookings', property: ['return_at'], payload: booking, role: 'user', words: 'after pickup_at' },
        { field: 'rules.0.latency_ms', path: '/_faults', property: ['rules', 'items', 'latency_ms'], payload: { rules: [{ path: '/v1/*', latency_ms: [50, 10] }] }, role: 'admin', words: 'min at most max' },
        { field: 'urlPathPattern', path: '/_requests/count', property: ['urlPathPattern'], payload: { urlPathPattern: '(' }, role: 'admin', words: 'regular expression' },
        { field: 'headers.x-a.matches', path: '/_requests/count', property: ['headers', 'additionalProperties', 'matches'], payload: { headers: { 'x-a': { matches: '(' } } }, role: 'admin', words: 'must compile' },
        { field: 'bodyPatterns.0.matchesJsonPath', path: '/_requests/find', property: ['bodyPatterns', 'items', 'matchesJsonPath'], payload: { bodyPatterns: [{ matchesJsonPath: '$[?(@.a ==' }] }, role: 'admin', words: 'must parse' },
        { field: 'bodyPatterns.0.equalToJson', path: '/_requests/find', property: ['bodyPatterns', 'items', 'equalToJson'], payload: { bodyPatterns: [{ equalToJson: '{"a":' }] }, role: 'admin', words: 'a string holding JSON' },
        { field: 'urlPattern', path: '/_requests/count', property: ['urlPattern'], payload: { urlPattern: 'a{300}' }, role: 'admin', words: 'at most 200 instructions' },
        { field: 'fixture.commerce.products[0].price', path: '/_instances', property: ['fixture'], payload: { fixture: { commerce: { products: [{ name: 'Kettle', price: 1.234, currency: 'USD', business_id: 'd851fadb-03ca-5a24-ba16-c15cce19933b' }] } } }, role: 'admin', words: 'invalid_fixture' }
    ];

    const refuses = async ({ field, path, property, payload, role, words }: typeof rules[number]) => {

        const operation = (path.startsWith('/_') ? document.paths[path]!.put ?? document.paths[path]!.post : document.paths[path]!.post)!;
        const schema = operation.requestBody!.content['application/json'].schema;
        expect(validBody(schema, payload)).to.be.true();
        const described = property.reduce<Schema>((node, key) => (key === 'items' || key === 'additionalProperties' ? node[key] : node.properties![key]) as Schema, schema);
        expect(described.description, field).to.contain(words);
        // The operation's 400 says it too, where tools read the answers an operation gives.
        expect(operation.responses[400]!.description, field).to.contain((property[0] === 'rules' ? 'latency_ms' : property.at(-1) === 'additionalProperties' ? 'matches' : property.at(-1)!).replace('items', 'matchesJsonPath'));

        const headers = role === 'admin' ? adminBearer(server) : bearer(server, 'alice');
        const url = path.startsWith('/v1/') ? `/i/${instance}${path}` : path;
        const res = await server.inject({ method: url === '/_faults' ? 'PUT' : 'POST', url, payload, headers });
        expect(res.statusCode, res.payload).to.equal(400);
        const error = body<{ code: string; details: { field: string }[] }>(res);
        expect(error.details.map((detail) => detail.field)).to.equal([field]);
    };

    for (const rule of rules) {
        it(`refuses with 400 a ${rule.field} the document allows by its schema and refuses in words`, () => refuses(rule));
    }

    // Requests a contract test sent as valid by an earlier document, which the server refused: the document refuses
    // each now, by a keyword of its schema, and the server with a 400 naming the field.
    const saidNow: { field: string; method: 'post' | 'put'; path: string; payload: object; role: Role }[] = [
        { field: 'currency', method: 'post', path: '/v1/commerce/products', payload: { ...product, currency: 'ABC' }, role: 'user' },
        { field: 'reason', method: 'post', path: '/v1/commerce/scam-reports', payload: { target_type: 'product', target_id: 'p', reason: 'a\u0000b' }, role: 'user' },
        { field: 'reason', method: 'post', path: '/v1/commerce/scam-reports', payload: { target_type: 'product', target_id: 'p', reason: 'lone \uD83D here' }, role: 'user' },
        { field: 'message', method: 'post', path: '/v1/commerce/inquiries', payload: { message: 'ends \uDE00' , product_id: 'p' }, role: 'user' },
        { field: 'product_id', method: 'post', path: '/v1/commerce/inquiries', payload: { product_id: 'p', business_id: 'b', message: 'Both?' }, role: 'user' },
        { field: 'now', method: 'put', path: '/_clock', payload: { now: '1969-12-31T23:59:59Z' }, role: 'admin' },
        { field: 'fixture.nowhere', method: 'post', path: '/_instances', payload: { fixture: { nowhere: {} } }, role: 'admin' },
        { field: 'notes', method: 'post', path: '/v1/logistics/bookings', payload: { ...booking, return_at: '2030-06-03T10:00:00Z', notes: 'é'.repeat(1001) }, role: 'user' }
    ];

    const refusedByDocument = async ({ field, method, path, payload, role }: typeof saidNow[number]) => {

        const operation = document.paths[path]![method]!;
        expect(validBody(operation.requestBody!.content['application/json'].schema, payload)).to.be.false();
        const headers = role === 'admin' ? adminBearer(server) : bearer(server, 'alice');
        const res = await server.inject({ method, url: path.startsWith('/v1/') ? `/i/${instance}${path}` : path, payload, headers });
        expect(res.statusCode, res.payload).to.equal(400);
        expect(body<{ details: { field: string }[] }>(res).details.map((detail) => detail.field)).to.equal([field]);
    };

    for (const said of saidNow) {
        it(`refuses ${JSON.stringify(said.payload).slice(0, 80)} by the document and with a 400 naming ${said.field}`, () => refusedByDocument(said));
    }

    it('takes text up to its bound, astral characters and all, where the document does', async () => {

        const schema = document.paths['/v1/commerce/scam-reports']!.post!.requestBody!.content['application/json'].schema;
        for (const reason of ['é'.repeat(2000), '\u{1F600}'.repeat(1000), 'a\u0001\uFFFF\u{10FFFF}']) {
            const payload = { target_type: 'product', target_id: 'nothing-here', reason };
            expect(validBody(schema, payload)).to.be.true();
            const res = await server.inject({ method: 'POST', url: `/i/${instance}/v1/commerce/scam-reports`, payload, headers: bearer(server, 'alice') });
            // Valid: refused only for the record it names.
            expect(res.statusCode, res.payload).to.equal(422);
        }
    });

    it('answers the inbox\'s unsigned webhook with the 422 its document gives, and an empty path parameter with a documented 404', async () => {

        const inbox = document.paths['/console/inbox/{data_set}']!.post!;
        const res = await server.inject({ method: 'POST', url: '/console/inbox/default', payload: { type: 'x' } });
        expect(res.statusCode).to.equal(422);
        expect(inbox.responses[422]!.description).to.contain(body<{ code: string }>(res).code);

        const reset = document.paths['/_instances/{instance_id}/reset']!.post!;
        const empty = await server.inject({ method: 'POST', url: '/_instances//reset', headers: adminBearer(server) });
        expect(empty.statusCode).to.equal(404);
        expect(reset.responses[404]!.description).to.contain(body<{ code: string }>(empty).code);
        const wrong = await server.inject({ method: 'PATCH', url: '/_instances', headers: adminBearer(server) });
        expect(wrong.statusCode).to.equal(405);
        expect(document.paths['/_instances']!.post!.responses[405]!.description).to.contain(body<{ code: string }>(wrong).code);
    });
});


describe('the body rule', () => {

    let server: Server;

    before(async () => {

        server = await testServer();
    });

    after(async () => {

        await server.stop();
    });

    it('takes a body left out as the defaults, and refuses a body of null, wherever a body may be left out', async () => {

        const { id } = body<{ id: string }>(await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server) }));
        const routes = [['/_instances', 201], ['/_requests/count', 200], ['/_requests/find', 200], [`/_instances/${id}/requests/count`, 200], [`/_instances/${id}/requests/find`, 200]] as const;
        for (const [url, status] of routes) {
            const left = await server.inject({ method: 'POST', url, headers: adminBearer(server) });
            expect(left.statusCode, url).to.equal(status);
            const empty = await server.inject({ method: 'POST', url, payload: '', headers: { ...adminBearer(server), 'content-type': 'application/json' } });
            expect(empty.statusCode, url).to.equal(status);

            const refused = await server.inject({ method: 'POST', url, payload: 'null', headers: { ...adminBearer(server), 'content-type': 'application/json' } });
            expect(refused.statusCode, url).to.equal(400);
            expect(body(refused)).to.equal({
                statusCode: 400,
                error: 'Bad Request',
                message: 'Invalid payload: The request body must be a JSON object',
                code: 'validation_failed',
                details: [{ field: 'payload', message: 'The request body must be a JSON object' }]
            });
        }

        expect(body<{ seed: string; ids: string; pay: boolean }>(await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server) }))).to.include({ seed: 'demo', ids: 'random', pay: false });
    });

    it('refuses a body of null where a body is required, as a body left out', async () => {

        for (const payload of ['null', undefined]) {
            const res = await server.inject({ method: 'PUT', url: '/_faults', payload, headers: { ...adminBearer(server), 'content-type': 'application/json' } });
            expect(res.statusCode).to.equal(400);
            expect(body<{ message: string }>(res).message).to.equal('Invalid payload: The request body must be a JSON object');
        }
    });
});
