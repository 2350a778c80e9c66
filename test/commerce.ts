import Fs from 'node:fs';

import Code from '@hapi/code';
import type { Server, ServerInjectOptions, ServerInjectResponse } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { createServer } from '../lib';
import { isCurrencyCode } from '../lib/fields';
import { fitsCurrency } from '../lib/namespaces/commerce/money';
import type { Business, Inquiry, Offer, Product, ScamReport } from '../lib/namespaces/commerce/store';
import { createTestKit, type TestInstance, type TestInstanceOptions, type TestKit } from '../lib/testing';
import { expectError } from './helpers/errors';
import { bearer, body, type List, tempDir } from './helpers/server';


export const lab = Lab.script();
const { describe, it, before, after, beforeEach, afterEach } = lab;
const { expect } = Code;


const base = '/v1/commerce';

// Ids of the shipped demo data (data/demo/commerce.json).
const demo = {
    bakery: 'd851fadb-03ca-5a24-ba16-c15cce19933b',
    teaHouse: '274d578f-fbb6-5d0a-a6cc-0f6f60e2c886',
    gadgetOutlet: '306ef0a0-3f74-5922-82c9-1208c66622ce',
    sourdough: 'e7f64181-1fb9-5a31-aa9d-dc7469ce77f5',
    flagshipPhone: '',
    croissants: 'fc1a2b04-f2a1-5d0f-9369-48da453b7bf3'
};

const isoTimestamp = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;


function postTo(server: Server, url: string, payload: unknown, subject = 'alice'): Promise<ServerInjectResponse> {

    return server.inject({ method: 'POST', url: `${base}${url}`, headers: bearer(server, subject), payload: payload as object });
}


function getFrom(server: Server, url: string, subject?: string): Promise<ServerInjectResponse> {

    return server.inject({ method: 'GET', url: `${base}${url}`, headers: subject ? bearer(server, subject) : {} });
}


function expectOldestFirst(records: { created_at: string; id: string }[]): void {

    const sorted = [...records].sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
    expect(records.map((record) => record.id)).to.equal(sorted.map((record) => record.id));
}


function product(overrides: Record<string, unknown> = {}): Record<string, unknown> {

    return { name: 'Harbour fudge', description: 'Clotted-cream fudge, 200 g.', price: 5.5, currency: 'USD', business_id: demo.bakery, ...overrides };
}


