import Code from '@hapi/code';
import type { Server, ServerInjectOptions } from '@hapi/hapi';
import Lab from '@hapi/lab';
import { JSONPath } from 'jsonpath-plus';

import { Journal, JournalBudget } from '../lib/data-set/journal';
import { jsonEqual, maxMatchingSteps } from '../lib/journal/json-match';
import { editDistance } from '../lib/journal/near-miss';
import { maxCachedJsonPaths } from '../lib/journal/pattern-schema';
import type { Recorded } from '../lib/data-set/journal-entry';
import { liveHeapBytes } from './helpers/gc';
import { adminBearer, bearer, body, type List, testServer } from './helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


interface Entry {
    id: string;
    at: string;
    method: string;
    path: string;
    query: Record<string, string | string[]>;
    headers: Record<string, string>;
    body: unknown;
    body_truncated: boolean;
    caller: string | null;
    status: number | null;
    code: string | null;
    duration_ms: number;
    route: string | null;
    fault: string | null;
    near_miss: { method: string; path: string } | null;
}

const bakery = 'd851fadb-03ca-5a24-ba16-c15cce19933b';

const product = (name: string, extra: object = {}) => ({ name, price: 2.5, currency: 'USD', business_id: bakery, ...extra });


describe('the request journal', () => {

    let server: Server;

    const admin = (method: string, url: string, payload?: object) => server.inject({ method, url, headers: adminBearer(server), payload } as ServerInjectOptions);
    const create = async (options: object = {}) => body<{ id: string; base_path: string }>(await admin('POST', '/_instances', options));
    const entries = async (id: string, query = '') => {

        const res = await admin('GET', `/_instances/${id}/requests${query}`);
        expect(res.statusCode, res.payload).to.equal(200);
        return body<List<Entry>>(res);
    };

    before(async () => {

        server = await testServer({ pay: { publishableKey: 'pk_visible_never', secretKey: 'sk_visible_never' } });
    });

    after(async () => {

        await server.stop();
    });

    it('records a request as it was sent, with its answer, caller and route', async () => {

        const { id, base_path: base } = await create();
        const res = await server.inject({
            method: 'POST', url: `${base}/v1/commerce/products?ref=mail&tag=a&tag=b`,
            headers: { ...bearer(server, 'ann'), 'x-request-id': 'req-1', 'user-agent': 'shop/1.0' },
            payload: product('Loaf')
        });
        expect(res.statusCode).to.equal(201);

        const list = await entries(id);
        expect(list.count).to.equal(1);
        expect(list.total).to.equal(1);
        const [entry] = list.data;
        expect(entry).to.equal({
            id: 'req-1',
            at: entry!.at,
            method: 'POST',
            path: '/v1/commerce/products',
            query: { ref: 'mail', tag: ['a', 'b'] },
            headers: entry!.headers,
            body: product('Loaf'),
            body_truncated: false,
            caller: 'ann',
            status: 201,
            code: null,
            duration_ms: entry!.duration_ms,
            route: '/v1/commerce/products',
            fault: null,
            near_miss: null
        });
        expect(entry!.headers).to.include({ authorization: '[hidden]', 'x-request-id': 'req-1', 'user-agent': 'shop/1.0', 'content-type': 'application/json' });
        expect(Date.parse(entry!.at)).to.be.a.number();
    });

    it('records a body that is not there as null: an empty one, or one never read', async () => {

        const { id, base_path: base } = await create();
        const empty = await server.inject({ method: 'POST', url: `${base}/v1/commerce/products`, headers: bearer(server, 'ann') });
        expect(empty.statusCode).to.equal(400);
        await server.inject(`${base}/v1/weather/status`);
        expect((await entries(id)).data.map((entry) => [entry.status, entry.body, entry.body_truncated])).to.equal([[400, null, false], [200, null, false]]);
    });

    it('hides credentials by header name and by value, in the query and in the body', async () => {

        const { id, base_path: base } = await create();
        const token = bearer(server, 'ann').authorization.slice('Bearer '.length);
        await server.inject({
            method: 'GET', url: `${base}/v1/commerce/products?api_key=abc&q=${token}&plain=yes`,
            headers: {
                authorization: `Bearer ${token}`, cookie: 'sid=1', 'proxy-authorization': 'Basic eDp5', 'x-api-key': 'k-123',
                'x-forwarded-auth': 'Bearer opaque', 'x-note': 'pk_visible_never', 'idempotency-key': 'order-7'
            }
        });
        await server.inject({ method: 'POST', url: `${base}/v1/commerce/products?token=${token}`, headers: bearer(server, 'ann'), payload: product(`Token ${token}`) });
        await server.inject({ method: 'POST', url: `${base}/v1/logistics/bookings`, headers: bearer(server, 'ann'), payload: { notes: [token, 'sk_visible_never'], meta: { at: token, n: 1, none: null } } });

        const [read, write, broken] = (await entries(id)).data;
        expect(read!.headers).to.include({
            authorization: '[hidden]', cookie: '[hidden]', 'proxy-authorization': '[hidden]', 'x-api-key': '[hidden]',
            'x-forwarded-auth': '[hidden]', 'x-note': '[hidden]', 'idempotency-key': 'order-7'
        });
        expect(read!.query).to.equal({ api_key: '[hidden]', q: '[hidden]', plain: 'yes' });
        expect(write!.body).to.include({ name: 'Token [hidden]' });
        expect(write!.status).to.equal(201);
        expect(broken!.body).to.equal({ notes: ['[hidden]', '[hidden]'], meta: { at: '[hidden]', n: 1, none: null } });
        expect(broken!.status).to.equal(400);
        expect(JSON.stringify(await entries(id))).to.not.contain(token).and.to.not.contain('sk_visible_never').and.to.not.contain('pk_visible_never');

        const found = body<{ count: number }>(await admin('POST', `/_instances/${id}/requests/count`, { url: '/v1/commerce/products?token=%5Bhidden%5D' }));
        expect(found.count).to.equal(1);
    });

    it('hides a whsec_ webhook secret in the path, the query, a header and the body', async () => {

        const { id, base_path: base } = await create();
        const secret = `whsec_${Buffer.alloc(32, 251).toString('base64')}`;
        const plain = secret.replace(/[+/=]/g, 'A');
        await server.inject({ method: 'GET', url: `${base}/v1/commerce/products/${plain}?q=${encodeURIComponent(secret)}&plain=yes`, headers: { 'x-note': secret } });
        await server.inject({ method: 'POST', url: `${base}/v1/commerce/products`, headers: bearer(server, 'ann'), payload: product('Hook', { description: `mine is ${secret}` }) });

        const [read, write] = (await entries(id)).data;
        expect(read!.path).to.equal('/v1/commerce/products/[hidden]');
        expect(read!.query).to.equal({ q: '[hidden]', plain: 'yes' });
        expect(read!.headers).to.include({ 'x-note': '[hidden]' });
        expect(write!.body).to.include({ description: 'mine is [hidden]' });
        expect(JSON.stringify(await entries(id))).to.not.contain('whsec_');
    });

    it('names the closest route of a request no route took, and lists only those with unmatched=true', async () => {

        const { id, base_path: base } = await create();
        expect((await server.inject(`${base}/v1/commerce/product`)).statusCode).to.equal(404);
        expect((await server.inject({ method: 'DELETE', url: `${base}/v1/logistics/vehicles` })).statusCode).to.equal(405);
        expect((await server.inject(`${base}/v1/logistics/vehicles/abc`)).statusCode).to.equal(404);
        expect((await server.inject(`${base}/v1/commerce/products/abc/reviews`)).statusCode).to.equal(404);

        const all = await entries(id);
        expect(all.data.map((entry) => [entry.status, entry.code, entry.route, entry.near_miss])).to.equal([
            [404, 'not_found', null, { method: 'GET', path: '/v1/commerce/products' }],
            [405, 'method_not_allowed', null, { method: 'GET', path: '/v1/logistics/vehicles' }],
            [404, 'vehicle_not_found', '/v1/logistics/vehicles/{vehicle_id}', null],
            [404, 'not_found', null, { method: 'GET', path: '/v1/commerce/products/{product_id}' }]
        ]);

        const unmatched = await entries(id, '?unmatched=true&limit=1&offset=1');
        expect(unmatched).to.equal({ data: [all.data[1]!], count: 1, total: 3 });
    });

    it('marks the fault that acted, and what a dropped reply would have been', async () => {

        const { id, base_path: base } = await create();
        const { rules } = body<{ rules: { id: string }[] }>(await admin('PUT', `/_instances/${id}/faults`, {
            rules: [
                { method: 'GET', path: '/v1/weather/status', status: 503, times: 1 },
                { method: 'GET', path: '/v1/weather/status', drop: 'before', times: 1 },
                { method: 'GET', path: '/v1/weather/status', drop: 'after', times: 1 },
                { method: 'GET', path: '/v1/weather/forecast', drop: 'after', times: 1 }
            ]
        }));

        for (const path of ['status', 'status', 'status', 'forecast', 'status']) {
            await server.inject(`${base}/v1/weather/${path}`);
        }

        await admin('PUT', `/_instances/${id}/faults`, { rules: [{ path: '/v1/weather/*', status: 500 }] });
        await server.inject(`${base}/v1/weather/radar`);

        const seen = (await entries(id)).data.map((entry) => [entry.status, entry.code, entry.fault, entry.route, entry.near_miss]);
        expect(seen).to.equal([
            [503, 'service_unavailable', rules[0]!.id, '/v1/weather/status', null],
            [null, null, rules[1]!.id, '/v1/weather/status', null],
            [200, null, rules[2]!.id, '/v1/weather/status', null],
            [501, 'weather_not_provisioned', rules[3]!.id, '/v1/weather/forecast', null],
            [200, null, null, '/v1/weather/status', null],
            [500, 'internal_server_error', seen[5]![2]!, null, null]
        ]);
    });

    it('keeps arrival order when a slow request finishes last', async () => {

        const { id, base_path: base } = await create();
        await admin('PUT', `/_instances/${id}/faults`, { rules: [{ path: '/v1/weather/forecast', latency_ms: 30 }] });
        await Promise.all([server.inject(`${base}/v1/weather/forecast`), server.inject(`${base}/v1/weather/status`)]);
        expect((await entries(id)).data.map((entry) => entry.path)).to.equal(['/v1/weather/forecast', '/v1/weather/status']);
    });

    it('records the default data set at /_requests, apart from every instance, and never the admin routes or /health', async () => {

        const { id, base_path: base } = await create();
        expect((await admin('DELETE', '/_requests')).statusCode).to.equal(204);
        await server.inject('/v1/weather/status');
        await server.inject('/health');
        await server.inject(`${base}/health`);
        await server.inject(`${base}/v1/weather/forecast`);
        await admin('GET', `/_instances/${id}`);

        const mine = body<List<Entry>>(await admin('GET', '/_requests'));
        expect(mine.data.map((entry) => entry.path)).to.equal(['/v1/weather/status']);
        expect((await entries(id)).data.map((entry) => entry.path)).to.equal(['/v1/weather/forecast']);
        expect(body(await admin('POST', '/_requests/count', { urlPath: '/v1/weather/status' }))).to.equal({ count: 1 });
        expect(body<{ requests: Entry[] }>(await admin('POST', '/_requests/find', {})).requests).to.equal(mine.data);
    });

    it('forgets an instance\'s entries on DELETE, and needs the admin token', async () => {

        const { id, base_path: base } = await create();
        await server.inject(`${base}/v1/weather/status`);
        expect((await admin('DELETE', `/_instances/${id}/requests`)).statusCode).to.equal(204);
        expect((await entries(id)).total).to.equal(0);

        const res = await server.inject({ method: 'GET', url: `/_instances/${id}/requests`, headers: bearer(server, 'ann') });
        expect(res.statusCode).to.equal(403);
        expect((await admin('POST', '/_instances/nope/requests/count', {})).statusCode).to.equal(404);
    });

    describe('patterns', () => {

        let id: string;

        before(async () => {

            const created = await create();
            id = created.id;
            const base = created.base_path;
            await server.inject({ method: 'POST', url: `${base}/v1/commerce/products?src=app`, headers: { ...bearer(server, 'ann'), 'x-client': 'Shop/2' }, payload: product('Rye', { description: 'dark bread' }) });
            await server.inject({ method: 'POST', url: `${base}/v1/commerce/scam-reports`, headers: bearer(server, 'bob'), payload: { target_type: 'business', target_id: bakery, reason: 'odd' } });
            await server.inject(`${base}/v1/commerce/products?limit=2&tag=x&tag=y`);
            await server.inject({ method: 'POST', url: `${base}/v1/logistics/bookings`, headers: bearer(server, 'ann'), payload: { list: [1, 2, 3], nested: { a: 1, b: [{ c: 2 }] } } });
        });

        const count = async (pattern: object | null) => {

            const res = await admin('POST', `/_instances/${id}/requests/count`, pattern ?? undefined);
            expect(res.statusCode, res.payload).to.equal(200);
            return body<{ count: number }>(res).count;
        };

        const cases: [string, object | null, number][] = [
            ['nothing: every request', null, 4],
            ['a method', { method: 'POST' }, 3],
            ['a method in lower case', { method: 'get' }, 1],
            ['ANY method', { method: 'ANY' }, 4],
            ['url: path and query exactly', { url: '/v1/commerce/products?src=app' }, 1],
            ['url without the query it was sent with', { url: '/v1/commerce/products' }, 0],
            ['urlPath', { urlPath: '/v1/commerce/products' }, 2],
            ['urlPathPattern, as a whole match', { urlPathPattern: '/v1/commerce/.*' }, 3],
            ['urlPathPattern that matches a part only', { urlPathPattern: 'commerce' }, 0],
            ['urlPattern over the query', { urlPattern: '.*limit=2.*' }, 1],
            ['a header equalTo, named in any case', { headers: { 'X-Client': { equalTo: 'Shop/2' } } }, 1],
            ['a header equalTo caseInsensitive', { headers: { 'x-client': { equalTo: 'shop/2', caseInsensitive: true } } }, 1],
            ['a header contains', { headers: { 'x-client': { contains: 'hop' } } }, 1],
            ['a header matches', { headers: { 'x-client': { matches: 'Shop/\\d' } } }, 1],
            ['a header matches caseInsensitive', { headers: { 'x-client': { matches: 'shop/\\d', caseInsensitive: true } } }, 1],
            ['a header absent', { headers: { 'x-client': { absent: true } } }, 3],
            ['a header present', { headers: { Authorization: { absent: false } } }, 3],
            ['a credential header by value', { headers: { Authorization: { contains: 'Bearer' } } }, 0],
            ['a query parameter', { queryParameters: { src: { equalTo: 'app' } } }, 1],
            ['a repeated query parameter, any of its values', { queryParameters: { tag: { equalTo: 'y' } } }, 1],
            ['a missing query parameter', { queryParameters: { src: { contains: 'a' }, tag: { absent: true } } }, 1],
            ['equalToJson', { bodyPatterns: [{ equalToJson: product('Rye', { description: 'dark bread' }) }] }, 1],
            ['equalToJson as text', { bodyPatterns: [{ equalToJson: JSON.stringify(product('Rye', { description: 'dark bread' })) }] }, 1],
            ['equalToJson missing a field', { bodyPatterns: [{ equalToJson: { name: 'Rye' } }] }, 0],
            ['equalToJson ignoreExtraElements', { bodyPatterns: [{ equalToJson: { name: 'Rye' }, ignoreExtraElements: true }] }, 1],
            ['equalToJson with arrays in order', { bodyPatterns: [{ equalToJson: { list: [1, 2, 3], nested: { a: 1, b: [{ c: 2 }] } } }] }, 1],
            ['equalToJson with arrays out of order', { bodyPatterns: [{ equalToJson: { list: [3, 2, 1], nested: { a: 1, b: [{ c: 2 }] } } }] }, 0],
            ['equalToJson ignoreArrayOrder', { bodyPatterns: [{ equalToJson: { list: [3, 1, 2], nested: { a: 1, b: [{ c: 2 }] } }, ignoreArrayOrder: true }] }, 1],
            ['equalToJson ignoreExtraElements in arrays', { bodyPatterns: [{ equalToJson: { list: [1, 2], nested: { b: [] } }, ignoreExtraElements: true }] }, 1],
            ['equalToJson null: requests without a body', { bodyPatterns: [{ equalToJson: null }] }, 1],
            ['matchesJsonPath', { bodyPatterns: [{ matchesJsonPath: '$.nested.b[?(@.c == 2)]' }] }, 1],
            ['matchesJsonPath with no match', { bodyPatterns: [{ matchesJsonPath: '$.colour' }] }, 0],
            ['matchesJsonPath whose filter fails on a body', { bodyPatterns: [{ matchesJsonPath: '$.nested.b[?(@.x.y == 1)]' }] }, 0],
            ['matchesJsonPath with a script step', { bodyPatterns: [{ matchesJsonPath: '$.list[(@.length-1)]' }] }, 1],
            ['body contains', { bodyPatterns: [{ contains: 'dark' }] }, 1],
            ['several body patterns, all of them', { bodyPatterns: [{ contains: 'dark' }, { matchesJsonPath: '$.price' }] }, 1],
            ['everything at once', { method: 'POST', urlPath: '/v1/commerce/scam-reports', headers: { authorization: { equalTo: '[hidden]' } }, bodyPatterns: [{ equalToJson: '{"reason":"odd"}', ignoreExtraElements: true }] }, 1]
        ];

        for (const [name, pattern, expected] of cases) {
            it(`counts by ${name}`, async () => {

                expect(await count(pattern)).to.equal(expected);
            });
        }

        it('finds the matching entries, oldest first', async () => {

            const res = await admin('POST', `/_instances/${id}/requests/find`, { method: 'POST', urlPathPattern: '/v1/commerce/.*' });
            expect(res.statusCode).to.equal(200);
            expect(body<{ requests: Entry[] }>(res).requests.map((entry) => entry.path)).to.equal(['/v1/commerce/products', '/v1/commerce/scam-reports']);
        });

        const refusals: [string, object, string, string][] = [
            ['an unknown key', { verb: 'GET' }, 'verb', 'verb is not allowed'],
            ['two url keys', { url: '/v1/a', urlPath: '/v1/a' }, 'url, urlPath, urlPathPattern, urlPattern', 'The request pattern may hold only one of url, urlPath, urlPathPattern and urlPattern'],
            ['a regular expression that does not compile', { urlPathPattern: '(' }, 'urlPathPattern', 'urlPathPattern must be a regular expression RE2 accepts: no backreferences or lookaround'],
            ['a backreference, which RE2 has not', { headers: { 'x-t': { matches: '(a)\\1' } } }, 'headers.x-t.matches', 'headers.x-t.matches must be a regular expression RE2 accepts: no backreferences or lookaround'],
            ['a regular expression past the compiled size', { urlPattern: '(?:a?){100}a{100}' }, 'urlPattern', 'urlPattern compiles to more than 200 instructions: use a shorter pattern or fewer repetitions'],
            ['a second recursive descent', { bodyPatterns: [{ matchesJsonPath: '$..*..*..*..*' }] }, 'bodyPatterns.0.matchesJsonPath', 'bodyPatterns[0].matchesJsonPath may hold one recursive descent (..) at most'],
            ['unions that fan out too far', { bodyPatterns: [{ matchesJsonPath: '$[*,*][*,*][*,*][*,*][*,*]' }] }, 'bodyPatterns.0.matchesJsonPath', 'bodyPatterns[0].matchesJsonPath selects too many branches: the sizes of its unions ([a,b]) multiply to more than 16'],
            ['a function call in a filter', { bodyPatterns: [{ matchesJsonPath: '$[?(@.name.match(/(a+)+b/))]' }] }, 'bodyPatterns.0.matchesJsonPath', 'bodyPatterns[0].matchesJsonPath calls a function in a filter or script: only comparisons and property reads are allowed'],
            ['a JSONPath that is neither text nor an object', { bodyPatterns: [{ matchesJsonPath: 5 }] }, 'bodyPatterns.0.matchesJsonPath', 'bodyPatterns[0].matchesJsonPath must be a JSONPath expression, or an object with an expression and a sub-matcher'],
            ['an expression without a sub-matcher', { bodyPatterns: [{ matchesJsonPath: { expression: '$.name' } }] }, 'bodyPatterns.0.matchesJsonPath', 'bodyPatterns[0].matchesJsonPath must hold one of equalTo, contains, matches, absent or equalToJson beside its expression'],
            ['a matcher with no operator', { headers: { a: {} } }, 'headers.a', 'headers.a must hold one of equalTo, contains, matches or absent'],
            ['a matcher with two operators', { queryParameters: { a: { equalTo: 'x', contains: 'y' } } }, 'queryParameters.a', 'queryParameters.a must hold only one of equalTo, contains, matches or absent'],
            ['a body pattern with no operator', { bodyPatterns: [{}] }, 'bodyPatterns.0', 'bodyPatterns[0] must hold one of equalToJson, matchesJsonPath or contains'],
            ['a body pattern with two operators', { bodyPatterns: [{ contains: 'a', matchesJsonPath: '$.a' }] }, 'bodyPatterns.0', 'bodyPatterns[0] must hold only one of equalToJson, matchesJsonPath or contains'],
            ['ignoreArrayOrder without equalToJson', { bodyPatterns: [{ contains: 'a', ignoreArrayOrder: true }] }, 'bodyPatterns.0', 'bodyPatterns[0] sets ignoreArrayOrder, which goes with equalToJson only'],
            ['equalToJson text that is no JSON', { bodyPatterns: [{ equalToJson: '{nope' }] }, 'bodyPatterns.0.equalToJson', 'bodyPatterns[0].equalToJson must be JSON, or a string holding JSON'],
            ['a JSONPath whose filter does not parse', { bodyPatterns: [{ matchesJsonPath: '$.a[?(@.b ==)]' }] }, 'bodyPatterns.0.matchesJsonPath', 'bodyPatterns[0].matchesJsonPath must be a valid JSONPath expression such as $.amount or $.items[?(@.price > 1)]']
        ];

        const find = (pattern: object) => admin('POST', `/_instances/${id}/requests/find`, pattern);

        for (const [name, pattern, field, message] of refusals) {
            it(`refuses ${name} with a 400 naming the field`, async () => {

                const res = await find(pattern);
                expect(res.statusCode).to.equal(400);
                expect(body<{ details: object[] }>(res).details).to.equal([{ field, message }]);
            });
        }
    });

    describe('patterns as WireMock\'s request matching documents them', () => {

        let id: string;

        before(async () => {

            const created = await create();
            id = created.id;
            const sent = [
                { name: 'Flapjack', price: 3 },
                { things: [{ name: 'RequiredThing' }, { name: 'Wiremock' }] },
                { name: 'Scone', price: 1 },
                { todoItem: 'wash the car', notes: { todoItem: 'buy milk' } },
                [{ price: 5 }],
                { name: null, tags: [], extra: {} },
                5
            ];
            for (const payload of sent) {
                const headers = { ...bearer(server, 'ann'), 'content-type': 'application/json' };
                await server.inject({ method: 'POST', url: `${created.base_path}/v1/commerce/products`, headers, payload: JSON.stringify(payload) });
            }

            // A request without a body, and one whose body was cut: no JSON pattern matches either.
            await server.inject(`${created.base_path}/v1/weather/status`);
            await server.inject({ method: 'POST', url: `${created.base_path}/v1/commerce/products`, headers: bearer(server, 'ann'), payload: { name: 'Flapjack', price: 3, description: 'x'.repeat(20_000) } });
        });

        const cases: [string, object, number][] = [
            ['a root filter on an object body tests the object itself, and one on an array its items', { matchesJsonPath: '$[?(@.price > 2)]' }, 2],
            ['a root filter by name', { matchesJsonPath: '$[?(@.name == \'Flapjack\')]' }, 1],
            ['a root filter on an array body tests its items', { matchesJsonPath: '$[?(@.price == 5)]' }, 1],
            ['a root filter followed by a member', { matchesJsonPath: '$[?(@.price < 2)].name' }, 1],
            ['a member that is there', { matchesJsonPath: '$.name' }, 2],
            ['a filter on an array member', { matchesJsonPath: '$.things[?(@.name == \'RequiredThing\')]' }, 1],
            ['a recursive descent with contains', { matchesJsonPath: { expression: '$..todoItem', contains: 'wash' } }, 1],
            ['an expression with equalTo', { matchesJsonPath: { expression: '$.name', equalTo: 'Scone' } }, 1],
            ['an expression with equalTo caseInsensitive', { matchesJsonPath: { expression: '$.name', equalTo: 'scone', caseInsensitive: true } }, 1],
            ['an expression with equalTo on a number', { matchesJsonPath: { expression: '$.price', equalTo: '3' } }, 1],
            ['an expression with matches', { matchesJsonPath: { expression: '$.name', matches: 'F.*k' } }, 1],
            ['an expression with contains on an object, as its JSON text', { matchesJsonPath: { expression: '$.notes', contains: 'milk' } }, 1],
            ['an expression with absent', { matchesJsonPath: { expression: '$.name', absent: true } }, 4],
            ['an expression with equalToJson', { matchesJsonPath: { expression: '$.things', equalToJson: [{ name: 'RequiredThing' }, { name: 'Wiremock' }] } }, 1],
            ['an expression with equalToJson, ignoring order and extra items', { matchesJsonPath: { expression: '$.things', equalToJson: '[{"name": "Wiremock"}]', ignoreArrayOrder: true, ignoreExtraElements: true } }, 1],
            ['an expression that finds nothing', { matchesJsonPath: { expression: '$.colour', equalTo: 'red' } }, 0],
            ['a member that is null, an empty array or an empty object, which WireMock counts as not found', { matchesJsonPath: '$.tags' }, 0],
            ['a member that is an empty object', { matchesJsonPath: '$.extra' }, 0],
            ['a member that is null, as text', { matchesJsonPath: { expression: '$.name', equalTo: 'null' } }, 1]
        ];

        const count = async (pattern: object) => {

            const res = await admin('POST', `/_instances/${id}/requests/count`, { bodyPatterns: [pattern] });
            expect(res.statusCode, res.payload).to.equal(200);
            return body<{ count: number }>(res).count;
        };

        for (const [name, pattern, expected] of cases) {
            it(`counts by ${name}`, async () => {

                expect(await count(pattern)).to.equal(expected);
            });
        }
    });

    describe('hardening: what one request may cost', () => {

        // A request and /health after it, in milliseconds: the work a request leaves behind is counted with it.
        const elapsed = async (send: () => Promise<unknown>) => {

            const start = performance.now();
            await send();
            expect((await server.inject('/health')).statusCode).to.equal(200);
            return performance.now() - start;
        };

        it('names the near miss of a very long unmatched path at once', async () => {

            const { id, base_path: base } = await create();
            const ms = await elapsed(() => server.inject(`${base}/v1/commerce/products/${'p'.repeat(8192)}/x`));
            expect(ms).to.be.below(1000);
            expect((await entries(id)).data[0]!.near_miss).to.equal({ method: 'GET', path: '/v1/commerce/products/{product_id}' });
        });

        it('matches a regular expression in time linear in the text', async () => {

            const { id, base_path: base } = await create();
            await server.inject({ url: `${base}/v1/weather/status`, headers: { 'x-t': `${'a'.repeat(30)}!` } });
            const ms = await elapsed(async () => {

                const res = await admin('POST', `/_instances/${id}/requests/count`, { headers: { 'x-t': { matches: '(a+)+' } } });
                expect(body(res)).to.equal({ count: 0 });
            });
            expect(ms).to.be.below(1000);
        });

        it('scrubs three 64 KB bodies of "eyJeyJ…" at once', async () => {

            const { id, base_path: base } = await create();
            const ms = await elapsed(async () => {

                for (let i = 0; i < 3; ++i) {
                    await server.inject({ method: 'POST', url: `${base}/v1/commerce/products`, headers: bearer(server, 'ann'), payload: { name: 'eyJ'.repeat(21_800) } });
                }

                expect((await entries(id)).total).to.equal(3);
            });
            expect(ms).to.be.below(1000);
        });

        it('hides credentials in bodies and headers by name and by shape', async () => {

            const { id, base_path: base } = await create();
            await server.inject({
                method: 'POST', url: `${base}/v1/logistics/bookings?session=s1&signature=g1&credential=c1&passwd=p1`,
                headers: { ...bearer(server, 'ann'), 'x-auth': 'a1', 'x-pass': 'p2', 'x-private-key': 'k1', 'idempotency-key': 'order-1' },
                payload: { password: 'p3', api_key: 'k2', refresh_token: 'r1', meta: { header: 'Basic eDp5' }, note: 'Basic bread loaf', session: { value: 'hunter2' }, client_secret: ['k-123'] }
            });

            const [entry] = (await entries(id)).data;
            expect(entry!.headers).to.include({ 'x-auth': '[hidden]', 'x-pass': '[hidden]', 'x-private-key': '[hidden]', 'idempotency-key': 'order-1' });
            expect(entry!.query).to.equal({ session: '[hidden]', signature: '[hidden]', credential: '[hidden]', passwd: '[hidden]' });
            expect(entry!.body).to.equal({ password: '[hidden]', api_key: '[hidden]', refresh_token: '[hidden]', meta: { header: '[hidden]' }, note: 'Basic bread loaf', session: '[hidden]', client_secret: '[hidden]' });
        });

        it('counts a body as the text it keeps: a journal full of "[{},{},…]" holds about its budget', { timeout: 20_000 }, async () => {

            const small = await testServer({ journalBudgetMib: 2 });
            try {
                const headers = bearer(small, 'ann');
                const payload = `[${'{},'.repeat(5_400)}{}]`;
                const start = liveHeapBytes();
                for (let i = 0; i < 300; ++i) {
                    const res = await small.inject({ method: 'POST', url: '/v1/commerce/products', headers: { ...headers, 'content-type': 'application/json' }, payload });
                    expect(res.statusCode).to.equal(400);
                }

                const grown = liveHeapBytes() - start;
                // 2 MiB of text kept, and room for the entries' other parts; kept parsed, the same bodies take 40 MiB.
                expect(grown).to.be.below(6 * 2 ** 20);
                const list = body<List<Entry>>(await small.inject({ url: '/_requests?limit=1', headers: adminBearer(small) }));
                expect(list.data[0]!.body).to.equal(JSON.parse(payload));
                expect(liveHeapBytes() - start).to.be.below(6 * 2 ** 20);
            }
            finally {
                await small.stop();
            }
        });

        it('counts bodies equal to an array in any order in one pass, and refuses a pairing past its budget of steps', { timeout: 20_000 }, async () => {

            const { id, base_path: base } = await create();
            const numbers = Array.from({ length: 3_000 }, (_, i) => i);
            const headers = { ...bearer(server, 'ann'), 'content-type': 'application/json' };
            for (let i = 0; i < 50; ++i) {
                const res = await server.inject({ method: 'POST', url: `${base}/v1/commerce/products`, headers, payload: JSON.stringify(numbers) });
                expect(res.statusCode).to.equal(400);
            }

            const reversed = [...numbers].reverse();
            const count = await admin('POST', `/_instances/${id}/requests/count`, { bodyPatterns: [{ equalToJson: reversed, ignoreArrayOrder: true }] });
            expect(count.statusCode).to.equal(200);
            expect(body(count)).to.equal({ count: 50 });

            const message = `takes more than ${maxMatchingSteps} comparison steps to pair array items under ignoreExtraElements with ignoreArrayOrder, the most one request may spend: compare fewer or smaller items, or drop one of the two`;
            const refused = await admin('POST', `/_instances/${id}/requests/count`, { bodyPatterns: [{ contains: '7' }, { equalToJson: reversed, ignoreArrayOrder: true, ignoreExtraElements: true }] });
            expect(refused.statusCode).to.equal(400);
            expect(body(refused)).to.equal({
                statusCode: 400, error: 'Bad Request', code: 'validation_failed', message: `Invalid payload: bodyPatterns.1 ${message}`,
                details: [{ field: 'bodyPatterns.1', message: `bodyPatterns.1 ${message}` }]
            });

            const path = await admin('POST', `/_instances/${id}/requests/find`, { bodyPatterns: [{ matchesJsonPath: { expression: '$', equalToJson: reversed, ignoreArrayOrder: true, ignoreExtraElements: true } }] });
            expect(path.statusCode).to.equal(400);
            expect(body<{ details: unknown }>(path).details).to.equal([{ field: 'bodyPatterns.0.matchesJsonPath', message: `bodyPatterns.0.matchesJsonPath ${message}` }]);

            const small = await admin('POST', `/_instances/${id}/requests/count`, { bodyPatterns: [{ equalToJson: [numbers[5], numbers[1]], ignoreArrayOrder: true, ignoreExtraElements: true }] });
            expect(body(small)).to.equal({ count: 50 });
        });

        it('keeps jsonpath-plus\'s cache of parsed expressions bounded, however many a client sends', async () => {

            const { id } = await create();
            for (let i = 0; i <= maxCachedJsonPaths; ++i) {
                JSONPath.toPathArray(`$.field${i}`);
            }

            expect(Object.keys(JSONPath.cache as object).length).to.be.above(maxCachedJsonPaths);
            const res = await admin('POST', `/_instances/${id}/requests/count`, { bodyPatterns: [{ matchesJsonPath: '$.fresh' }] });
            expect(body(res)).to.equal({ count: 0 });
            expect(Object.keys(JSONPath.cache as object)).to.equal(['$.fresh']);
        });

        it('keeps /health answering within 100 ms after every attack at once', async () => {

            const { id, base_path: base } = await create();
            const user = bearer(server, 'ann');
            await Promise.all([
                server.inject(`${base}/v1/commerce/products/${'p'.repeat(8192)}/x`),
                server.inject({ url: `${base}/v1/weather/status`, headers: { 'x-t': `${'a'.repeat(30)}!` } }),
                ...[0, 1, 2].map(() => server.inject({ method: 'POST', url: `${base}/v1/commerce/products`, headers: user, payload: { name: 'eyJ'.repeat(21_800) } })),
                server.inject({ method: 'POST', url: `${base}/v1/commerce/products`, headers: user, payload: JSON.parse(`[${'{},'.repeat(5_400)}{}]`) as object })
            ]);
            const patterns = [{ headers: { 'x-t': { matches: '(a+)+' } } }, { bodyPatterns: [{ matchesJsonPath: '$..*..*..*..*' }] }, { bodyPatterns: [{ matchesJsonPath: '$..*' }] }];
            const answers = await Promise.all(patterns.map((pattern) => admin('POST', `/_instances/${id}/requests/count`, pattern)));
            expect(answers.map((res) => res.statusCode)).to.equal([200, 400, 200]);
            expect((await entries(id)).total).to.equal(6);

            const start = performance.now();
            const health = await server.inject('/health');
            const ms = performance.now() - start;
            expect(health.statusCode).to.equal(200);
            expect(ms).to.be.below(100);
        });
    });

    describe('memory', () => {

        it('keeps at most JOURNAL_SIZE entries per data set, the oldest dropped, and cuts long bodies', async () => {

            const small = await testServer({ journalSize: 3, journalBodyBytes: 40 });
            try {
                const headers = bearer(small, 'ann');
                for (let i = 0; i < 5; ++i) {
                    await small.inject(`/v1/weather/status?n=${i}`);
                }

                await small.inject({ method: 'POST', url: '/v1/commerce/products', headers, payload: product('A name long enough to be cut') });
                const list = body<List<Entry>>(await small.inject({ url: '/_requests', headers: adminBearer(small) }));
                expect(list.data.map((entry) => (entry.query.n as string | undefined) ?? null)).to.equal(['3', '4', null]);
                expect(list.data[2]!.body).to.equal(JSON.stringify(product('A name long enough to be cut')).slice(0, 40));
                expect(list.data[2]!.body_truncated).to.be.true();

                const count = async (pattern: object) => body<{ count: number }>(await small.inject({ method: 'POST', url: '/_requests/count', headers: adminBearer(small), payload: pattern })).count;
                expect(await count({ bodyPatterns: [{ contains: 'A name' }] })).to.equal(1);
                expect(await count({ bodyPatterns: [{ matchesJsonPath: '$.name' }] })).to.equal(0);
                expect(await count({ bodyPatterns: [{ equalToJson: {}, ignoreExtraElements: true }] })).to.equal(0);
            }
            finally {
                await small.stop();
            }
        });

        it('hides a secret across the point where a long body is cut, leaving no part of it', async () => {

            const small = await testServer({ journalBodyBytes: 40, pay: { publishableKey: 'pk_visible_never', secretKey: 'sk_visible_never' } });
            try {
                await small.inject({ method: 'POST', url: '/v1/commerce/products', headers: bearer(small, 'ann'), payload: { name: `${'x'.repeat(25)}sk_visible_never` } });
                const [entry] = body<List<Entry>>(await small.inject({ url: '/_requests', headers: adminBearer(small) })).data;
                expect(entry!.body).to.equal(`{"name":"${'x'.repeat(25)}[hidden]"}`.slice(0, 40));
                expect(entry!.body_truncated).to.be.true();
            }
            finally {
                await small.stop();
            }
        });

        it('counts only the cut of a long body against the journals\' memory', async () => {

            // Twenty bodies of 60 KiB each are 1.2 MiB as sent, but 40 bytes each as kept: a 1 MiB budget keeps all.
            const small = await testServer({ journalBodyBytes: 40, journalBudgetMib: 1 });
            try {
                const headers = bearer(small, 'ann');
                const long = 'x'.repeat(60 * 1024);
                const sent = Array.from({ length: 20 }, (_, i) => product(`${i}${long}`));
                for (const payload of sent) {
                    const res = await small.inject({ method: 'POST', url: '/v1/commerce/products', headers, payload });
                    expect(res.statusCode).to.equal(400);
                }

                const list = body<List<Entry>>(await small.inject({ url: '/_requests', headers: adminBearer(small) }));
                expect(list.data.map((entry) => [entry.body, entry.body_truncated])).to.equal(sent.map((payload) => [JSON.stringify(payload).slice(0, 40), true]));
            }
            finally {
                await small.stop();
            }
        });

        it('counts a body past U+00FF at two bytes a character, as JavaScript stores it', async () => {

            // A 1 MiB budget and bodies cut at 16,384 characters: at two bytes a character (and some 600 bytes of
            // headers and URL each) the last 31 fit beside a short one, where counting a byte a character kept all 41.
            const small = await testServer({ journalBudgetMib: 1 });
            try {
                const headers = bearer(small, 'ann');
                for (let i = 0; i < 40; ++i) {
                    await small.inject({ method: 'POST', url: '/v1/commerce/products', headers, payload: { name: `${i}${'ж'.repeat(20_000)}` } });
                }

                await small.inject({ method: 'POST', url: '/v1/commerce/products', headers, payload: { name: 'жито' } });
                const list = body<List<Entry>>(await small.inject({ url: '/_requests?limit=100', headers: adminBearer(small) }));
                expect(list.total).to.equal(32);
                expect(list.data.at(-2)!.body).to.equal(JSON.stringify({ name: `39${'ж'.repeat(20_000)}` }).slice(0, 16_384));
                expect(list.data.at(-1)!.body).to.equal({ name: 'жито' });
            }
            finally {
                await small.stop();
            }
        });

        it('records nothing with JOURNAL_SIZE=0', async () => {

            const off = await testServer({ journalSize: 0 });
            try {
                await off.inject('/v1/weather/status');
                expect(body<List<Entry>>(await off.inject({ url: '/_requests', headers: adminBearer(off) })).total).to.equal(0);
                expect((await off.inject({ method: 'DELETE', url: '/_requests', headers: adminBearer(off) })).statusCode).to.equal(204);
                expect(body(await off.inject({ method: 'POST', url: '/_requests/count', headers: adminBearer(off), payload: {} }))).to.equal({ count: 0 });
            }
            finally {
                await off.stop();
            }
        });

        it('shares one budget: the fullest journal gives up its oldest entries, a deleted instance gives all back', () => {

            const budget = new JournalBudget(1000);
            const first = new Journal(100, budget);
            const second = new Journal(100, budget);
            let arrival = 0;
            const record = (bytes: number) => ({ entry: {}, arrival: ++arrival, url: '', bodyText: null, bytes }) as unknown as Recorded;

            first.add(record(400));
            first.add(record(400));
            second.add(record(150));
            expect(budget.used).to.equal(950);
            second.add(record(150));
            expect([first.list().length, second.list().length, budget.used]).to.equal([1, 2, 700]);

            budget.leave(first);
            expect(budget.used).to.equal(300);
            first.add(record(10));
            expect([first.list().length, budget.used]).to.equal([0, 300]);

            const third = new Journal(100, budget);
            third.add(record(600));
            third.add(record(200));
            expect([second.list().length, third.list().length, budget.used]).to.equal([2, 1, 500]);

            second.add(record(2000));
            expect([second.list().length, third.list().length, budget.used]).to.equal([1, 0, 2000]);
        });

        it('gives an instance\'s journal back when the instance is deleted', async () => {

            const { id, base_path: base } = await create();
            await server.inject(`${base}/v1/weather/status`);
            expect((await admin('DELETE', `/_instances/${id}`)).statusCode).to.equal(204);
            expect((await admin('GET', `/_instances/${id}/requests`)).statusCode).to.equal(404);
            const other = await create();
            expect((await admin('DELETE', `/_instances/${other.id}`)).statusCode).to.equal(204);
        });
    });

    it('compares JSON and paths as the patterns need', () => {

        const strict = { extra: false, anyOrder: false };
        expect(jsonEqual({ a: [1] }, { a: [1] }, strict)).to.be.true();
        expect(jsonEqual({ a: 1 }, [1], strict)).to.be.false();
        expect(jsonEqual({ a: 1 }, null, strict)).to.be.false();
        expect(jsonEqual({ a: 1 }, 5, strict)).to.be.false();
        expect(jsonEqual([1], { 0: 1 }, strict)).to.be.false();
        expect(jsonEqual([1, 1], [1, 2], { extra: false, anyOrder: true })).to.be.false();
    });

    it('compares arrays in any order as multisets, nested arrays and objects included', () => {

        const anyOrder = { extra: false, anyOrder: true };
        expect(jsonEqual([1, 1, 2], [2, 1, 1], anyOrder)).to.be.true();
        expect(jsonEqual([1, 1, 2], [1, 2, 2], anyOrder)).to.be.false();
        expect(jsonEqual([[1, 2], { b: [3, 4], a: 1 }, null, 'x'], ['x', null, { a: 1, b: [4, 3] }, [2, 1]], anyOrder)).to.be.true();
        expect(jsonEqual([{ a: 1 }], [{ a: 1, b: 2 }], anyOrder)).to.be.false();
        expect(jsonEqual([1, 2], [1, 2, 3], anyOrder)).to.be.false();
        expect(jsonEqual(['1'], [1], anyOrder)).to.be.false();
    });

    it('pairs array items with extra items allowed by augmenting paths, not greedily', () => {

        const both = { extra: true, anyOrder: true };
        expect(jsonEqual([{ a: 1 }, { a: 1, b: 2 }], [{ a: 1, b: 2 }, { a: 1 }], both)).to.be.true();
        expect(jsonEqual([{ a: 1 }, { b: 2 }, { a: 1, b: 2 }], [{ a: 1, b: 2 }, { a: 1, b: 2, c: 3 }, { b: 2 }, { d: 4 }], both)).to.be.true();
        expect(jsonEqual([{ a: 1 }, { a: 1 }], [{ a: 1, b: 2 }, { b: 2 }], both)).to.be.false();
        expect(jsonEqual([{ a: 1 }, { a: 1 }, { a: 1 }], [{ a: 1 }, { a: 1 }, { b: 1 }, { b: 1 }], both)).to.be.false();
        expect(jsonEqual([[2, 1]], [[0, 1, 2, 3]], both)).to.be.true();
        expect(jsonEqual([3], [], both)).to.be.false();
    });

    it('stops pairing array items once the budget of comparison steps is spent', () => {

        const items = Array.from({ length: 1_500 }, (_, i) => i);
        const budget = { left: maxMatchingSteps, pairing: 0 };
        expect(jsonEqual([...items].reverse(), items, { extra: true, anyOrder: true }, budget)).to.be.false();
        expect(budget.left).to.equal(-1);
        expect(budget.pairing).to.equal(0);
        expect(jsonEqual([...items].reverse(), items, { extra: false, anyOrder: true }, budget)).to.be.true();
        // Spent inside a comparison: it answers false, and the search's next step stops the pairing.
        const odd = { left: 1_001, pairing: 0 };
        expect(jsonEqual([...items].reverse(), items, { extra: true, anyOrder: true }, odd)).to.be.false();
        expect(odd.left).to.equal(-2);
        expect(editDistance('kitten', 'sitting')).to.equal(3);
    });
});
