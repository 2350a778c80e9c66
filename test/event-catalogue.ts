import { Parser } from '@asyncapi/parser';
import Code from '@hapi/code';
import type { Server, ServerInjectOptions, ServerInjectResponse } from '@hapi/hapi';
import Lab from '@hapi/lab';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import Joi from 'joi';

import { eventCatalogue } from '../lib/events/catalogue';
import { eventTypesOf } from '../lib/outbox';
import { builtInNamespaces } from '../lib/namespaces';
import { payNamespace } from '../lib/namespaces/pay';
import { transactionSchema } from '../lib/namespaces/pay/schemas';
import { SchemaConverter, type JsonSchema } from '../lib/openapi/joi-schema';
import { inlined, jsonSchemaOf } from '../lib/openapi/json-schema';
import { readPackage } from '../lib/paths';
import { mintPayKeys } from '../lib/storage/pay-keys';
import { createTestKit, startReceiver, type ReceivedWebhook, type TestKit } from '../lib/testing';
import { engineServer, engines, templateDatabase } from './helpers/postgres';
import { adminBearer, bearer, body, type List, testServer } from './helpers/server';
import { bakery } from './helpers/world-records';


export const lab = Lab.script();

// Every event type the built-in namespaces and the events feature write.
const eventTypes = eventTypesOf(builtInNamespaces);
const { describe, it, before, after } = lab;
const { expect } = Code;


interface CatalogueEntry {
    type: string;
    description: string;
    delivered: boolean;
    data_schema: JsonSchema;
}

interface Message {
    name: string;
    summary: string;
    headers?: JsonSchema;
    payload: JsonSchema;
}

interface AsyncApi {
    asyncapi: string;
    info: { title: string; version: string };
    channels: Record<string, { address: string | null; messages: Record<string, { $ref: string }> }>;
    operations: Record<string, { action: string; channel: { $ref: string }; messages: { $ref: string }[] }>;
    components: { schemas: Record<string, JsonSchema>; messages: Record<string, Message> };
}

interface ListedEvent {
    id: string;
    type: string;
    created_at: string;
    data: Record<string, unknown>;
}


const delivered = eventTypes.filter((type) => !type.startsWith('webhook.'));

// Draft 7 with formats, strict: a keyword JSON Schema does not know (OpenAPI's nullable) is an error.
const ajv = addFormats(new Ajv({ strict: true, allowUnionTypes: true, allErrors: true }));

// A schema of the document with the components it refers to beside it, as draft 7 spells them.
function compiled(schema: JsonSchema, document: AsyncApi): ValidateFunction {

    const rewritten = (value: unknown) => JSON.parse(JSON.stringify(value).replaceAll('"#/components/schemas/', '"#/definitions/')) as JsonSchema;
    return ajv.compile({ ...rewritten(schema), definitions: rewritten(document.components.schemas) });
}