describe('commerce', () => {

    // One server; every test gets a freshly seeded instance of its own, so that counts are exact.
    let kit: TestKit;
    let t: TestInstance;

    const auth = (subject: string, ttlSec?: number) => ({ authorization: `Bearer ${t.token(subject, { ttlSec })}` });
    const get = (url: string, subject?: string) => t.inject({ method: 'GET', url: `${base}${url}`, headers: subject ? auth(subject) : {} });
    const post = (url: string, payload: unknown, subject = 'alice') => t.inject({ method: 'POST', url: `${base}${url}`, headers: auth(subject), payload: payload as object });
    const inject = (options: ServerInjectOptions) => t.inject(options);
    // A Location header already carries the instance's path.
    const follow = (location: unknown, subject?: string) => kit.server.inject({ url: location as string, headers: subject ? auth(subject) : {} });

    // Swaps the test's instance for one made with other options.
    const replaceInstance = async (options: TestInstanceOptions) => {

        t.close();
        t = await kit.instance(options);
    };

    const all = async <T>(url: string): Promise<T[]> => {

        const records: T[] = [];
        for (let i = 0; ; i += 100) {
            const separator = url.includes('?') ? '&' : '?';
            const page = body<List<T>>(await get(`${url}${separator}limit=100&offset=${i}`));
            records.push(...page.data);
            if (records.length >= page.total) {
                return records;
            }
        }
    };

    before(async () => {

        kit = await createTestKit({ validateResponses: true });
        t = await kit.instance();
        const phone = body<List<Product>>(await get(`/products?business_id=${demo.gadgetOutlet}`)).data.find((item) => item.name.startsWith('Flagship phone'));
        demo.flagshipPhone = phone!.id;
        t.close();
    });

    after(async () => {

        await kit.close();
    });

    beforeEach(async () => {

        t = await kit.instance();
    });

    afterEach(() => {

        t.close();
    });

    describe('demo data', () => {

        it('loads 10 Harbourside businesses, 35 products and 17 offers on first start', async () => {

            const businesses = await all<Business>('/businesses');
            expect(businesses.length).to.equal(10);
            expect(new Set(businesses.map((business) => business.city))).to.equal(new Set(['Harbourside']));

            const products = await all<Product>('/products');
            expect(products.length).to.equal(35);
            expect(products.filter((item) => item.created_by === 'demo').length).to.equal(35);
            const currencies = new Set(products.map((item) => item.currency));
            expect([...currencies]).to.include(['USD', 'EUR', 'JPY', 'KWD']);
            const businessIds = new Set(businesses.map((business) => business.id));
            expect(products.every((item) => businessIds.has(item.business_id))).to.be.true();

            const offers = await all<Offer>('/offers');
            expect(offers.length).to.equal(17);
            const productIds = new Set(products.map((item) => item.id));
            expect(offers.every((offer) => productIds.has(offer.product_id) && offer.valid_until > offer.valid_from)).to.be.true();
        });

        it('prices every demo product and offer within its currency\'s decimals', async () => {

            const priced = [...await all<Product>('/products'), ...await all<Offer>('/offers')];
            for (const item of priced) {
                expect(isCurrencyCode(item.currency), item.currency).to.be.true();
                expect(fitsCurrency(item.price, item.currency), `${item.price} ${item.currency}`).to.be.true();
            }

            const kwd = priced.filter((item) => item.currency === 'KWD');
            expect(kwd.some((item) => !fitsCurrency(item.price, 'USD'))).to.be.true();
        });

        it('ships a business with scam reports as a visible trust signal', async () => {

            const outlet = body<Business>(await get(`/businesses/${demo.gadgetOutlet}`));
            expect(outlet.scam_report_count).to.equal(3);
            const phone = body<Product>(await get(`/products/${demo.flagshipPhone}`));
            expect(phone.scam_report_count).to.equal(2);
        });

        it('starts empty when seeding is turned off', async () => {

            await replaceInstance({ seed: 'none' });
            for (const list of ['/products', '/businesses', '/offers']) {
                const res = await get(list);
                expect(res.statusCode).to.equal(200);
                expect(body(res)).to.equal({ data: [], count: 0, total: 0 });
                expect(res.headers['x-total-count']).to.equal('0');
            }
        });

        it('keeps created products across restarts and loads the demo data only once', async () => {

            const dataDir = tempDir();
            const options = { dataDir, logLevel: 'silent' as const, jwtSecret: 'a-test-secret-that-is-at-least-32-bytes' };
            const first = await createServer(options);
            expect(body<List<Product>>(await getFrom(first, '/products')).total).to.equal(35);
            const created = body<Product>(await postTo(first, '/products', product({ name: 'Survives a restart' })));
            await first.stop();

            const second = await createServer(options);
            try {
                const res = await getFrom(second, `/products/${created.id}`);
                expect(res.statusCode).to.equal(200);
                expect(body<Product>(res)).to.equal(created);
                expect(body<List<Product>>(await getFrom(second, '/products')).total).to.equal(36);
            }
            finally {
                await second.stop();
                Fs.rmSync(dataDir, { recursive: true, force: true });
            }
        });
    });

    describe('GET /products', () => {

        it('returns the list envelope with X-Total-Count, 20 records by default, oldest first', async () => {

            const res = await get('/products');
            expect(res.statusCode).to.equal(200);
            const list = body<List<Product>>(res);
            expect(list.count).to.equal(20);
            expect(list.data.length).to.equal(20);
            expect(list.total).to.equal(35);
            expect(res.headers['x-total-count']).to.equal(String(list.total));
            expectOldestFirst(list.data);
            expect(list.data[0]).to.equal({
                id: demo.sourdough,
                name: 'Harbour sourdough loaf',
                description: '800 g loaf, 36-hour ferment, baked daily.',
                price: 6.5,
                currency: 'USD',
                business_id: demo.bakery,
                created_by: 'demo',
                created_at: '2025-04-07T10:00:00.000Z',
                scam_report_count: 0
            });
        });

        it('pages with limit and offset without repeating or skipping', async () => {

            const everything = await all<Product>('/products');
            const pages: Product[] = [];
            for (let i = 0; i < everything.length; i += 7) {
                const page = body<List<Product>>(await get(`/products?limit=7&offset=${i}`));
                expect(page.count).to.equal(Math.min(7, everything.length - i));
                pages.push(...page.data);
            }

            expect(pages).to.equal(everything);
            expectOldestFirst(everything);
        });

        it('answers an empty page past the end with the total', async () => {

            const res = await get('/products?offset=100000');
            expect(res.statusCode).to.equal(200);
            const list = body<List<Product>>(res);
            expect(list.data).to.equal([]);
            expect(list.count).to.equal(0);
            expect(list.total).to.equal(35);
        });

        it('filters by business_id with the filtered total', async () => {

            const res = await get(`/products?business_id=${demo.teaHouse}&limit=2`);
            expect(res.statusCode).to.equal(200);
            const list = body<List<Product>>(res);
            expect(list.count).to.equal(2);
            expect(list.total).to.equal(4);
            expect(res.headers['x-total-count']).to.equal('4');
            const teaHouse = await all<Product>(`/products?business_id=${demo.teaHouse}`);
            expect(teaHouse.map((item) => item.business_id)).to.equal(Array(4).fill(demo.teaHouse));
            expect(teaHouse.map((item) => item.currency)).to.equal(['JPY', 'JPY', 'JPY', 'JPY']);
            expect(teaHouse.slice(0, 2)).to.equal(list.data);
            expectOldestFirst(teaHouse);
        });

        it('answers an empty list for a business_id that matches nothing', async () => {

            const res = await get('/products?business_id=no-such-business');
            expect(res.statusCode).to.equal(200);
            expect(body(res)).to.equal({ data: [], count: 0, total: 0 });
        });

        it('serves the same data with a valid token', async () => {

            const anonymous = await get('/products?limit=3');
            const signedIn = await get('/products?limit=3', 'alice');
            expect(signedIn.statusCode).to.equal(200);
            expect(signedIn.payload).to.equal(anonymous.payload);
        });
    });

    describe('GET /products/{product_id}', () => {

        it('returns one product', async () => {

            const res = await get(`/products/${demo.sourdough}`);
            expect(res.statusCode).to.equal(200);
            expect(body<Product>(res)).to.include({ id: demo.sourdough, name: 'Harbour sourdough loaf', price: 6.5, currency: 'USD' });
        });

        it('answers 404 for an unknown id', async () => {

            const error = expectError(await get('/products/no-such-product'), 404, 'product_not_found');
            expect(error.message).to.equal('There is no product with this id');
        });
    });

    describe('POST /products', () => {

        it('creates a product owned by the caller: 201, Location and the record', async () => {

            expect(body<List<Product>>(await get(`/products?business_id=${demo.bakery}`)).total).to.equal(5);
            const res = await post('/products', product(), 'baker-maria');
            expect(res.statusCode).to.equal(201);
            const created = body<Product>(res);
            expect(created.id).to.match(uuid);
            expect(created.created_at).to.match(isoTimestamp);
            expect(created).to.equal({
                id: created.id,
                name: 'Harbour fudge',
                description: 'Clotted-cream fudge, 200 g.',
                price: 5.5,
                currency: 'USD',
                business_id: demo.bakery,
                created_by: 'baker-maria',
                created_at: created.created_at,
                scam_report_count: 0
            });
            expect(res.headers.location).to.equal(`${t.basePath}${base}/products/${created.id}`);

            const fetched = await follow(res.headers.location);
            expect(body<Product>(fetched)).to.equal(created);

            const listed = await all<Product>(`/products?business_id=${demo.bakery}`);
            expect(listed.length).to.equal(6);
            expect(listed[listed.length - 1]).to.equal(created);
            const everything = await all<Product>('/products');
            expect(everything.length).to.equal(36);
            expect(everything[everything.length - 1]).to.equal(created);
        });

        it('defaults the description to an empty string', async () => {

            const res = await post('/products', { name: 'Plain bun', price: 1, currency: 'USD', business_id: demo.bakery });
            expect(res.statusCode).to.equal(201);
            expect(body<Product>(res).description).to.equal('');
        });

        const accepted: [string, unknown, number][] = [
            ['JPY', 1500, 1500],
            ['USD', 19.99, 19.99],
            ['USD', 0.3, 0.3],
            ['USD', 0, 0],
            ['EUR', 1250, 1250],
            ['KWD', 2.125, 2.125],
            ['KWD', 480, 480],
            ['BHD', 0.001, 0.001],
            ['USD', 1e12, 1e12],
            ['KWD', 999999999999.999, 999999999999.999]
        ];

        for (const [currency, price, expected] of accepted) {
            it(`accepts ${price} ${currency} and returns it unchanged`, async () => {

                const res = await post('/products', product({ price, currency }));
                expect(res.statusCode, res.payload).to.equal(201);
                expect(body<Product>(res)).to.include({ price: expected, currency });
                expect(body<Product>(await get(`/products/${body<Product>(res).id}`)).price).to.equal(expected);
            });
        }

        it('stores a negative zero price as 0', async () => {

            const res = await inject({
                method: 'POST',
                url: `${base}/products`,
                headers: { ...auth('alice'), 'content-type': 'application/json' },
                payload: `{"name":"Free sample","price":-0,"currency":"USD","business_id":"${demo.bakery}"}`
            });
            expect(res.statusCode).to.equal(201);
            expect(Object.is(body<Product>(res).price, 0)).to.be.true();
        });

        const rejectedPrices: [string, Record<string, unknown>, string, string][] = [
            ['a yen amount with decimals', { price: 1.5, currency: 'JPY' }, 'price', 'price has more decimals than JPY allows (at most 0)'],
            ['a dollar amount with three decimals', { price: 19.999, currency: 'USD' }, 'price', 'price has more decimals than USD allows (at most 2)'],
            ['0.1 + 0.2 dollars', { price: 0.1 + 0.2, currency: 'USD' }, 'price', 'price has more decimals than USD allows (at most 2)'],
            ['a dinar amount with four decimals', { price: 1.0005, currency: 'KWD' }, 'price', 'price has more decimals than KWD allows (at most 3)'],
            ['a negative price', { price: -1 }, 'price', 'price must be greater than or equal to 0'],
            ['a price above the maximum', { price: 1e12 + 1 }, 'price', 'price must be less than or equal to 1000000000000'],
            ['a price sent as a string', { price: '12' }, 'price', 'price must be a number'],
            ['a lower-case currency', { currency: 'usd' }, 'currency', 'currency must be an ISO 4217 currency code in upper case, such as USD, EUR, JPY or KWD'],
            ['an unknown currency', { currency: 'ABC' }, 'currency', 'currency must be an ISO 4217 currency code in upper case, such as USD, EUR, JPY or KWD'],
            ['a currency code of two letters', { currency: 'US' }, 'currency', 'currency must be an ISO 4217 currency code in upper case, such as USD, EUR, JPY or KWD'],
            ['a currency sent as a number', { currency: 840 }, 'currency', 'currency must be a string'],
            ['a bad currency with a price that fits no currency', { price: 1.23456, currency: 'dollars' }, 'currency', 'currency must be an ISO 4217 currency code in upper case, such as USD, EUR, JPY or KWD'],
            ['a missing currency', { currency: undefined, price: 1.23456 }, 'currency', 'currency is required'],
            ['a missing price', { price: undefined }, 'price', 'price is required']
        ];

        for (const [title, overrides, field, message] of rejectedPrices) {
            it(`answers 400 naming ${field} for ${title}`, async () => {

                const error = expectError(await post('/products', product(overrides)), 400, 'validation_failed', field);
                // A number is no code of the list the document gives, nor a string: both are said.
                const listed = typeof overrides.currency === 'number' ? [{ field, message: 'currency must be an ISO 4217 currency code in upper case, such as USD, EUR, JPY or KWD' }] : [];
                expect(error.details).to.equal([...listed, { field, message }]);
            });
        }

        it('answers 400 for an infinite price', async () => {

            const res = await inject({
                method: 'POST',
                url: `${base}/products`,
                headers: auth('alice'),
                payload: `{"name":"Too much","price":1e400,"currency":"USD","business_id":"${demo.bakery}"}`
            });
            const error = expectError(res, 400, 'validation_failed', 'price');
            expect(error.details).to.equal([{ field: 'price', message: 'price cannot be infinity' }]);
        });

        for (const field of ['created_by', 'id', 'created_at', 'scam_report_count']) {
            it(`answers 400 naming ${field} when the body carries it`, async () => {

                const error = expectError(await post('/products', product({ [field]: 'mallory' })), 400, 'validation_failed', field);
                expect(error.details![0]!.message).to.startWith(`${field} is set by the service`);
            });
        }

        it('answers 400 naming an unknown field', async () => {

            expectError(await post('/products', product({ colour: 'blue' })), 400, 'validation_failed', 'colour');
        });

        it('answers 422 naming business_id when the business does not exist', async () => {

            const error = expectError(await post('/products', product({ business_id: 'no-such-business' })), 422, 'business_not_found', 'business_id');
            expect(error.message).to.equal('business_id refers to no existing business');
            expect(body<List<Product>>(await get('/products?business_id=no-such-business')).total).to.equal(0);
        });

        const lengths: [string, string, number][] = [
            ['name', 'a', 200],
            ['description', 'b', 5000]
        ];

        for (const [field, letter, max] of lengths) {
            it(`accepts a ${field} of ${max} characters and refuses ${max + 1}`, async () => {

                const longest = await post('/products', product({ [field]: letter.repeat(max) }));
                expect(longest.statusCode).to.equal(201);
                expect(body<Record<string, string>>(longest)[field]!.length).to.equal(max);

                const error = expectError(await post('/products', product({ [field]: letter.repeat(max + 1) })), 400, 'validation_failed', field);
                expect(error.details).to.equal([{ field, message: `${field} length must be less than or equal to ${max} characters long` }]);
            });
        }

        const badText: [string, string, string][] = [
            ['an empty name', '', 'name is not allowed to be empty'],
            ['a name of white space only', ' \t\n ', 'name must contain at least one character that is not white space'],
            ['a name with a NUL character', 'fudge\u0000', 'name must not contain NUL characters or unpaired surrogates'],
            ['a name with an unpaired surrogate', 'fudge \ud83c', 'name must not contain NUL characters or unpaired surrogates'],
            ['a name that is not a string', 42 as unknown as string, 'name must be a string']
        ];

        for (const [title, name, message] of badText) {
            it(`answers 400 naming name for ${title}`, async () => {

                const error = expectError(await post('/products', product({ name })), 400, 'validation_failed', 'name');
                expect(error.details).to.equal([{ field: 'name', message }]);
            });
        }

        it('answers 400 naming description for an unpaired surrogate', async () => {

            expectError(await post('/products', product({ description: '\udc00 low' })), 400, 'validation_failed', 'description');
        });

        it('answers 400 for a body that is not a JSON object', async () => {

            for (const payload of ['[]', '"fudge"', '42', 'null', '']) {
                const res = await inject({ method: 'POST', url: `${base}/products`, headers: { ...auth('alice'), 'content-type': 'application/json' }, payload });
                const error = expectError(res, 400, 'validation_failed');
                expect(error.message, payload).to.contain('The request body must be a JSON object');
            }
        });

        it('lists every validation problem at once', async () => {

            const error = expectError(await post('/products', { name: '', price: -1, currency: 'usd', created_by: 'x' }), 400, 'validation_failed');
            expect(error.details!.map((detail) => detail.field)).to.equal(['name', 'price', 'currency', 'business_id', 'created_by']);
        });
    });

    describe('text fields', () => {

        const samples = [
            'O\'Brien\'s "finest" fudge',
            'Robert\'); DROP TABLE products;--',
            '1 OR 1=1; SELECT * FROM scam_reports',
            '<script>alert("pwned")</script> & <b>bold</b>',
            '🦀🎉 Crab & chips 🍟 👨‍👩‍👧',
            'Ünïcödé — ☃ — 日本語 — العربية',
            '  leading and trailing spaces  ',
            'line one\nline two\r\n\ttabbed',
            '\\n is not a newline, %s is not a format, ${x} is not a template',
            '\u200b zero width \u00a0 no-break \u202e right-to-left'
        ];

        for (const [index, sample] of samples.entries()) {
            it(`stores text exactly as sent (sample ${index + 1})`, async () => {

                const created = await post('/products', product({ name: sample, description: `${sample} ${sample}` }));
                expect(created.statusCode, created.payload).to.equal(201);
                const fetched = body<Product>(await get(`/products/${body<Product>(created).id}`));
                expect(fetched.name).to.equal(sample);
                expect(fetched.description).to.equal(`${sample} ${sample}`);

                const inquiry = await post('/inquiries', { product_id: fetched.id, message: sample });
                expect(inquiry.statusCode).to.equal(201);
                expect(body<Inquiry>(await follow(inquiry.headers.location, 'alice')).message).to.equal(sample);

                const report = await post('/scam-reports', { target_type: 'product', target_id: fetched.id, reason: sample });
                expect(report.statusCode).to.equal(201);
                expect(body<ScamReport>(report).reason).to.equal(sample);
            });
        }
    });

    describe('GET /businesses', () => {

        it('lists the businesses oldest first with their trust signal', async () => {

            const res = await get('/businesses');
            expect(res.statusCode).to.equal(200);
            const list = body<List<Business>>(res);
            expect(list.total).to.equal(10);
            expect(list.count).to.equal(10);
            expect(res.headers['x-total-count']).to.equal('10');
            expectOldestFirst(list.data);
            expect(list.data[0]).to.equal({
                id: demo.bakery,
                name: 'Harbourside Bakery',
                description: 'Sourdough, pastries and harbour buns, baked before the first ferry leaves.',
                category: 'Bakery',
                city: 'Harbourside',
                phone: '+1 207 555 0101',
                created_at: '2025-03-03T09:00:00.000Z',
                scam_report_count: 0
            });
            expect(list.data.find((business) => business.id === demo.gadgetOutlet)!.scam_report_count).to.equal(3);
        });

        it('pages with limit and offset', async () => {

            const everything = body<List<Business>>(await get('/businesses')).data;
            const page = body<List<Business>>(await get('/businesses?limit=3&offset=4'));
            expect(page).to.equal({ data: everything.slice(4, 7), count: 3, total: 10 });
        });
    });

    describe('GET /businesses/{business_id}', () => {

        it('returns one business', async () => {

            const res = await get(`/businesses/${demo.teaHouse}`, 'alice');
            expect(res.statusCode).to.equal(200);
            expect(body<Business>(res)).to.include({ id: demo.teaHouse, name: 'Umi Tea House', city: 'Harbourside' });
        });

        it('answers 404 for an unknown id', async () => {

            const error = expectError(await get('/businesses/no-such-business'), 404, 'business_not_found');
            expect(error.message).to.equal('There is no business with this id');
        });
    });

    describe('GET /offers', () => {

        it('lists offers oldest first in the list envelope', async () => {

            // Before any demo offer ends, so that every one reads valid.
            await t.clock.set('2026-06-01T00:00:00.000Z');
            const res = await get('/offers');
            expect(res.statusCode).to.equal(200);
            const list = body<List<Offer>>(res);
            expect(list.total).to.equal(17);
            expect(list.count).to.equal(17);
            expect(res.headers['x-total-count']).to.equal('17');
            expectOldestFirst(list.data);
            expect(list.data[0]).to.equal({
                id: list.data[0]!.id,
                product_id: demo.croissants,
                title: 'Sunday dozen',
                price: 24,
                currency: 'USD',
                valid_from: '2026-01-04T06:00:00.000Z',
                valid_until: '2026-12-27T12:00:00.000Z',
                status: 'valid',
                created_at: '2026-01-02T09:30:00.000Z',
                scam_report_count: 0
            });
            const yen = list.data.filter((offer) => offer.currency === 'JPY').map((offer) => offer.price);
            expect(yen).to.equal([3500, 4200]);
            // Read at the instance's clock, not the wall clock: one whose valid_until the wall clock has passed reads valid.
            expect(list.data.map((offer) => offer.status)).to.equal(list.data.map(() => 'valid'));
        });

        it('shows an offer expired from its valid_until on, by the instance\'s clock', async () => {

            const sunday = async () => body<List<Offer>>(await get(`/offers?product_id=${demo.croissants}`)).data[0]!;
            t.clock.set('2026-12-27T11:59:59.999Z');
            expect(await sunday()).to.include({ valid_until: '2026-12-27T12:00:00.000Z', status: 'valid' });

            t.clock.advance(1);
            expect(await sunday()).to.include({ valid_until: '2026-12-27T12:00:00.000Z', status: 'expired' });

            // Long past the end of every demo offer, each one reads expired.
            t.clock.set('2030-01-01T00:00:00.000Z');
            const offers = await all<Offer>('/offers');
            expect(offers.map((offer) => offer.status)).to.equal(offers.map(() => 'expired'));

            // A clock set back reads it valid again: its end was never stored.
            await t.clock.set('2026-12-27T11:59:59.999Z');
            expect(await sunday()).to.include({ valid_until: '2026-12-27T12:00:00.000Z', status: 'valid' });
        });

        it('keeps the status a fixture gives an offer, and reads one without as the clock says', async () => {

            const offer = { product_id: demo.sourdough, title: 'Half price', price: 2, currency: 'USD', valid_from: '2030-01-01T00:00:00Z', valid_until: '2030-02-01T00:00:00Z' };
            await replaceInstance({ clock: '2030-01-15T00:00:00.000Z', fixture: { commerce: { offers: [{ ...offer, id: 'o-open' }, { ...offer, id: 'o-withdrawn', status: 'expired' }] } } });
            const read = async () => body<List<Offer>>(await get(`/offers?product_id=${demo.sourdough}`)).data.map((item) => [item.id, item.status]);
            expect(await read()).to.equal([['o-open', 'valid'], ['o-withdrawn', 'expired']]);

            t.clock.set('2030-02-01T00:00:00.000Z');
            expect(await read()).to.equal([['o-open', 'expired'], ['o-withdrawn', 'expired']]);
        });

        it('filters by product_id and pages with limit and offset', async () => {

            const everything = body<List<Offer>>(await get('/offers?limit=100')).data;
            const ofPhone = everything.filter((offer) => offer.product_id === demo.flagshipPhone);
            expect(ofPhone.length).to.equal(1);

            const res = await get(`/offers?product_id=${demo.flagshipPhone}`);
            expect(res.statusCode).to.equal(200);
            expect(body(res)).to.equal({ data: ofPhone, count: 1, total: 1 });
            expect(res.headers['x-total-count']).to.equal('1');

            const page = body<List<Offer>>(await get('/offers?limit=5&offset=15'));
            expect(page).to.equal({ data: everything.slice(15, 20), count: 2, total: 17 });
            expect(body(await get(`/offers?product_id=${demo.flagshipPhone}&offset=1`))).to.equal({ data: [], count: 0, total: 1 });
        });

        it('answers an empty list for a product_id that matches nothing', async () => {

            expect(body(await get('/offers?product_id=no-such-product'))).to.equal({ data: [], count: 0, total: 0 });
        });
    });

    describe('POST /inquiries', () => {

        it('records an inquiry about a product, owned by the caller', async () => {

            const res = await post('/inquiries', { product_id: demo.sourdough, message: 'Do you bake it on Sundays?' }, 'buyer-jo');
            expect(res.statusCode).to.equal(201);
            const inquiry = body<Inquiry>(res);
            expect(inquiry.id).to.match(uuid);
            expect(inquiry.created_at).to.match(isoTimestamp);
            expect(inquiry).to.equal({
                id: inquiry.id,
                product_id: demo.sourdough,
                business_id: null,
                message: 'Do you bake it on Sundays?',
                owner_id: 'buyer-jo',
                created_at: inquiry.created_at
            });
            expect(res.headers.location).to.equal(`${t.basePath}${base}/inquiries/${inquiry.id}`);

            const own = await get(`/inquiries/${inquiry.id}`, 'buyer-jo');
            expect(own.statusCode).to.equal(200);
            expect(body<Inquiry>(own)).to.equal(inquiry);
        });

        it('records an inquiry about a business', async () => {

            const res = await post('/inquiries', { business_id: demo.teaHouse, message: 'Can you ship a tea set to Osaka?' });
            expect(res.statusCode).to.equal(201);
            expect(body<Inquiry>(res)).to.include({ product_id: null, business_id: demo.teaHouse, owner_id: 'alice' });
        });

        it('hides an inquiry from other callers as if it did not exist', async () => {

            const inquiry = body<Inquiry>(await post('/inquiries', { business_id: demo.bakery, message: 'Gluten-free?' }, 'buyer-jo'));
            expectError(await get(`/inquiries/${inquiry.id}`, 'buyer-kim'), 404, 'inquiry_not_found');
            expectError(await get('/inquiries/no-such-inquiry', 'buyer-jo'), 404, 'inquiry_not_found');
            expectError(await get(`/inquiries/${inquiry.id}`), 401, 'unauthorized');
        });

        const invalid: [string, Record<string, unknown>, string, string][] = [
            ['neither product_id nor business_id', { message: 'Hello' }, 'product_id', 'product_id or business_id is required: name the product or the business the inquiry is about'],
            ['both product_id and business_id', { product_id: demo.sourdough, business_id: demo.bakery, message: 'Hello' }, 'product_id', 'product_id cannot be sent together with business_id: an inquiry is about one product or one business'],
            ['a missing message', { product_id: demo.sourdough }, 'message', 'message is required'],
            ['an empty message', { product_id: demo.sourdough, message: '' }, 'message', 'message is not allowed to be empty'],
            ['a message of white space only', { product_id: demo.sourdough, message: '   ' }, 'message', 'message must contain at least one character that is not white space'],
            ['a message over 2000 characters', { product_id: demo.sourdough, message: 'm'.repeat(2001) }, 'message', 'message length must be less than or equal to 2000 characters long'],
            ['a product_id that is not a string', { product_id: 7, message: 'Hello' }, 'product_id', 'product_id must be a string'],
            ['an owner_id in the body', { product_id: demo.sourdough, message: 'Hello', owner_id: 'mallory' }, 'owner_id', 'owner_id is set by the service (the caller\'s identity) and cannot be sent'],
            ['an id in the body', { product_id: demo.sourdough, message: 'Hello', id: 'mine' }, 'id', 'id is set by the service (generated) and cannot be sent'],
            ['a created_at in the body', { product_id: demo.sourdough, message: 'Hello', created_at: '2020-01-01T00:00:00.000Z' }, 'created_at', 'created_at is set by the service (the time of creation) and cannot be sent']
        ];

        for (const [title, payload, field, message] of invalid) {
            it(`answers 400 naming ${field} for ${title}`, async () => {

                const error = expectError(await post('/inquiries', payload), 400, 'validation_failed', field);
                expect(error.details).to.equal([{ field, message }]);
            });
        }

        it('accepts a message of 2000 characters', async () => {

            const res = await post('/inquiries', { product_id: demo.sourdough, message: 'm'.repeat(2000) });
            expect(res.statusCode).to.equal(201);
        });

        it('answers 422 naming the field when the product or business does not exist', async () => {

            const error = expectError(await post('/inquiries', { product_id: 'gone', message: 'Hello' }), 422, 'product_not_found', 'product_id');
            expect(error.message).to.equal('product_id refers to no existing product');
            expectError(await post('/inquiries', { business_id: 'gone', message: 'Hello' }), 422, 'business_not_found', 'business_id');
        });
    });

    describe('POST /scam-reports', () => {

        let target: Product;

        beforeEach(async () => {

            target = body<Product>(await post('/products', product({ name: 'Too-good-to-be-true watch', price: 20 }), 'seller-x'));
        });

        it('records a report by the caller and counts it on the product', async () => {

            const res = await post('/scam-reports', { target_type: 'product', target_id: target.id, reason: 'Fake brand.' }, 'resident-1');
            expect(res.statusCode).to.equal(201);
            const report = body<ScamReport>(res);
            expect(report.id).to.match(uuid);
            expect(report.created_at).to.match(isoTimestamp);
            expect(report).to.equal({
                id: report.id,
                target_type: 'product',
                target_id: target.id,
                reason: 'Fake brand.',
                reporter_id: 'resident-1',
                created_at: report.created_at
            });
            expect(res.headers.location).to.equal(`${t.basePath}${base}/scam-reports/${report.id}`);
            expect(body<ScamReport>(await get(`/scam-reports/${report.id}`, 'resident-1'))).to.equal(report);
            expectError(await get(`/scam-reports/${report.id}`, 'resident-2'), 404, 'scam_report_not_found');
            expectError(await get('/scam-reports/no-such-report', 'resident-1'), 404, 'scam_report_not_found');

            expect(body<Product>(await get(`/products/${target.id}`)).scam_report_count).to.equal(1);
        });

        it('answers 409 to a second report by the same caller and keeps counting distinct reporters', async () => {

            expect((await post('/scam-reports', { target_type: 'product', target_id: target.id, reason: 'Fake brand.' }, 'resident-1')).statusCode).to.equal(201);
            const repeat = await post('/scam-reports', { target_type: 'product', target_id: target.id, reason: 'Still fake.' }, 'resident-1');
            const error = expectError(repeat, 409, 'duplicate_scam_report');
            expect(error.message).to.equal('You have already reported this product: one report per caller per target');
            expect(body<Product>(await get(`/products/${target.id}`)).scam_report_count).to.equal(1);

            const other = await post('/scam-reports', { target_type: 'product', target_id: target.id, reason: 'Never arrived.' }, 'resident-2');
            expect(other.statusCode).to.equal(201);
            expect(body<Product>(await get(`/products/${target.id}`)).scam_report_count).to.equal(2);
            const listed = body<List<Product>>(await get(`/products?business_id=${demo.bakery}&limit=100`)).data.find((item) => item.id === target.id);
            expect(listed!.scam_report_count).to.equal(2);
        });

        it('lets one caller report a product and its business separately', async () => {

            expect((await post('/scam-reports', { target_type: 'product', target_id: target.id, reason: 'Fake brand.' }, 'resident-1')).statusCode).to.equal(201);
            expect(body<Business>(await get(`/businesses/${demo.bakery}`)).scam_report_count).to.equal(0);
            const res = await post('/scam-reports', { target_type: 'business', target_id: demo.bakery, reason: 'Sells fake watches.' }, 'resident-1');
            expect(res.statusCode).to.equal(201);
            expect(body<Business>(await get(`/businesses/${demo.bakery}`)).scam_report_count).to.equal(1);
            expect(body<Product>(await get(`/products/${target.id}`)).scam_report_count).to.equal(1);
            const listed = body<List<Business>>(await get('/businesses')).data.find((business) => business.id === demo.bakery);
            expect(listed!.scam_report_count).to.equal(1);
            expectError(await post('/scam-reports', { target_type: 'business', target_id: demo.bakery, reason: 'Again.' }, 'resident-1'), 409, 'duplicate_scam_report');
        });

        it('counts reports on offers', async () => {

            const offer = body<List<Offer>>(await get(`/offers?product_id=${demo.croissants}`)).data[0]!;
            expect(offer.scam_report_count).to.equal(0);
            const res = await post('/scam-reports', { target_type: 'offer', target_id: offer.id, reason: 'The dozen had eleven.' }, 'resident-3');
            expect(res.statusCode).to.equal(201);
            const reported = body<List<Offer>>(await get(`/offers?product_id=${demo.croissants}`)).data[0]!;
            expect(reported.scam_report_count).to.equal(1);
        });

        it('accepts exactly one of many simultaneous identical reports', async () => {

            const fresh = body<Product>(await post('/products', product({ name: 'Raced listing' })));
            const results = await Promise.all(Array.from({ length: 8 }, () => post('/scam-reports', { target_type: 'product', target_id: fresh.id, reason: 'Race' }, 'resident-racer')));
            expect(results.map((res) => res.statusCode).sort()).to.equal([201, 409, 409, 409, 409, 409, 409, 409]);
            expect(body<Product>(await get(`/products/${fresh.id}`)).scam_report_count).to.equal(1);
        });

        const unknownTargets: [string, string, string][] = [
            ['product', 'no-such-product', 'product_not_found'],
            ['business', 'no-such-business', 'business_not_found'],
            ['offer', 'no-such-offer', 'offer_not_found'],
            ['business', demo.sourdough, 'business_not_found']
        ];

        for (const [type, id, code] of unknownTargets) {
            it(`answers 422 naming target_id for a ${type} target ${id === demo.sourdough ? 'that is a product' : 'that does not exist'}`, async () => {

                const error = expectError(await post('/scam-reports', { target_type: type, target_id: id, reason: 'Scam' }), 422, code, 'target_id');
                expect(error.message).to.equal(`target_id refers to no existing ${type}`);
            });
        }

        const invalid: [string, Record<string, unknown>, string, string][] = [
            ['an unknown target_type', { target_type: 'driver', target_id: 'x', reason: 'Scam' }, 'target_type', 'target_type must be one of [product, business, offer]'],
            ['a missing target_id', { target_type: 'product', reason: 'Scam' }, 'target_id', 'target_id is required'],
            ['a target_id over 100 characters', { target_type: 'product', target_id: 'x'.repeat(101), reason: 'Scam' }, 'target_id', 'target_id length must be less than or equal to 100 characters long'],
            ['a missing reason', { target_type: 'product', target_id: 'x' }, 'reason', 'reason is required'],
            ['a reason over 2000 characters', { target_type: 'product', target_id: 'x', reason: 'r'.repeat(2001) }, 'reason', 'reason length must be less than or equal to 2000 characters long'],
            ['a reporter_id in the body', { target_type: 'product', target_id: 'x', reason: 'Scam', reporter_id: 'mallory' }, 'reporter_id', 'reporter_id is set by the service (the caller\'s identity) and cannot be sent']
        ];

        for (const [title, payload, field, message] of invalid) {
            it(`answers 400 naming ${field} for ${title}`, async () => {

                const error = expectError(await post('/scam-reports', payload), 400, 'validation_failed', field);
                expect(error.details).to.equal([{ field, message }]);
            });
        }
    });

    describe('error matrix', () => {

        interface Case {
            title: string;
            method?: 'GET' | 'POST';
            url: string;
            token?: 'valid' | 'none' | 'garbage' | 'expired';
            payload?: unknown;
            contentType?: string;
            status: number;
            code: string;
            field?: string;
        }

        const long = 'x'.repeat(101);
        const oversized = JSON.stringify(product({ description: 'x'.repeat(70 * 1024) }));

        const cases: Case[] = [
            { title: 'a limit of 0', url: '/products?limit=0', status: 400, code: 'validation_failed', field: 'limit' },
            { title: 'a limit over 100', url: '/products?limit=101', status: 400, code: 'validation_failed', field: 'limit' },
            { title: 'a limit that is not a number', url: '/products?limit=ten', status: 400, code: 'validation_failed', field: 'limit' },
            { title: 'a negative offset', url: '/products?offset=-1', status: 400, code: 'validation_failed', field: 'offset' },
            { title: 'a fractional offset', url: '/products?offset=1.5', status: 400, code: 'validation_failed', field: 'offset' },
            { title: 'an empty business_id filter', url: '/products?business_id=', status: 400, code: 'validation_failed', field: 'business_id' },
            { title: 'an unknown query parameter', url: '/products?colour=red', status: 400, code: 'validation_failed', field: 'colour' },
            { title: 'a business list limit over 100', url: '/businesses?limit=1000', status: 400, code: 'validation_failed', field: 'limit' },
            { title: 'a negative offer offset', url: '/offers?offset=-5', status: 400, code: 'validation_failed', field: 'offset' },
            { title: 'an offer filter over 100 characters', url: `/offers?product_id=${long}`, status: 400, code: 'validation_failed', field: 'product_id' },
            { title: 'a product id over 100 characters', url: `/products/${long}`, status: 400, code: 'validation_failed', field: 'product_id' },
            { title: 'a business id over 100 characters', url: `/businesses/${long}`, status: 400, code: 'validation_failed', field: 'business_id' },
            { title: 'a product body with created_by', method: 'POST', url: '/products', payload: product({ created_by: 'mallory' }), status: 400, code: 'validation_failed', field: 'created_by' },
            { title: 'an inquiry without a target', method: 'POST', url: '/inquiries', payload: { message: 'Hi' }, status: 400, code: 'validation_failed', field: 'product_id' },
            { title: 'a scam report on a driver', method: 'POST', url: '/scam-reports', payload: { target_type: 'driver', target_id: 'd', reason: 'Scam' }, status: 400, code: 'validation_failed', field: 'target_type' },
            { title: 'a body that is not valid JSON', method: 'POST', url: '/products', payload: '{"name": ', contentType: 'application/json', status: 400, code: 'bad_request' },

            { title: 'a product without a token', method: 'POST', url: '/products', token: 'none', payload: product(), status: 401, code: 'unauthorized' },
            { title: 'an inquiry without a token', method: 'POST', url: '/inquiries', token: 'none', payload: { product_id: demo.sourdough, message: 'Hi' }, status: 401, code: 'unauthorized' },
            { title: 'a scam report without a token', method: 'POST', url: '/scam-reports', token: 'none', payload: { target_type: 'product', target_id: demo.sourdough, reason: 'Scam' }, status: 401, code: 'unauthorized' },
            { title: 'a product with an expired token', method: 'POST', url: '/products', token: 'expired', payload: product(), status: 401, code: 'unauthorized' },
            { title: 'the product list with a bad token', url: '/products', token: 'garbage', status: 401, code: 'unauthorized' },
            { title: 'a product with an expired token on an optional route', url: `/products/${demo.sourdough}`, token: 'expired', status: 401, code: 'unauthorized' },
            { title: 'the business list with a bad token', url: '/businesses', token: 'garbage', status: 401, code: 'unauthorized' },
            { title: 'a business with a bad token', url: `/businesses/${demo.bakery}`, token: 'garbage', status: 401, code: 'unauthorized' },
            { title: 'the offer list with a bad token', url: '/offers', token: 'garbage', status: 401, code: 'unauthorized' },
            { title: 'an inquiry read without a token', url: '/inquiries/some-id', token: 'none', status: 401, code: 'unauthorized' },
            { title: 'a scam report read without a token', url: '/scam-reports/some-id', token: 'none', status: 401, code: 'unauthorized' },

            { title: 'an unknown product', url: '/products/no-such-product', status: 404, code: 'product_not_found' },
            { title: 'an unknown business', url: '/businesses/no-such-business', status: 404, code: 'business_not_found' },
            { title: 'an unknown inquiry', url: '/inquiries/no-such-inquiry', status: 404, code: 'inquiry_not_found' },
            { title: 'an unknown scam report', url: '/scam-reports/no-such-report', status: 404, code: 'scam_report_not_found' },
            { title: 'an unknown commerce path', url: '/carts', status: 404, code: 'not_found' },

            { title: 'a second scam report by the same caller', method: 'POST', url: '/scam-reports', payload: { target_type: 'product', target_id: demo.sourdough, reason: 'Again' }, status: 409, code: 'duplicate_scam_report' },

            { title: 'a product body over 64 KiB', method: 'POST', url: '/products', payload: oversized, contentType: 'application/json', status: 413, code: 'payload_too_large' },
            { title: 'an inquiry body over 64 KiB', method: 'POST', url: '/inquiries', payload: oversized, contentType: 'application/json', status: 413, code: 'payload_too_large' },

            { title: 'a product sent as text/plain', method: 'POST', url: '/products', payload: JSON.stringify(product()), contentType: 'text/plain', status: 415, code: 'unsupported_media_type' },
            { title: 'an inquiry sent as a form', method: 'POST', url: '/inquiries', payload: 'product_id=x&message=hi', contentType: 'application/x-www-form-urlencoded', status: 415, code: 'unsupported_media_type' },
            { title: 'a scam report sent as text/plain', method: 'POST', url: '/scam-reports', payload: 'scam', contentType: 'text/plain', status: 415, code: 'unsupported_media_type' },

            { title: 'a product of an unknown business', method: 'POST', url: '/products', payload: product({ business_id: 'no-such-business' }), status: 422, code: 'business_not_found', field: 'business_id' },
            { title: 'an inquiry about an unknown product', method: 'POST', url: '/inquiries', payload: { product_id: 'no-such-product', message: 'Hi' }, status: 422, code: 'product_not_found', field: 'product_id' },
            { title: 'an inquiry about an unknown business', method: 'POST', url: '/inquiries', payload: { business_id: 'no-such-business', message: 'Hi' }, status: 422, code: 'business_not_found', field: 'business_id' },
            { title: 'a scam report on an unknown offer', method: 'POST', url: '/scam-reports', payload: { target_type: 'offer', target_id: 'no-such-offer', reason: 'Scam' }, status: 422, code: 'offer_not_found', field: 'target_id' }
        ];

        const headers = (token: Case['token'], contentType?: string): Record<string, string> => {

            const tokens = {
                valid: () => auth('matrix-user'),
                none: () => ({}),
                garbage: () => ({ authorization: 'Bearer not.a.token' }),
                expired: () => auth('matrix-user', -3600)
            };

            return { ...tokens[token ?? 'valid'](), ...(contentType ? { 'content-type': contentType } : {}) };
        };

        beforeEach(async () => {

            const first = await post('/scam-reports', { target_type: 'product', target_id: demo.sourdough, reason: 'First' }, 'matrix-user');
            expect(first.statusCode).to.equal(201);
        });

        for (const row of cases) {
            it(`answers ${row.status} ${row.code} to ${row.title}`, async () => {

                const res = await inject({
                    method: row.method ?? 'GET',
                    url: `${base}${row.url}`,
                    headers: headers(row.token, row.contentType),
                    payload: row.payload as object | undefined
                });
                expectError(res, row.status, row.code, row.field);
                if (row.status === 401) {
                    expect(res.headers['www-authenticate'] as string).to.startWith('Bearer');
                }
            });
        }

        it('covers every error status commerce answers', () => {

            expect(new Set(cases.map((row) => row.status))).to.equal(new Set([400, 401, 404, 409, 413, 415, 422]));
        });
    });

    describe('creation time', () => {

        const business = { id: 'b-1', name: 'Pier Kiosk', description: '', category: 'Kiosk', city: 'Harbourside', phone: '+1 207 555 0199', created_at: '2026-01-01T00:00:00.000Z' };

        it('stamps the first product of an empty catalogue with the current time', async () => {

            await replaceInstance({ seed: 'none', fixture: { commerce: { businesses: [business] } } });
            const start = new Date().toISOString();
            const created = body<Product>(await post('/products', product({ business_id: 'b-1' })));
            expect(created.created_at >= start).to.be.true();
            expect(created.created_at <= new Date().toISOString()).to.be.true();
        });

        it('stamps a product with the instance clock while it stands still', async () => {

            await replaceInstance({ seed: 'none', clock: '2030-05-05T05:05:05Z', fixture: { commerce: { businesses: [business] } } });
            expect(body<Product>(await post('/products', product({ business_id: 'b-1' }))).created_at).to.equal('2030-05-05T05:05:05.000Z');
        });

        it('stamps a new product after the newest one even when the clock is behind it', async () => {

            const future = { id: 'p-future', name: 'From the future', price: 1, currency: 'USD', business_id: 'b-1', created_by: 'demo', created_at: '2999-12-31T23:59:59.998Z' };
            await replaceInstance({ seed: 'none', fixture: { commerce: { businesses: [business], products: [future] } } });
            const first = body<Product>(await post('/products', product({ business_id: 'b-1' })));
            const second = body<Product>(await post('/products', product({ business_id: 'b-1' })));
            expect(first.created_at).to.equal('2999-12-31T23:59:59.999Z');
            expect(second.created_at).to.equal('3000-01-01T00:00:00.000Z');
            const listed = body<List<Product>>(await t.inject(`${base}/products`));
            expect(listed.data.map((item) => item.id)).to.equal(['p-future', first.id, second.id]);
        });

        it('gives products created in the same millisecond distinct, increasing times', async () => {

            const created = await Promise.all(Array.from({ length: 20 }, (_, index) => post('/products', product({ name: `Burst ${index}` }))));
            const times = created.map((res) => body<Product>(res).created_at).sort();
            expect(new Set(times).size).to.equal(20);
        });
    });
});

