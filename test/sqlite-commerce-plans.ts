import Code from '@hapi/code';
import type { Server } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { wallContext } from '../lib/record-context';
import { queries, SqliteCommerceStore } from '../lib/namespaces/commerce/sqlite';
import { sqliteDatabase } from '../lib/storage/sqlite/engine';
import type { Database } from '../lib/storage/sqlite/open';
import { testServer } from './helpers/server';
import { insertRows } from './helpers/sqlite';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


const businesses = [
    { id: 'b-quay', name: 'Quay Kiosk', description: '', category: 'Kiosk', city: 'Harbourside', phone: '+1 207 555 0190', created_at: '2025-01-01T00:00:00.000Z' },
    { id: 'b-pier', name: 'Pier Stall', description: '', category: 'Market stall', city: 'Harbourside', phone: '+1 207 555 0191', created_at: '2025-01-02T00:00:00.000Z' }
];


// Adds products numbered from..to, one second apart, every tenth one of b-quay and the rest of b-pier.
function addProducts(db: Database, from: number, to: number): void {

    db.prepare(`
        WITH RECURSIVE n(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM n WHERE i < ?)
        INSERT INTO products (id, name, description, price_minor, currency, business_id, created_by, created_at)
        SELECT printf('bulk-%06d', i), 'Bulk product ' || i, '', 100 + i, 'USD', iif(i % 10 = 0, 'b-quay', 'b-pier'), 'bench',
               strftime('%Y-%m-%dT%H:%M:%fZ', '2025-02-01', '+' || i || ' seconds')
        FROM n`).run(from, to);
}


describe('commerce query plans', () => {

    let server: Server;
    let db: Database;

    before(async () => {

        server = await testServer({ seed: false });
        db = sqliteDatabase(server.app.localgate.data, 'commerce');
        insertRows(db, 'businesses', businesses);
    });

    after(async () => {

        await server.stop();
    });

    const page = { limit: 20, offset: 40 };

    // Each SELECT of the store, the parameters to plan it with, and the index it must use.
    const plans: Partial<Record<keyof typeof queries, [unknown[] | Record<string, unknown>, RegExp]>> = {
        listProducts: [page, /USING INDEX products_by_created$/],
        listProductsOfBusiness: [{ ...page, business_id: 'b-quay' }, /USING INDEX products_by_business \(business_id=\?\)$/],
        countProducts: [[], /USING INTEGER PRIMARY KEY/],
        countProductsOfBusiness: [['b-quay'], /USING INDEX sqlite_autoindex_businesses_1 \(id=\?\)/],
        latestProduct: [[], /USING COVERING INDEX products_by_created$/],
        product: [['p'], /USING INDEX sqlite_autoindex_products_1 \(id=\?\)/],
        listBusinesses: [page, /USING INDEX businesses_by_created$/],
        countBusinesses: [[], /USING COVERING INDEX/],
        business: [['b'], /USING INDEX sqlite_autoindex_businesses_1 \(id=\?\)/],
        listOffers: [{ ...page, now: '2030-01-01T00:00:00.000Z' }, /USING INDEX offers_by_created$/],
        listOffersOfProduct: [{ ...page, product_id: 'p', now: '2030-01-01T00:00:00.000Z' }, /USING INDEX offers_by_product \(product_id=\?\)$/],
        countOffers: [[], /USING COVERING INDEX/],
        countOffersOfProduct: [['p'], /USING COVERING INDEX offers_by_product \(product_id=\?\)/],
        productExists: [['p'], /USING COVERING INDEX sqlite_autoindex_products_1 \(id=\?\)/],
        businessExists: [['b'], /USING COVERING INDEX sqlite_autoindex_businesses_1 \(id=\?\)/],
        offerExists: [['o'], /USING COVERING INDEX sqlite_autoindex_offers_1 \(id=\?\)/],
        inquiry: [['i', 'owner'], /USING INDEX sqlite_autoindex_inquiries_1 \(id=\?\)/],
        scamReportByReporter: [['product', 'p', 'reporter'], /USING COVERING INDEX scam_reports_one_per_reporter \(target_type=\? AND target_id=\? AND reporter_id=\?\)/],
        scamReport: [['r', 'reporter'], /USING INDEX sqlite_autoindex_scam_reports_1 \(id=\?\)/]
    };

    function planOf(sql: string, params: unknown[] | Record<string, unknown>): string[] {

        const explain = db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
        const rows = (Array.isArray(params) ? explain.all(...params) : explain.all(params)) as { detail: string }[];
        return rows.map((row) => row.detail);
    }

    it('has a plan expectation for every query that reads', () => {

        const reads = Object.entries(queries).filter(([, sql]) => sql.startsWith('SELECT')).map(([name]) => name);
        expect(Object.keys(plans).sort()).to.equal(reads.sort());
    });

    const check = (stage: string) => {

        for (const [name, [params, index]] of Object.entries(plans)) {
            const plan = planOf(queries[name as keyof typeof queries], params);
            expect(plan.filter((step) => /^SCAN \w+$/.test(step)), `${name} ${stage} scans a whole table: ${plan.join('; ')}`).to.equal([]);
            expect(plan.filter((step) => step.includes('TEMP B-TREE')), `${name} ${stage} sorts in a temporary b-tree: ${plan.join('; ')}`).to.equal([]);
            expect(plan.some((step) => index.test(step)), `${name} ${stage} does not use ${index}: ${plan.join('; ')}`).to.be.true();
        }
    };

    it('serves every list, count and lookup from an index, without sorting', () => {

        check('on an empty database');
    });

    it('keeps those plans on a large, analyzed database, whose totals stay right', async () => {

        addProducts(db, 1, 20_000);
        db.exec('ANALYZE');
        check('after ANALYZE');

        const store = new SqliteCommerceStore(db, wallContext());
        expect((await store.listProducts({}, { limit: 1, offset: 0 })).total).to.equal(20_000);
        expect((await store.listProducts({ business_id: 'b-quay' }, { limit: 1, offset: 0 })).total).to.equal(2_000);
    });
});

