import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { createTestKit, type TestInstance, type TestKit } from '../lib/testing';
import { expectError } from './helpers/errors';
import { adminBearer, body } from './helpers/server';
import { bakery, readWorld, worldFixture, writeWorld, type World } from './helpers/world';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


describe('export and load back', () => {

    let kit: TestKit;

    before(async () => {

        kit = await createTestKit({ validateResponses: true });
    });

    after(() => kit.close());

    async function richInstance(options: { ids?: 'sequential'; clock?: string } = { ids: 'sequential', clock: '2030-01-01T00:00:00.000Z' }): Promise<TestInstance> {

        const t = await kit.instance({ ...options, pay: true, fixture: worldFixture });
        await writeWorld((request) => t.inject(request), (subject) => t.auth(subject), () => (options.clock ? t.clock.advance('90s') : undefined));
        return t;
    }

    it('answers every list page and record of the copy byte for byte as the original did', async () => {

        const original = await richInstance();
        const file = await original.export();
        const copy = await kit.instance({ seed: 'none', pay: true, fixture: file });

        expect(await copy.export()).to.equal(file);
        const seen = await readWorld((request) => original.inject(request), (subject) => original.auth(subject), file);
        expect(await readWorld((request) => copy.inject(request), (subject) => copy.auth(subject), file)).to.equal(seen);
        expect(Object.keys(seen).length).to.equal(158);
        expect(seen['- /v1/commerce/products?limit=4&offset=0']).to.startWith('200 38 ');
        expect(seen['alice /v1/pay/wallet']).to.contain('"balances":[{"asset":"MIT","amount":500},{"asset":"USD","amount":7500}]');
        expect(seen['alice /v1/logistics/bookings?limit=4&offset=0']).to.contain('"status":"cancelled"');

        // The copy continues the clock and the id counter: the next record is the same in both.
        expect(copy.clock.now().toISOString()).to.equal('2030-01-01T00:04:30.000Z');
        const next = (t: TestInstance) => t.inject({ method: 'POST', url: '/v1/commerce/products', headers: t.auth('dan'), payload: { name: 'Next', price: 1, currency: 'USD', business_id: bakery } });
        expect((await next(copy)).payload).to.equal((await next(original)).payload);
        await original.close();
        await copy.close();
    });

    it('opens the file with its format, each namespace\'s migrations, and the instance\'s clock and ids', async () => {

        const t = await kit.instance({ seed: 'none', pay: true });
        expect(await t.export()).to.equal({
            localgate: {
                format: 1,
                migrations: {
                    commerce: ['001_catalogue_inquiries_scam_reports'],
                    logistics: ['001_vehicles_locations_drivers_bookings', '002_booking_counts'],
                    pay: ['001_token_types', '002_ledger', '003_credentials']
                },
                instance: { clock: null, ids: 'random', id_counter: 0 }
            },
            commerce: { businesses: [], products: [], offers: [], inquiries: [], scam_reports: [] },
            logistics: { locations: [], vehicles: [], drivers: [], bookings: [] },
            pay: { wallets: [], transactions: [] }
        });

        // Without pay, the file has none.
        const without = await kit.instance({ seed: 'none' });
        expect(Object.keys(await without.export())).to.equal(['localgate', 'commerce', 'logistics']);
        await t.close();
        await without.close();
    });

    it('is served to the admin over HTTP as a file, and loads back with POST /_instances', async () => {

        const original = await richInstance({});
        const admin = adminBearer(kit.server);
        const res = await kit.server.inject({ url: `/_instances/${original.id}/export`, headers: admin });
        expect(res.statusCode).to.equal(200);
        expect(res.headers['content-disposition']).to.equal(`attachment; filename="localgate-${original.id}.json"`);
        const file = body<World>(res);
        expect(file.localgate).to.include({ instance: { clock: null, ids: 'random', id_counter: 0 } });

        const made = await kit.server.inject({ method: 'POST', url: '/_instances', headers: admin, payload: { seed: 'none', pay: true, fixture: file } });
        expect(made.statusCode).to.equal(201);
        expect(body(made)).to.include({ seed: 'none', clock: null, ids: 'random' });
        const copy = body<{ id: string }>(made).id;
        const again = await kit.server.inject({ url: `/_instances/${copy}/export`, headers: admin });
        expect(body<World>(again)).to.equal({ ...file, localgate: file.localgate });

        expectError(await kit.server.inject({ url: '/_instances/nowhere/export', headers: admin }), 404, 'instance_not_found');
        expectError(await kit.server.inject({ url: `/_instances/${original.id}/export`, headers: { authorization: `Bearer ${original.token('alice')}` } }), 403);
        await original.close();
        await kit.server.inject({ method: 'DELETE', url: `/_instances/${copy}`, headers: admin });
    });

    it('takes the clock and ids the request sets over those the file carries', async () => {

        const original = await kit.instance({ seed: 'none', ids: 'sequential', clock: '2030-01-01T00:00:00.000Z' });
        await original.inject({ method: 'POST', url: '/v1/commerce/inquiries', headers: original.auth('bob'), payload: { business_id: bakery, message: 'Hi' } }).then((res) => expect(res.statusCode).to.equal(422));
        const file = await original.export();
        const own = await kit.instance({ seed: 'none', ids: 'sequential', fixture: file });
        expect(own.clock.now().getFullYear()).to.not.equal(2030);
        const carried = await kit.instance({ seed: 'none', fixture: file });
        expect(carried.clock.now().toISOString()).to.equal('2030-01-01T00:00:00.000Z');
        await Promise.all([original.close(), own.close(), carried.close()]);
    });
});