describe('the event catalogue', () => {

    let server: Server;

    before(async () => {

        server = await testServer();
    });

    after(async () => {

        await server.stop();
    });

    it('lists every event type with its description and the JSON Schema of its data to an admin token', async () => {

        const res = await server.inject({ url: '/_events/types', headers: adminBearer(server) });
        expect(res.statusCode).to.equal(200);
        const list = body<List<CatalogueEntry>>(res);
        expect(list.count).to.equal(12);
        expect(list.total).to.equal(12);
        expect(res.headers['x-total-count']).to.equal('12');
        expect(list.data.map(({ type }) => type)).to.equal([...eventTypes]);
        expect(list.data.filter((entry) => !entry.delivered).map(({ type }) => type)).to.equal(['webhook.delivery.given_up']);
        for (const entry of list.data) {
            expect(entry.description, entry.type).to.match(/^[A-Z][^\n]+[a-z)]$/);
            // A schema JSON Schema compiles, strict, and that refers to nothing outside itself.
            expect(JSON.stringify(entry.data_schema), entry.type).to.not.contain('$ref');
            expect(JSON.stringify(entry.data_schema), entry.type).to.not.contain('nullable');
            ajv.compile(entry.data_schema);
        }

        expect(list.data.at(-1)!.data_schema).to.equal({
            type: 'object',
            properties: {
                webhook_id: { type: 'string', minLength: 1, description: 'The webhook-id every attempt of the delivery carried' },
                endpoint_id: { type: 'string', minLength: 1, description: 'The endpoint that was not reached' },
                event_id: { type: 'string', minLength: 1, description: 'The event it was sent' },
                event_type: { type: 'string', enum: [...eventTypes], description: 'That event\'s type' },
                attempts: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'The attempts made, the last one included' }
            },
            required: ['webhook_id', 'endpoint_id', 'event_id', 'event_type', 'attempts'],
            additionalProperties: false
        });
    });

    it('makes each type\'s data schema from the response schema of the record it announces', async () => {

        const list = body<List<CatalogueEntry>>(await server.inject({ url: '/_events/types', headers: adminBearer(server) }));
        const converter = new SchemaConverter();
        const transaction = jsonSchemaOf(inlined(converter.schemaOf(transactionSchema), converter.components));
        for (const type of ['pay.transaction.created', 'pay.transaction.completed', 'pay.transaction.failed']) {
            expect(list.data.find((entry) => entry.type === type)!.data_schema).to.equal(transaction);
        }

        // A settled transaction's reason is text or null: JSON Schema's null type, not OpenAPI's nullable.
        expect((transaction.properties as Record<string, JsonSchema>).failure_code).to.equal({ type: ['string', 'null'], minLength: 1, description: 'Why it failed, a stable code (returned: the bank sent the money back); null unless failed' });
    });

    it('carries a field added to a record\'s response schema into its events\' schemas with no other edit', () => {

        const extended = transactionSchema.keys({ metadata: Joi.object().pattern(Joi.string(), Joi.string()).required() });
        const namespaces = [{ ...payNamespace, eventTypes: { 'pay.transaction.created': { description: 'Made', data: extended } } }];
        const catalogue = eventCatalogue(namespaces);
        expect(catalogue.types.map(({ type }) => type)).to.equal(['pay.transaction.created', 'webhook.delivery.given_up']);
        const [made] = catalogue.types;
        expect((made!.data.properties as Record<string, JsonSchema>).metadata).to.equal({ type: 'object', additionalProperties: { type: 'string', minLength: 1 } });
        expect(made!.data.required).to.include('metadata');
    });

    it('builds the catalogue once for a list of namespaces', () => {

        expect(eventCatalogue(builtInNamespaces)).to.shallow.equal(eventCatalogue(builtInNamespaces));
        expect(eventCatalogue([...builtInNamespaces])).to.not.shallow.equal(eventCatalogue(builtInNamespaces));
    });

    it('answers 401 without a token and 403 with a token that is not an admin\'s', async () => {

        const anonymous = await server.inject('/_events/types');
        expect(anonymous.statusCode).to.equal(401);
        expect(body(anonymous)).to.include({ code: 'unauthorized' });

        const user = await server.inject({ url: '/_events/types', headers: bearer(server, 'ann') });
        expect(user.statusCode).to.equal(403);
        expect(body(user)).to.include({ code: 'admin_required' });
    });

    it('says OpenAPI\'s nullable as JSON Schema\'s null type, in an enum too', () => {

        expect(jsonSchemaOf({ type: 'string', enum: ['a', 'b'], nullable: true })).to.equal({ type: ['string', 'null'], enum: ['a', 'b', null] });
        expect(jsonSchemaOf({ type: 'object', properties: { a: { type: 'integer', nullable: true } }, additionalProperties: false, not: { required: ['b'] }, anyOf: [{ type: 'string', nullable: true }] }))
            .to.equal({ type: 'object', properties: { a: { type: ['integer', 'null'] } }, additionalProperties: false, not: { required: ['b'] }, anyOf: [{ type: ['string', 'null'] }] });
        expect(inlined({ type: 'array', items: { $ref: '#/components/schemas/A' } }, { A: { type: 'object', properties: { b: { $ref: '#/components/schemas/B' } } }, B: { type: 'string' } }))
            .to.equal({ type: 'array', items: { type: 'object', properties: { b: { type: 'string' } } } });
    });
});


