import Zlib from 'node:zlib';

import Code from '@hapi/code';
import type { Server } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { defaultCode } from '../lib/errors';

import { expectError } from './helpers/errors';
import { engineServer, engines } from './helpers/postgres';
import { bearer, body, testServer } from './helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


interface Document {
    paths: Record<string, Record<string, { parameters?: { name: string; in: string }[]; requestBody?: object }>>;
}


for (const engine of engines) {
    describe(`error bodies (${engine})`, () => {

        let server: Server;

        before(async () => {

            server = await engineServer(engine, { corsOrigins: ['http://localhost:5173'] });
        });

        after(async () => {

            await server.stop();
        });

        const json = { 'content-type': 'application/json' };

        it('answers a gzip body that is not gzip with the common shape, not the decoder\'s error', async () => {

            const res = await server.inject({
                method: 'POST',
                url: '/v1/commerce/products',
                headers: { ...bearer(server, 'alice'), ...json, 'content-encoding': 'gzip' },
                payload: 'not gzip at all'
            });
            expect(expectError(res, 400, 'bad_request')).to.not.include(['errno']);
        });

        it('reads a real gzip body', async () => {

            const res = await server.inject({
                method: 'POST',
                url: '/v1/commerce/products',
                headers: { ...bearer(server, 'alice'), ...json, 'content-encoding': 'gzip' },
                payload: Zlib.gzipSync(JSON.stringify({ colour: 'blue' }))
            });
            expect(expectError(res, 400, 'validation_failed').details).to.contain({ field: 'colour', message: 'colour is not allowed' });
        });

        it('answers 401 without an attributes object, the reason staying in WWW-Authenticate', async () => {

            const res = await server.inject({ url: '/v1/logistics/bookings', headers: bearer(server, 'alice', -60) });
            expect(expectError(res, 401, 'unauthorized')).to.equal({ statusCode: 401, error: 'Unauthorized', message: 'Token expired', code: 'unauthorized' });
            expect(res.headers['www-authenticate']).to.equal('Bearer error="Token expired"');
        });

        it('refuses a CORS preflight from another origin with a 403', async () => {

            const res = await server.inject({ method: 'OPTIONS', url: '/v1/commerce/products', headers: { origin: 'http://evil.test', 'access-control-request-method': 'GET' } });
            expect(expectError(res, 403, 'cors_not_allowed').message).to.equal('CORS preflight refused: Origin not allowed');
            expect(res.headers['access-control-allow-origin']).to.not.exist();
        });

        it('refuses a CORS preflight asking for a header it does not allow with a 403', async () => {

            const res = await server.inject({
                method: 'OPTIONS',
                url: '/v1/commerce/products',
                headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-secret' }
            });
            expect(expectError(res, 403, 'cors_not_allowed').message).to.equal('CORS preflight refused: Some headers are not allowed');
        });

        it('answers an allowed preflight, with X-Request-Id among the allowed and exposed headers', async () => {

            const res = await server.inject({ method: 'OPTIONS', url: '/v1/commerce/products', headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-request-id' } });
            expect(res.statusCode).to.equal(200);
            expect(res.headers['access-control-allow-headers']).to.contain('X-Request-Id');
            const simple = await server.inject({ url: '/v1/weather/status', headers: { origin: 'http://localhost:5173' } });
            expect(simple.headers['access-control-expose-headers']).to.contain('X-Request-Id');
        });

        it('refuses a CORS preflight for a method the path does not route, or without an Origin', async () => {

            const method = await server.inject({ method: 'OPTIONS', url: '/v1/commerce/products', headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'DELETE' } });
            expect(expectError(method, 403, 'cors_not_allowed').message).to.equal('CORS preflight refused: DELETE is not allowed on /v1/commerce/products');
            const origin = await server.inject({ method: 'OPTIONS', url: '/v1/commerce/products', headers: { 'access-control-request-method': 'GET' } });
            expect(expectError(origin, 403, 'cors_not_allowed').message).to.equal('CORS preflight refused: Missing Origin header');
        });

        it('answers a preflight for an unknown path with a plain 404', async () => {

            const res = await server.inject({ method: 'OPTIONS', url: '/v2/nothing', headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'GET' } });
            expect(expectError(res, 404, 'not_found').message).to.equal('No route serves /v2/nothing: the routes are listed at /docs');
        });

        it('answers a plain OPTIONS with the methods of the path, and 404 for an unknown path', async () => {

            const known = await server.inject({ method: 'OPTIONS', url: '/v1/commerce/products' });
            expect(known.statusCode).to.equal(204);
            expect(known.headers.allow).to.equal('GET, HEAD, POST, OPTIONS');
            const unknown = await server.inject({ method: 'OPTIONS', url: '/v2/nothing' });
            expect(expectError(unknown, 404, 'not_found').message).to.equal('No route serves /v2/nothing: the routes are listed at /docs');
        });

        it('answers a known path with a wrong method with 405 and an Allow header', async () => {

            const res = await server.inject({ method: 'DELETE', url: '/v1/commerce/products' });
            expect(expectError(res, 405, 'method_not_allowed').message).to.equal('DELETE is not allowed on /v1/commerce/products: use GET, HEAD, POST');
            expect(res.headers.allow).to.equal('GET, HEAD, POST');
            const withId = await server.inject({ method: 'PUT', url: '/v1/logistics/bookings/some-id' });
            expect(expectError(withId, 405, 'method_not_allowed')).to.exist();
            expect(withId.headers.allow).to.equal('GET, HEAD');
        });

        it('keeps 400 for a path hapi cannot read', async () => {

            const res = await server.inject({ method: 'GET', url: '/v1/commerce/products/%E0%A4%A' });
            expectError(res, 400, 'bad_request');
        });

        it('says why it refuses JSON with a __proto__ key', async () => {

            const res = await server.inject({
                method: 'POST',
                url: '/v1/commerce/products',
                headers: { ...bearer(server, 'alice'), ...json },
                payload: '{"name": "x", "__proto__": {"admin": true}}'
            });
            expect(expectError(res, 400, 'bad_request').message).to.equal('Invalid request payload JSON: a key named __proto__ is not accepted');
            const broken = await server.inject({ method: 'POST', url: '/v1/commerce/products', headers: { ...bearer(server, 'alice'), ...json }, payload: '{"name": ' });
            expect(expectError(broken, 400, 'bad_request').message).to.equal('Invalid request payload JSON format');
        });

        it('answers 413 and 415 with the common shape', async () => {

            const big = await server.inject({ method: 'POST', url: '/v1/logistics/bookings', headers: { ...bearer(server, 'alice'), ...json }, payload: JSON.stringify({ notes: 'x'.repeat(65 * 1024) }) });
            expectError(big, 413, 'payload_too_large');
            const text = await server.inject({ method: 'POST', url: '/v1/logistics/bookings', headers: { ...bearer(server, 'alice'), 'content-type': 'text/plain' }, payload: 'x' });
            expectError(text, 415, 'unsupported_media_type');
        });

        it('words every 404 and 422 about a missing record the same way in every namespace', async () => {

            const alice = bearer(server, 'alice');
            const notFound = [
                '/v1/commerce/products/nope', '/v1/commerce/businesses/nope', '/v1/commerce/inquiries/nope', '/v1/commerce/scam-reports/nope',
                '/v1/logistics/vehicles/nope', '/v1/logistics/bookings/nope'
            ];
            for (const url of notFound) {
                const error = expectError(await server.inject({ url, headers: alice }), 404);
                expect(error.message, url).to.match(/^There is no [a-z ]+ with this id$/);
            }

            const unprocessable: [string, object][] = [
                ['/v1/commerce/products', { name: 'x', price: 1, currency: 'USD', business_id: 'nope' }],
                ['/v1/commerce/inquiries', { product_id: 'nope', message: 'Hello' }],
                ['/v1/commerce/scam-reports', { target_type: 'offer', target_id: 'nope', reason: 'Scam' }],
                ['/v1/logistics/bookings', { vehicle_id: 'nope', pickup_location_id: 'nope', dropoff_location_id: 'nope', pickup_at: '2030-01-01T00:00:00Z', return_at: '2030-01-02T00:00:00Z' }]
            ];
            for (const [url, payload] of unprocessable) {
                const error = expectError(await server.inject({ method: 'POST', url, headers: alice, payload }), 422);
                expect(error.message, url).to.match(/^[a-z_]+ refers to no existing [a-z ]+$/);
                expect(error.details).to.equal([{ field: (error.message as string).split(' ')[0], message: error.message }]);
            }
        });

        it('answers every method of every documented path with the common shape when it fails', { timeout: 20_000 }, async () => {

            const document = body<Document>(await server.inject('/openapi.json'));
            const stranger = { authorization: 'Bearer not.a.token' };
            let failures = 0;
            // The console's event stream answers with a stream that stays open by design.
            const paths = Object.entries(document.paths).filter(([template]) => template !== '/console/api/events');
            // A path another template takes too (PATCH /_webhooks/flush is /_webhooks/{endpoint_id}'s) is that one's.
            const takes = (template: string, path: string) => new RegExp(`^${template.replace(/\{[a-z_]+\}/g, '[^/]+')}$`).test(path);
            for (const [template, operations] of paths) {
                const path = template.replace(/\{[a-z_]+\}/g, 'nope');
                const listed = Object.keys(operations).map((method) => method.toUpperCase());
                const elsewhere = paths.filter(([other]) => other !== template && takes(other, path)).flatMap(([, others]) => Object.keys(others).map((method) => method.toUpperCase()));
                for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
                    if (elsewhere.includes(method)) {
                        continue;
                    }

                    if (!listed.includes(method)) {
                        const res = await server.inject({ method, url: path });
                        expectError(res, 405, 'method_not_allowed');
                        expect(res.headers.allow!.split(', ')).to.include(listed);
                        ++failures;
                        continue;
                    }

                    const payload = operations[method.toLowerCase()]!.requestBody ? {} : undefined;
                    const attempts = [
                        { method, url: path, headers: stranger, payload },
                        { method, url: `${path}?unknown_parameter=1`, headers: bearer(server, 'alice'), payload },
                        { method, url: path, headers: bearer(server, 'alice'), payload: payload && { unknown_field: 1 } }
                    ];
                    for (const attempt of attempts) {
                        const res = await server.inject(attempt);
                        if (res.statusCode >= 400) {
                            expectError(res, res.statusCode);
                            ++failures;
                        }
                    }
                }
            }

            // 405s for the methods no path lists, 400/401/404/501s for the ones it does.
            expect(failures).to.be.above(100);
        });
    });
}


