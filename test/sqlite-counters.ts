import Code from '@hapi/code';
import type { Server } from '@hapi/hapi';
import Lab from '@hapi/lab';

import type { Business, Offer, Product } from '../lib/namespaces/commerce/store';
import { sqliteDatabase } from '../lib/storage/sqlite/engine';
import { bearer, body, type List, testServer } from './helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


// The SQLite engine keeps commerce's counters in triggers; these tests read and move rows below the API on purpose.

const bakery = 'd851fadb-03ca-5a24-ba16-c15cce19933b';
const teaHouse = '274d578f-fbb6-5d0a-a6cc-0f6f60e2c886';


describe('commerce counters on SQLite', () => {

    let server: Server;

    const post = (url: string, payload: object, subject = 'alice') => server.inject({ method: 'POST', url: `/v1/commerce${url}`, headers: bearer(server, subject), payload });
    const get = async <T>(url: string) => body<T>(await server.inject(`/v1/commerce${url}`));
    const product = { name: 'Harbour fudge', price: 5.5, currency: 'USD', business_id: bakery };

    before(async () => {

        server = await testServer();
    });

    after(async () => {

        await server.stop();
    });

    it('keep scam_report_count equal to the distinct reporters and product totals equal to the rows', async () => {

        const created = body<Product>(await post('/products', product));
        const offer = (await get<List<Offer>>('/offers?limit=1')).data[0]!;
        for (const reporter of ['ann', 'bob']) {
            for (const [type, id] of [['product', created.id], ['business', bakery], ['offer', offer.id]]) {
                expect((await post('/scam-reports', { target_type: type, target_id: id, reason: 'Scam' }, reporter)).statusCode).to.equal(201);
            }
        }

        expect((await post('/scam-reports', { target_type: 'product', target_id: created.id, reason: 'Again' }, 'ann')).statusCode).to.equal(409);
        expect((await get<Product>(`/products/${created.id}`)).scam_report_count).to.equal(2);

        const mismatches = sqliteDatabase(server.app.localgate.data, 'commerce').prepare(`
            SELECT 'product' AS kind, id FROM products
                WHERE scam_report_count <> (SELECT count(DISTINCT reporter_id) FROM scam_reports WHERE target_type = 'product' AND target_id = products.id)
            UNION ALL SELECT 'business', id FROM businesses
                WHERE scam_report_count <> (SELECT count(DISTINCT reporter_id) FROM scam_reports WHERE target_type = 'business' AND target_id = businesses.id)
                   OR product_count <> (SELECT count(*) FROM products WHERE business_id = businesses.id)
            UNION ALL SELECT 'offer', id FROM offers
                WHERE scam_report_count <> (SELECT count(DISTINCT reporter_id) FROM scam_reports WHERE target_type = 'offer' AND target_id = offers.id)
            UNION ALL SELECT 'total', 1 FROM catalogue_totals WHERE products <> (SELECT count(*) FROM products)`).all();
        expect(mismatches).to.equal([]);
    });

    it('follow rows deleted or moved outside the API', async () => {

        const other = await testServer();
        const postTo = (url: string, payload: object) => other.inject({ method: 'POST', url: `/v1/commerce${url}`, headers: bearer(other, 'alice'), payload });
        const getFrom = async <T>(url: string) => body<T>(await other.inject(`/v1/commerce${url}`));
        try {
            const db = sqliteDatabase(other.app.localgate.data, 'commerce');
            const created = body<Product>(await postTo('/products', product));
            await postTo('/scam-reports', { target_type: 'product', target_id: created.id, reason: 'Scam' });
            await postTo('/scam-reports', { target_type: 'business', target_id: bakery, reason: 'Scam' });
            const offer = (await getFrom<List<Offer>>('/offers?limit=1')).data[0]!;
            await postTo('/scam-reports', { target_type: 'offer', target_id: offer.id, reason: 'Scam' });

            db.prepare('UPDATE products SET business_id = ? WHERE id = ?').run(teaHouse, created.id);
            expect((await getFrom<List<Product>>(`/products?business_id=${bakery}`)).total).to.equal(5);
            expect((await getFrom<List<Product>>(`/products?business_id=${teaHouse}`)).total).to.equal(5);

            db.prepare('DELETE FROM scam_reports').run();
            expect((await getFrom<Product>(`/products/${created.id}`)).scam_report_count).to.equal(0);
            expect((await getFrom<Business>(`/businesses/${bakery}`)).scam_report_count).to.equal(0);
            expect((await getFrom<List<Offer>>('/offers?limit=1')).data[0]!.scam_report_count).to.equal(0);

            expect((await getFrom<List<Product>>('/products')).total).to.equal(36);
            db.prepare('DELETE FROM products WHERE id = ?').run(created.id);
            expect((await getFrom<List<Product>>('/products')).total).to.equal(35);
            expect((await getFrom<List<Product>>(`/products?business_id=${teaHouse}`)).total).to.equal(4);
        }
        finally {
            await other.stop();
        }
    });
});