describe('the AsyncAPI document', () => {

    let server: Server;
    let document: AsyncApi;

    before(async () => {

        server = await testServer();
        const res = await server.inject('/asyncapi.json');
        expect(res.statusCode).to.equal(200);
        document = body<AsyncApi>(res);
    });

    after(async () => {

        await server.stop();
    });

    // The parser runs Spectral's rule set over the whole document: seconds on a busy machine.
    it('is valid AsyncAPI 3.0 by the specification\'s parser, with no error or warning', { timeout: 20_000 }, async () => {

        const { document: parsed, diagnostics } = await new Parser().parse(JSON.stringify(document));
        // Severities: 0 error, 1 warning, 2 information (the parser's note that 3.1.0 exists), 3 hint.
        expect(diagnostics.filter(({ severity }) => severity < 2).map(({ message, path }) => `${message} at ${path.join('.')}`)).to.equal([]);
        expect(parsed!.version()).to.equal('3.0.0');
        expect(parsed!.operations().all().map((operation) => [operation.id(), operation.action(), operation.messages().length])).to.equal([
            ['sendWebhook', 'send', 11],
            ['defaultStreamEvents', 'send', 12],
            ['instanceStreamEvents', 'send', 12]
        ]);
        expect(parsed!.channels().all().map((channel) => channel.address())).to.equal([null, '/_events/stream', '/_instances/{instance_id}/events/stream']);
    });

    it('gives each delivered type a webhook message with the Standard Webhooks headers, and every type a stream message', async () => {

        const catalogue = body<List<CatalogueEntry>>(await server.inject({ url: '/_events/types', headers: adminBearer(server) })).data;
        expect(Object.keys(document.channels.webhooks!.messages)).to.equal(delivered);
        expect(Object.keys(document.channels.defaultStream!.messages)).to.equal([...eventTypes]);
        expect(document.operations.sendWebhook!.messages.map(({ $ref }) => $ref)).to.equal(delivered.map((type) => `#/channels/webhooks/messages/${type}`));

        const headers = document.components.schemas.StandardWebhooksHeaders!;
        expect(headers.required).to.equal(['content-type', 'webhook-id', 'webhook-timestamp', 'webhook-signature']);
        for (const entry of catalogue) {
            const stream = document.components.messages[`stream.${entry.type}`]!;
            expect(stream).to.include({ name: entry.type, summary: entry.description });
            expect(stream.headers).to.not.exist();
            const webhook = document.components.messages[`webhook.${entry.type}`];
            expect(webhook?.headers, entry.type).to.equal(entry.delivered ? { $ref: '#/components/schemas/StandardWebhooksHeaders' } : undefined);
            // The payload is the envelope; its data, the catalogue's schema once its references are followed.
            // joi puts the keys a type's envelope replaces last.
            expect(stream.payload.required).to.equal(['id', 'created_at', 'type', 'data']);
            expect((stream.payload.properties as Record<string, JsonSchema>).type).to.equal({ type: 'string', enum: [entry.type] });
            expect(inlined((stream.payload.properties as Record<string, JsonSchema>).data!, document.components.schemas)).to.equal(entry.data_schema);
        }
    });

    it('is built once and served without a token', async () => {

        const again = await server.inject('/asyncapi.json');
        expect(again.statusCode).to.equal(200);
        expect(again.result).to.shallow.equal((await server.inject('/asyncapi.json')).result);
        expect(document.info).to.include({ title: 'localgate events', version: readPackage().version });
    });

    it('is linked from the OpenAPI document', async () => {

        const res = await server.inject('/openapi.json');
        expect(res.statusCode).to.equal(200);
        const openapi = body<{ info: { description: string; version: string }; externalDocs: object; 'x-asyncapi': string }>(res);
        expect(openapi.externalDocs).to.equal({ description: 'The webhooks and event streams: an AsyncAPI 3.0 document of every event type, made from the same schemas', url: '/asyncapi.json' });
        expect(openapi['x-asyncapi']).to.equal('/asyncapi.json');
        expect(openapi.info.description).to.endWith('What the server sends unasked, its webhooks and event streams, is the AsyncAPI 3.0 document at /asyncapi.json.');
    });
});