describe('X-Request-Id', () => {

    let server: Server;

    before(async () => {

        server = await testServer();
    });

    after(async () => {

        await server.stop();
    });

    it('echoes a sane incoming id on a success, an error and an unknown route', async () => {

        for (const url of ['/health', '/v1/logistics/bookings', '/v2/nothing']) {
            const res = await server.inject({ url, headers: { 'x-request-id': 'client-42:run.7_a' } });
            expect(res.headers['x-request-id'], url).to.equal('client-42:run.7_a');
            expect(res.request.info.id).to.equal('client-42:run.7_a');
        }
    });

    it('generates an id when none or an insane one is sent', async () => {

        const insane = ['', 'has space', 'x'.repeat(129), 'new\u2028line', 'a,b'];
        const ids = new Set<string>();
        for (const sent of [undefined, ...insane]) {
            const res = await server.inject({ url: '/health', headers: sent === undefined ? {} : { 'x-request-id': sent } });
            const id = res.headers['x-request-id'] as string;
            expect(id).to.match(/^[0-9a-f-]{36}$/);
            expect(id).to.equal(res.request.info.id);
            ids.add(id);
        }

        expect(ids.size).to.equal(insane.length + 1);
    });

    it('accepts an id of exactly 128 characters', async () => {

        const res = await server.inject({ url: '/health', headers: { 'x-request-id': 'a'.repeat(128) } });
        expect(res.headers['x-request-id']).to.equal('a'.repeat(128));
    });

    it('is documented as a header of every response', async () => {

        const document = body<{ paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>> }>(await server.inject('/openapi.json'));
        for (const [path, operations] of Object.entries(document.paths)) {
            for (const [method, operation] of Object.entries(operations)) {
                for (const [status, response] of Object.entries(operation.responses)) {
                    expect(response.headers, `${method} ${path} ${status}`).to.include('X-Request-Id');
                }
            }
        }
    });
});


describe('default codes', () => {

    it('are the status reason in snake case, and unknown for a status Node has no reason for', () => {

        expect([400, 404, 413, 503].map(defaultCode)).to.equal(['bad_request', 'not_found', 'payload_too_large', 'service_unavailable']);
        expect(defaultCode(499)).to.equal('unknown');
    });
});
