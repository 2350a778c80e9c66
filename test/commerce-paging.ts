import Code from '@hapi/code';
import type { ServerInjectResponse } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { createTestKit, type TestInstance, type TestKit } from '../lib/testing';
import { body, type List } from './helpers/server';


export const lab = Lab.script();
const { describe, it, before, after, beforeEach, afterEach } = lab;
const { expect } = Code;


interface Listed {
    id: string;
    created_at: string;
}

const base = '/v1/commerce';

const businesses = [
    { id: 'b-quay', name: 'Quay Kiosk', description: '', category: 'Kiosk', city: 'Harbourside', phone: '+1 207 555 0190', created_at: '2025-01-01T00:00:00.000Z' },
    { id: 'b-pier', name: 'Pier Stall', description: '', category: 'Market stall', city: 'Harbourside', phone: '+1 207 555 0191', created_at: '2025-01-02T00:00:00.000Z' }
];

// Products numbered 1..60, one second apart, every tenth one of b-quay and the rest of b-pier.
const products = Array.from({ length: 60 }, (_, index) => ({
    id: `bulk-${String(index + 1).padStart(6, '0')}`,
    name: `Bulk product ${index + 1}`,
    price: (101 + index) / 100,
    currency: 'USD',
    business_id: (index + 1) % 10 === 0 ? 'b-quay' : 'b-pier',
    created_by: 'bench',
    created_at: new Date(Date.UTC(2025, 1, 1, 0, 0, index + 1)).toISOString()
}));


describe('commerce paging', () => {

    let kit: TestKit;
    let t: TestInstance;

    const get = (url: string): Promise<ServerInjectResponse> => t.inject(`${base}${url}`);
    const create = (name: string, businessId: string): Promise<ServerInjectResponse> => {

        const payload = { name, price: 1, currency: 'USD', business_id: businessId };
        return t.inject({ method: 'POST', url: `${base}/products`, headers: t.auth('pager'), payload });
    };

    before(async () => {

        kit = await createTestKit({ validateResponses: true });
    });

    after(async () => {

        await kit.close();
    });

    beforeEach(async () => {

        t = await kit.instance({ seed: 'none', fixture: { commerce: { businesses, products } } });
    });

    afterEach(() => {

        t.close();
    });

    // What each walk lists, the business its first product of a round goes to, and whether the clock stands still.
    const walks: [string, string, string, boolean][] = [
        ['all products', '/products?', 'b-pier', false],
        ['the products of one business', '/products?business_id=b-quay&', 'b-quay', false],
        ['all products', '/products?', 'b-pier', true],
        ['the products of one business', '/products?business_id=b-quay&', 'b-quay', true]
    ];

    const clock = Date.now;

    for (const [what, list, businessId, frozen] of walks) {
        it(`never repeats or skips while paging through ${what} as products are created${frozen ? ', all in the same millisecond' : ''}`, async () => {

            // A clock that stands still makes every new product share one millisecond: only the store's ordering guarantee keeps them apart.
            const fixed = list.includes('b-quay') ? products.filter((item) => item.business_id === 'b-quay') : products;
            expect(body<List<Listed>>(await get(`${list}limit=1`)).total).to.equal(fixed.length);
            // Of a round's three new products, the listed ones: all three, or the two made in b-quay.
            const listedPerRound = list.includes('b-quay') ? (businessId === 'b-quay' ? 2 : 1) : 3;
            const now = clock();
            const seen: string[] = [];
            let rounds = 0;
            Date.now = frozen ? () => now : clock;
            try {
                for (let i = 0; ; ++i) {
                    ++rounds;
                    // Each round reads a page while three products are being created around it, in both businesses.
                    const [page] = await Promise.all([
                        get(`${list}limit=7&offset=${seen.length}`),
                        create(`Round ${i} a`, businessId),
                        create(`Round ${i} b`, 'b-quay'),
                        create(`Round ${i} c`, 'b-pier')
                    ]);

                    expect(page.statusCode).to.equal(200);
                    const { data } = body<List<Listed>>(page);
                    seen.push(...data.map((record) => record.id));
                    if (data.length < 7) {
                        break;
                    }
                }
            }
            finally {
                Date.now = clock;
            }

            expect(new Set(seen).size).to.equal(seen.length);

            const everything: string[] = [];
            for (let i = 0; ; i += 100) {
                const { data } = body<List<Listed>>(await get(`${list}limit=100&offset=${i}`));
                everything.push(...data.map((record) => record.id));
                if (data.length < 100) {
                    break;
                }
            }

            expect(everything.length).to.equal(fixed.length + listedPerRound * rounds);
            expect(seen).to.equal(everything.slice(0, seen.length));
            expect(seen.slice(0, fixed.length)).to.equal(fixed.map((item) => item.id));
        });
    }
});