// One data set with pay, its clock frozen: a kit instance on SQLite, the default data set of a server of its own on a
// copy of a template database with pay provisioned on PostgreSQL (instances live in SQLite only).
async function frozenDataSet(engine: 'sqlite' | 'postgres', start: string) {

    if (engine === 'sqlite') {
        const kit: TestKit = await createTestKit({ validateResponses: true });
        const instance = await kit.instance({ pay: true, clock: start });
        return { server: kit.server, api: (options: ServerInjectOptions) => instance.inject(options), admin: (path: string) => `/_instances/${instance.id}/${path}`, close: () => kit.close() };
    }

    const keys = mintPayKeys();
    const template = await templateDatabase({}, keys);
    const server = await engineServer('postgres', { clock: start, validateResponses: true }, template.name, keys);
    return {
        server,
        api: (options: ServerInjectOptions) => server.inject(options),
        admin: (path: string) => `/_${path}`,
        close: async () => {

            await server.stop();
            await template.drop();
        }
    };
}


describe('a delivery of every event type', () => {

    const start = '2030-01-01T00:00:00.000Z';

    for (const engine of engines) {
        // A template database migrated, seeded and provisioned on PostgreSQL, then a dozen writes and a move.
        it(`fits its type's message in the AsyncAPI document and its data schema in the catalogue, on ${engine}`, { timeout: 30_000 }, async () => {

            const { server, api, admin, close } = await frozenDataSet(engine, start);
            const receiver = await startReceiver();
            const failing = await startReceiver({ status: 500 });
            try {
                const ok = <T = Record<string, unknown>>(res: ServerInjectResponse, status: number): T => {

                    expect(res.statusCode, res.payload).to.equal(status);
                    return body<T>(res);
                };

                const asAdmin = (method: string, path: string, payload?: object) => server.inject({ method, url: admin(path), headers: adminBearer(server), payload });
                const as = (subject: string, method: string, url: string, payload?: object, headers: Record<string, string> = {}) => api({ method, url, headers: { ...bearer(server, subject), ...headers }, payload });

                // Every type but the given-up one to the receiver; the products' to an endpoint that fails once and gives up.
                ok(await asAdmin('PUT', 'webhooks', { endpoints: [{ url: receiver.url, secret: receiver.secret }, { url: failing.url, types: ['commerce.product.created'], retry_schedule: [] }] }), 200);

                const product = ok<{ id: string }>(await as('ann', 'POST', '/v1/commerce/products', { name: 'Rye loaf', price: 4.5, currency: 'USD', business_id: bakery }), 201);
                ok(await as('bo', 'POST', '/v1/commerce/inquiries', { product_id: product.id, message: 'Is it baked today?' }), 201);
                // The bakery's first report flags it.
                ok(await as('bo', 'POST', '/v1/commerce/scam-reports', { target_type: 'business', target_id: bakery, reason: 'Took a deposit and closed' }), 201);

                const [first, second] = ok<List<{ id: string }>>(await as('cy', 'GET', '/v1/logistics/vehicles?available=true&limit=2'), 200).data;
                const [depot] = ok<List<{ id: string }>>(await as('cy', 'GET', '/v1/logistics/locations'), 200).data;
                const book = (vehicle: string) => as('cy', 'POST', '/v1/logistics/bookings', { vehicle_id: vehicle, pickup_location_id: depot!.id, dropoff_location_id: depot!.id, pickup_at: '2030-01-02T10:00:00.000Z', return_at: '2030-01-03T10:00:00.000Z' });
                ok(await book(first!.id), 201);
                const cancelled = ok<{ id: string }>(await book(second!.id), 201);
                ok(await as('cy', 'POST', `/v1/logistics/bookings/${cancelled.id}/cancel`), 200);

                const deposit = (provider: string, amount: number, key: string) => as('dee', 'POST', '/v1/pay/gateway/deposit', { provider_id: provider, asset: 'USD', amount }, { 'idempotency-key': key });
                ok(await deposit('bank-transfer', 10000, 'settles'), 201);
                // An amount ending in 99 comes back from the bank: the transfer fails.
                ok(await deposit('bank-transfer', 10099, 'comes-back'), 201);
                ok(await deposit('sandbox', 500, 'at-once'), 201);

                // Three days start and complete the booking and settle the transfers, and send what they announce.
                ok(await asAdmin('PUT', 'clock', { advance: '3d' }), 200);
                ok(await asAdmin('POST', 'webhooks/flush'), 200);

                const catalogue = new Map(ok<List<CatalogueEntry>>(await server.inject({ url: '/_events/types', headers: adminBearer(server) }), 200).data.map((entry) => [entry.type, entry]));
                const document = ok<AsyncApi>(await server.inject('/asyncapi.json'), 200);
                const headers = compiled(document.components.schemas.StandardWebhooksHeaders!, document);
                const check = (validate: ValidateFunction, value: unknown, what: string) => expect(validate(value), `${what}: ${ajv.errorsText(validate.errors)}`).to.be.true();

                const deliveries: ReceivedWebhook[] = await receiver.waitFor(15, { timeoutMs: 20_000 });
                expect(deliveries.map(({ event }) => event!.type).sort()).to.equal([
                    'commerce.business.flagged', 'commerce.inquiry.created', 'commerce.product.created', 'commerce.scam_report.created',
                    'logistics.booking.cancelled', 'logistics.booking.completed', 'logistics.booking.created', 'logistics.booking.created', 'logistics.booking.started',
                    'pay.transaction.completed', 'pay.transaction.completed', 'pay.transaction.created', 'pay.transaction.created', 'pay.transaction.created', 'pay.transaction.failed'
                ]);
                expect(new Set(deliveries.map(({ event }) => event!.type))).to.equal(new Set(delivered));
                for (const delivery of deliveries) {
                    const type = delivery.event!.type;
                    expect(delivery.verified, delivery.failure ?? type).to.be.true();
                    check(compiled(document.components.messages[`webhook.${type}`]!.payload, document), JSON.parse(delivery.body), `the body of ${type}`);
                    check(headers, delivery.headers, `the headers of ${type}`);
                    check(ajv.compile(catalogue.get(type)!.data_schema), delivery.event!.data, `the data of ${type}`);
                }

                // The one event never delivered, as the log and the stream show it.
                expect((await failing.waitFor(1, { timeoutMs: 20_000 })).map(({ status, event }) => [status, event!.type])).to.equal([[500, 'commerce.product.created']]);
                const events = ok<List<ListedEvent>>(await asAdmin('GET', 'events?limit=100'), 200).data;
                expect(events.length).to.equal(16);
                expect(new Set(events.map(({ type }) => type))).to.equal(new Set(eventTypes));
                for (const event of events) {
                    check(compiled(document.components.messages[`stream.${event.type}`]!.payload, document), event, `the event ${event.type}`);
                    check(ajv.compile(catalogue.get(event.type)!.data_schema), event.data, `the data of ${event.type}`);
                }
            }
            finally {
                await close();
                await receiver.close();
                await failing.close();
            }
        });
    }
});
