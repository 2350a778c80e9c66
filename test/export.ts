import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { settlementFields } from '../lib/namespaces/pay/fixture';
import { createTestKit, type TestInstance, type TestKit } from '../lib/testing';
import { expectError } from './helpers/errors';
import { adminBearer, bearer, body } from './helpers/server';
import { timedPay } from './helpers/ledger';
import { bakery, frozenMovesExport, readWorld, worldFixture, writeWorld, type ExportFile } from './helpers/world-records';


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
        await writeWorld((request) => t.inject(request), (subject) => t.auth(subject), async () => {

            if (options.clock) {
                await t.clock.advance('90s');
            }
        });
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
        expect(seen['- /v1/commerce/products?limit=4&offset=0']!).to.startWith('200 38 ');
        expect(seen['alice /v1/pay/wallet']).to.contain('"balances":[{"asset":"MIT","amount":500,"pending_in":0,"pending_out":0},{"asset":"USD","amount":7500,"pending_in":0,"pending_out":0}]');
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
                    commerce: ['001_catalogue_inquiries_scam_reports', '002_offer_expiry', '003_events', '004_endpoint_state'],
                    logistics: ['001_vehicles_locations_drivers_bookings', '002_booking_counts', '003_booking_lifecycle', '004_events', '005_metadata', '006_endpoint_state'],
                    pay: ['001_token_types', '002_ledger', '003_credentials', '004_settlement', '005_events', '006_metadata', '007_endpoint_state']
                },
                instance: { clock: null, ids: 'random', id_counter: 0, pay: true }
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
        const file = body<ExportFile>(res);
        expect(file.localgate).to.include({ instance: { clock: null, ids: 'random', id_counter: 0, pay: true } });

        const made = await kit.server.inject({ method: 'POST', url: '/_instances', headers: admin, payload: { seed: 'none', pay: true, fixture: file } });
        expect(made.statusCode).to.equal(201);
        expect(body(made)).to.include({ seed: 'none', clock: null, ids: 'random' });
        const copy = body<{ id: string }>(made).id;
        const again = await kit.server.inject({ url: `/_instances/${copy}/export`, headers: admin });
        expect(body<ExportFile>(again)).to.equal({ ...file, localgate: file.localgate });

        expectError(await kit.server.inject({ url: '/_instances/nowhere/export', headers: admin }), 404, 'instance_not_found');
        expectError(await kit.server.inject({ url: `/_instances/${original.id}/export`, headers: { authorization: `Bearer ${original.token('alice')}` } }), 403);
        await original.close();
        await kit.server.inject({ method: 'DELETE', url: `/_instances/${copy}`, headers: admin });
    });

    it('serves the default data set to the admin at /_export as the file `localgate export` writes', async () => {

        const res = await kit.server.inject({ url: '/_export', headers: adminBearer(kit.server) });
        expect(res.statusCode).to.equal(200);
        expect(res.headers['content-disposition']).to.equal('attachment; filename="localgate.json"');
        const file = body<ExportFile>(res);
        expect(file).to.equal(await kit.server.app.localgate.data.exportRecords());
        expect(Object.keys(file)).to.equal(['localgate', 'commerce', 'logistics']);
        expect((file.commerce as { businesses: unknown[] }).businesses).to.have.length(10);

        expectError(await kit.server.inject({ url: '/_export', headers: bearer(kit.server, 'alice') }), 403);
        expectError(await kit.server.inject({ url: '/_export' }), 401);
    });

    it('takes the clock and ids the request sets over those the file carries, each on its own, and goes on with the file\'s id counter', async () => {

        const original = await kit.instance({ seed: 'demo', ids: 'sequential', clock: '2030-01-01T00:00:00.000Z' });
        const product = { name: 'Loaf', price: 2, currency: 'USD', business_id: bakery };
        const made = async (t: TestInstance) => {

            const res = await t.inject({ method: 'POST', url: '/v1/commerce/products', headers: t.auth('bob'), payload: product });
            expect(res.statusCode, res.payload).to.equal(201);
            return body<{ id: string }>(res).id;
        };

        const first = await made(original);
        const file = await original.export();
        expect(file.localgate).to.include({ instance: { clock: '2030-01-01T00:00:00.000Z', ids: 'sequential', id_counter: 1, pay: false } });
        const second = await made(original);

        // Only ids asked for: the clock is the file's, and so is the sequential counter, so the next id is not taken.
        const ids = await kit.instance({ ids: 'sequential', fixture: file });
        expect(body(await kit.server.inject({ url: `/_instances/${ids.id}`, headers: adminBearer(kit.server) }))).to.include({ seed: 'none', clock: '2030-01-01T00:00:00.000Z', ids: 'sequential' });

        // Both asked for: neither is the file's; random ids take no counter.
        const both = await kit.instance({ ids: 'random', clock: '2032-01-01T00:00:00.000Z', fixture: file });
        expect(body(await kit.server.inject({ url: `/_instances/${both.id}`, headers: adminBearer(kit.server) }))).to.include({ clock: '2032-01-01T00:00:00.000Z', ids: 'random' });
        await both.close();
        expect(await made(ids)).to.equal(second);

        // Only the clock asked for: ids stay sequential and go on from the file's counter.
        const clock = await kit.instance({ clock: '2031-01-01T00:00:00.000Z', fixture: file });
        expect(clock.clock.now().toISOString()).to.equal('2031-01-01T00:00:00.000Z');
        expect(await made(clock)).to.equal(second);

        const carried = await kit.instance({ fixture: file });
        expect(carried.clock.now().toISOString()).to.equal('2030-01-01T00:00:00.000Z');
        expect(first).to.not.equal(second);
        await Promise.all([original.close(), ids.close(), clock.close(), carried.close()]);
    });

    it('loads an export of an instance with pay back with the command as given: seed none, pay from the file', async () => {

        const original = await richInstance();
        const file = await original.export();
        const admin = adminBearer(kit.server);
        for (const payload of [{ seed: 'none', fixture: file }, { fixture: file }]) {
            const made = await kit.server.inject({ method: 'POST', url: '/_instances', headers: admin, payload });
            expect(made.statusCode, made.payload).to.equal(201);
            expect(body(made)).to.include({ seed: 'none', pay: true, ids: 'sequential', clock: '2030-01-01T00:04:30.000Z' });
            const copy = body<{ id: string }>(made).id;
            expect(body(await kit.server.inject({ url: `/_instances/${copy}/export`, headers: admin }))).to.equal(file);
            await kit.server.inject({ method: 'DELETE', url: `/_instances/${copy}`, headers: admin });
        }

        // A fixture without the localgate object but with pay records gets pay, and the demo beneath.
        const wallets = await kit.instance({ fixture: { pay: { wallets: [{ owner_id: 'ana' }] } } });
        expect(body(await kit.server.inject({ url: `/_instances/${wallets.id}`, headers: admin }))).to.include({ seed: 'demo', pay: true });
        expect(body<{ total: number }>(await wallets.inject({ url: '/v1/commerce/businesses' })).total).to.equal(10);
        await Promise.all([original.close(), wallets.close()]);
    });

    it('loads back the moves of a frozen clock, deposit then withdrawal at one instant, whatever their random ids', async () => {

        // Ids in no order decide nothing: 30 copies, each of a file with new random ids, all load (a coin toss would fail one).
        for (let i = 0; i < 30; ++i) {
            const file = await frozenMovesExport(kit, 'ana');
            const copy = await kit.instance({ fixture: file });
            expect(await copy.export(), `copy ${i}`).to.equal(file);
            expect(body<{ balances: unknown[] }>(await copy.inject({ url: '/v1/pay/wallet', headers: copy.auth('ana') })).balances, `copy ${i}`).to.equal([{ asset: 'USD', amount: 50, pending_in: 0, pending_out: 0 }]);
            await copy.close();
        }
    });

    it('loads back pending, settled and failed moves as they were, and a world loaded back settles as the original does', async () => {

        const original = await kit.instance({ seed: 'none', pay: true, ids: 'sequential', clock: '2030-01-01T00:00:00.000Z' });
        const moved = async (direction: 'deposit' | 'withdraw', provider: string, amount: number) => {

            const res = await original.inject({ method: 'POST', url: `/v1/pay/gateway/${direction}`, headers: { ...original.auth('ana'), 'idempotency-key': `${direction}-${provider}-${amount}` }, payload: { provider_id: provider, asset: 'USD', amount } });
            expect(res.statusCode, res.payload).to.equal(201);
            return body<{ id: string; settles_at: string }>(res);
        };

        await moved('deposit', 'sandbox', 1000);
        const returned = await moved('deposit', 'bank-transfer', 299);
        await moved('withdraw', 'bank-transfer', 100);
        expect(await (await timedPay(kit.server, original.id)).applyDue(new Date('2030-01-02T00:00:00.000Z'), 10)).to.have.length(1);
        original.clock.advance('1d');
        await moved('withdraw', 'bank-transfer', 199);
        await moved('deposit', 'card', 300);
        await moved('deposit', 'bank-transfer', 500);

        const file = await original.export();
        const transactions = (file.pay as { transactions: { id: string; status: string; settles_at: string; settled_at: string | null; failure_code: string | null }[] }).transactions;
        expect(transactions.map(({ status, settles_at: due, settled_at: settled, failure_code: code }) => [status, due, settled, code])).to.equal([
            ['completed', '2030-01-01T00:00:00.000Z', '2030-01-01T00:00:00.000Z', null],
            ['pending', '2030-01-03T00:00:00.000Z', null, null],
            ['completed', '2030-01-02T00:00:00.000Z', '2030-01-02T00:00:00.000Z', null],
            ['pending', '2030-01-03T00:00:00.000Z', null, null],
            ['completed', '2030-01-02T00:00:00.000Z', '2030-01-02T00:00:00.000Z', null],
            ['pending', '2030-01-04T00:00:00.000Z', null, null]
        ]);
        expect((file.pay as { wallets: { balances: unknown[] }[] }).wallets[0]!.balances).to.equal([{ asset: 'USD', amount: 1001, pending_in: 799, pending_out: 199 }]);

        const copy = await kit.instance({ fixture: file });
        expect(await copy.export()).to.equal(file);
        const until = new Date('2030-01-05T00:00:00.000Z');
        const [settledOriginal, settledCopy] = [await (await timedPay(kit.server, original.id)).applyDue(until, 10), await (await timedPay(kit.server, copy.id)).applyDue(until, 10)];
        expect(settledCopy).to.equal(settledOriginal);
        // The bank-transfer deposit of 299 and withdrawal of 199 come back returned, in the copy as in the original.
        expect(settledCopy.filter(({ type }) => type === 'pay.transaction.failed').map(({ id }) => id).sort()).to.equal([returned.id, transactions[3]!.id].sort());
        expect(await copy.export()).to.equal(await original.export());
        expect(body<{ balances: unknown[] }>(await copy.inject({ url: '/v1/pay/wallet', headers: copy.auth('ana') })).balances).to.equal([{ asset: 'USD', amount: 1700, pending_in: 0, pending_out: 0 }]);
        await Promise.all([original.close(), copy.close()]);
    });

    it('walks settled bank transfers at their settles_at: a withdrawal spends a deposit only once it completed', async () => {

        const wallet = { id: 'w-ana', owner_id: 'ana', created_at: '2030-01-01T00:00:00.000Z' };
        const move = (id: string, type: string, provider: string, amount: number, created: string, extra: object = {}) => ({ id, wallet_id: 'w-ana', type, asset: 'USD', amount, provider_id: provider, created_at: created, ...extra });
        const settled = [
            move('t-1', 'deposit', 'sandbox', 1000, '2030-01-01T00:00:00.000Z'),
            move('t-2', 'deposit', 'bank-transfer', 500, '2030-01-01T01:00:00.000Z'),
            move('t-3', 'withdrawal', 'bank-transfer', 600, '2030-01-01T00:00:00.000Z'),
            move('t-4', 'withdrawal', 'bank-transfer', 199, '2030-01-01T02:00:00.000Z', { status: 'failed', failure_code: 'returned' })
        ];

        // By 2030-01-04 the deposit of 500 settled (01-03T01:00) and the returned 199 came back (01-02T02:00): 900 is there.
        const t = await kit.instance({ seed: 'none', fixture: { pay: { wallets: [wallet], transactions: [...settled, move('t-5', 'withdrawal', 'sandbox', 900, '2030-01-04T00:00:00.000Z')] } } });
        expect(body(await t.inject({ url: '/v1/pay/wallet', headers: t.auth('ana') }))).to.equal({ ...wallet, balances: [{ asset: 'USD', amount: 0, pending_in: 0, pending_out: 0 }] });
        expect((await t.export()).pay).to.include({ transactions: [
            { ...settled[0], status: 'completed', settles_at: '2030-01-01T00:00:00.000Z', settled_at: '2030-01-01T00:00:00.000Z', failure_code: null, metadata: {} },
            { ...settled[2], status: 'completed', settles_at: '2030-01-02T00:00:00.000Z', settled_at: '2030-01-02T00:00:00.000Z', failure_code: null, metadata: {} },
            { ...settled[1], status: 'completed', settles_at: '2030-01-03T01:00:00.000Z', settled_at: '2030-01-03T01:00:00.000Z', failure_code: null, metadata: {} },
            { ...settled[3], status: 'failed', settles_at: '2030-01-02T02:00:00.000Z', settled_at: '2030-01-02T02:00:00.000Z', failure_code: 'returned', metadata: {} },
            { ...move('t-5', 'withdrawal', 'sandbox', 900, '2030-01-04T00:00:00.000Z'), status: 'completed', settles_at: '2030-01-04T00:00:00.000Z', settled_at: '2030-01-04T00:00:00.000Z', failure_code: null, metadata: {} }
        ] });
        await t.close();

        // A day earlier the deposit is still on its way: 400 is spendable, not 900.
        const early = { pay: { wallets: [wallet], transactions: [...settled, move('t-5', 'withdrawal', 'sandbox', 900, '2030-01-03T00:00:00.000Z')] } };
        const error = expectError(await kit.server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(kit.server), payload: { seed: 'none', fixture: early } }), 400, 'invalid_fixture', 'fixture.pay.transactions[4].amount');
        expect(error.message).to.match(/Your USD balance is 400, less than the 900 to withdraw \(insufficient_funds, as of this transaction\)/);
    });

    it('settles a transaction through a provider it does not know at once, which the fixture check refuses', () => {

        expect(settlementFields({ provider_id: 'mattress', type: 'deposit', status: 'completed', created_at: '2030-01-01T00:00:00.000Z' })).to.equal({
            status: 'completed', settles_at: '2030-01-01T00:00:00.000Z', settled_at: '2030-01-01T00:00:00.000Z', failure_code: null
        });
    });

    it('loads a fixture of moves without ids or times, as listed, each time it is made into an instance', async () => {

        const fixture = { pay: { wallets: [{ id: 'w-ana', owner_id: 'ana' }], transactions: [100, -50].map((amount) => ({ wallet_id: 'w-ana', type: amount > 0 ? 'deposit' : 'withdrawal', asset: 'USD', amount: Math.abs(amount), provider_id: 'sandbox' })) } };
        const admin = adminBearer(kit.server);
        for (let i = 0; i < 30; ++i) {
            // Every record takes the frozen instant and a random id.
            const made = await kit.server.inject({ method: 'POST', url: '/_instances', headers: admin, payload: { seed: 'none', clock: '2030-01-01T00:00:00.000Z', fixture } });
            expect(made.statusCode, made.payload).to.equal(201);
            const copy = body<{ id: string }>(made).id;
            const wallet = await kit.server.inject({ url: `/i/${copy}/v1/pay/wallet`, headers: bearer(kit.server, 'ana') });
            expect(body<{ balances: unknown[] }>(wallet).balances, `instance ${i}`).to.equal([{ asset: 'USD', amount: 50, pending_in: 0, pending_out: 0 }]);
            await kit.server.inject({ method: 'DELETE', url: `/_instances/${copy}`, headers: admin });
        }
    });

    const wallet = { id: 'w-ana', owner_id: 'ana', created_at: '2030-01-01T00:00:00.000Z' };
    const deposit = { id: 't-1', wallet_id: 'w-ana', type: 'deposit', asset: 'USD', amount: 500, provider_id: 'sandbox', created_at: '2030-01-02T00:00:00.000Z' };
    const later = (transaction: object, id: string, minutes: number) => ({ ...transaction, id, created_at: `2030-01-02T00:${String(minutes).padStart(2, '0')}:00.000Z` });
    const booking = { vehicle_id: '1a1aec40-05e3-4128-a86c-6981ec6a3eb5', pickup_location_id: '8a5c2440-7943-4c0d-bdf4-9777cd05095e', dropoff_location_id: '8a5c2440-7943-4c0d-bdf4-9777cd05095e', pickup_at: '2030-05-01T00:00:00Z', return_at: '2030-05-03T00:00:00Z', customer_id: 'ana' };
    const refusals: [string, object, string, RegExp, boolean?][] = [
        ['a newer format', { localgate: { format: 2, whatever: true } }, 'localgate.format', /localgate.format 2 is newer than this localgate reads \(format 1\)/],
        ['a format that is no number', { localgate: { format: 'one' } }, 'localgate.format', /localgate.format: format must be a number/],
        ['a format that is no integer', { localgate: { format: 1.5 } }, 'localgate.format', /localgate.format: format must be an integer/],
        ['a namespace named as an inherited property', { localgate: { format: 1, migrations: { constructor: ['001_x'] } } }, 'localgate.migrations.constructor', /no namespace of that name keeps data/],
        ['a header that is no object', { localgate: 1 }, 'localgate', /must be of type object/],
        ['a namespace no migration names', { localgate: { format: 1, migrations: { shop: [] } } }, 'localgate.migrations.shop', /no namespace of that name keeps data/],
        ['a migration this version does not ship', { localgate: { format: 1, migrations: { logistics: ['001_vehicles_locations_drivers_bookings', '003_fleet'] } } }, 'localgate.migrations.logistics', /"003_fleet" is not a migration this localgate ships: the file comes from a newer schema/],
        ['an id mode it does not know', { localgate: { format: 1, instance: { clock: null, ids: 'counting', id_counter: 0 } } }, 'localgate.instance.ids', /must be one of/],
        ['pay records for an instance without pay', { pay: { wallets: [wallet] } }, 'pay', /no pay namespace ready/, false],
        ['a transaction of a wallet the fixture does not hold', { pay: { transactions: [deposit] } }, 'pay.transactions[0].wallet_id', /"w-ana" names no wallet of this fixture/],
        ['balances that are not what the transactions add up to', { pay: { wallets: [{ ...wallet, balances: [{ asset: 'USD', amount: 400 }] }], transactions: [deposit] } }, 'pay.wallets[0].balances', /is not what its transactions add up to: \[{"asset":"USD","amount":500,"pending_in":0,"pending_out":0}\]/],
        ['a withdrawal of more than was deposited', { pay: { wallets: [wallet], transactions: [deposit, later({ ...deposit, type: 'withdrawal', amount: 600 }, 't-2', 1)] } }, 'pay.transactions[1].amount', /Your USD balance is 500, less than the 600 to withdraw \(insufficient_funds, as of this transaction\)/],
        ['a withdrawal made before the deposit that covers it', { pay: { wallets: [wallet], transactions: [later(deposit, 't-1', 5), later({ ...deposit, type: 'withdrawal', amount: 100 }, 't-2', 1)] } }, 'pay.transactions[1].amount', /Your USD balance is 0, less than the 100 to withdraw/],
        ['a transaction through an unknown provider', { pay: { wallets: [wallet], transactions: [{ ...deposit, provider_id: 'mattress' }] } }, 'pay.transactions[0].provider_id', /provider_id refers to no existing provider/],
        ['a transaction through the disabled provider', { pay: { wallets: [wallet], transactions: [{ ...deposit, provider_id: 'legacy-bank' }] } }, 'pay.transactions[0].provider_id', /Provider legacy-bank is disabled and moves no money: use an active provider \(provider_unavailable, as of this transaction\)/],
        ['a transaction of an asset the provider does not move', { pay: { wallets: [wallet], transactions: [{ ...deposit, asset: 'CHF' }] } }, 'pay.transactions[0].asset', /Provider sandbox does not support CHF: GET \/v1\/pay\/gateway\/providers lists the assets of each provider \(asset_not_supported, as of this transaction\)/],
        ['a deposit of a planned token', { pay: { wallets: [wallet], transactions: [{ ...deposit, asset: 'NST' }] } }, 'pay.transactions[0].asset', /Token NST is in stage planned: a deposit needs stage pilot or live/],
        ['a transaction before its wallet was opened', { pay: { wallets: [wallet], transactions: [{ ...deposit, created_at: '2029-12-31T23:59:59.999Z' }] } }, 'pay.transactions[0].created_at', /2029-12-31T23:59:59.999Z is before its wallet was opened \(2030-01-01T00:00:00.000Z\)/],
        ['a transaction id used twice', { pay: { wallets: [wallet], transactions: [deposit, later({ ...deposit, type: 'withdrawal' }, 't-1', 1)] } }, 'pay.transactions[1].id', /"t-1" is already the id of transactions\[0\]: no two records of transactions share it/],
        ['a business id used twice', { commerce: { businesses: [{ id: 'b-1', name: 'A', category: 'C', city: 'X', phone: '1' }, { id: 'b-1', name: 'B', category: 'C', city: 'X', phone: '2' }] } }, 'commerce.businesses[1].id', /"b-1" is already the id of businesses\[0\]/],
        ['balances given without the transactions that make them', { pay: { wallets: [{ ...wallet, balances: [{ asset: 'USD', amount: 1000 }] }] } }, 'pay.wallets[0].balances', /\[{"asset":"USD","amount":1000,"pending_in":0,"pending_out":0}\] is not what its transactions add up to: \[\]/],
        ['two wallets of one owner', { pay: { wallets: [wallet, { ...wallet, id: 'w-two' }] } }, 'pay.wallets[1].owner_id', /"ana" is already the owner_id of wallets\[0\]: no two records of wallets share it/],
        ['two drivers with one licence', { logistics: { drivers: [{ name: 'A', phone: '1', license_number: 'L1' }, { name: 'B', phone: '2', license_number: 'L1' }] } }, 'logistics.drivers[1].license_number', /"L1" is already the license_number of drivers\[0\]/],
        ['two scam reports of one reporter about one target', { commerce: { scam_reports: [{ target_type: 'business', target_id: bakery, reason: 'Odd', reporter_id: 'r' }, { target_type: 'business', target_id: bakery, reason: 'Again', reporter_id: 'r' }] } }, 'commerce.scam_reports[1].target_type', /target_type, target_id, reporter_id \["business","d851fadb-03ca-5a24-ba16-c15cce19933b","r"\] are already those of scam_reports\[0\]/],
        ['a transaction of no status the API gives', { pay: { wallets: [wallet], transactions: [{ ...deposit, status: 'settled' }] } }, 'pay.transactions[0].status', /must be one of \[pending, completed, failed\]/],
        ['a pending transaction through a provider that settles at once', { pay: { wallets: [wallet], transactions: [{ ...deposit, status: 'pending' }] } }, 'pay.transactions[0].status', /A deposit through provider sandbox settles at once: it is never pending/],
        ['a settles_at other than the provider\'s terms give', { pay: { wallets: [wallet], transactions: [{ ...deposit, provider_id: 'bank-transfer', status: 'pending', settles_at: '2030-01-03T00:00:00.000Z' }] } }, 'pay.transactions[0].settles_at', /2030-01-03T00:00:00.000Z is not when a deposit through provider bank-transfer made at 2030-01-02T00:00:00.000Z settles: 2030-01-04T00:00:00.000Z/],
        ['a settled transaction whose outcome is not the provider\'s', { pay: { wallets: [wallet], transactions: [{ ...deposit, provider_id: 'bank-transfer', amount: 599 }] } }, 'pay.transactions[0].status', /A deposit of 599 through provider bank-transfer settles failed, not completed/],
        ['a pending transaction with a settled_at', { pay: { wallets: [wallet], transactions: [{ ...deposit, provider_id: 'bank-transfer', status: 'pending', settled_at: '2030-01-04T00:00:00.000Z' }] } }, 'pay.transactions[0].settled_at', /A pending transaction has not settled: settled_at must be null/],
        ['a settled_at other than its settles_at', { pay: { wallets: [wallet], transactions: [{ ...deposit, provider_id: 'bank-transfer', settled_at: '2030-01-05T00:00:00.000Z' }] } }, 'pay.transactions[0].settled_at', /A transaction settles when it is due: settled_at must be its settles_at, 2030-01-04T00:00:00.000Z/],
        ['a failed transaction without its failure_code', { pay: { wallets: [wallet], transactions: [{ ...deposit, provider_id: 'bank-transfer', amount: 599, status: 'failed' }] } }, 'pay.transactions[0].failure_code', /A failed transaction carries why: failure_code must be returned/],
        ['a completed transaction with a failure_code', { pay: { wallets: [wallet], transactions: [{ ...deposit, failure_code: 'returned' }] } }, 'pay.transactions[0].failure_code', /Only a failed transaction carries a failure_code: it must be null/],
        ['a card deposit the card provider declines', { pay: { wallets: [wallet], transactions: [{ ...deposit, provider_id: 'card', amount: 502 }] } }, 'pay.transactions[0].amount', /Provider card declined this deposit: the card was refused, nothing moved \(card_declined, as of this transaction\)/],
        ['a withdrawal of money a pending deposit has not brought in yet', { pay: { wallets: [wallet], transactions: [{ ...deposit, provider_id: 'bank-transfer', status: 'pending' }, later({ ...deposit, type: 'withdrawal', amount: 100 }, 't-2', 1)] } }, 'pay.transactions[1].amount', /Your USD balance is 0, less than the 100 to withdraw/],
        ['a booking of an unknown vehicle', { logistics: { bookings: [{ ...booking, vehicle_id: 'v-none' }] } }, 'logistics.bookings[0].vehicle_id', /"v-none" names no record of vehicles/],
        ['a booking that returns before its pickup', { logistics: { bookings: [{ ...booking, return_at: '2030-04-01T00:00:00Z' }] } }, 'logistics.bookings[0].return_at', /must be after pickup_at/],
        ['a booking of no status the API gives', { logistics: { bookings: [{ ...booking, status: 'pending' }] } }, 'logistics.bookings[0].status', /must be one of \[confirmed, active, completed, cancelled\]/],
        ['two confirmed bookings of one vehicle that overlap', { logistics: { bookings: [{ ...booking, id: 'b-1' }, { ...booking, id: 'b-2', pickup_at: '2030-05-02T23:59:59Z', return_at: '2030-05-04T00:00:00Z' }] } }, 'logistics.bookings[1].pickup_at', /\[2030-05-02T23:59:59.000Z, 2030-05-04T00:00:00.000Z\) overlaps "b-1", another confirmed record of vehicle_id/],
        ['a booking that overlaps a completed one of its vehicle', { logistics: { bookings: [{ ...booking, id: 'b-1', status: 'completed' }, { ...booking, id: 'b-2', status: 'confirmed' }] } }, 'logistics.bookings[1].pickup_at', /overlaps "b-1", another completed record of vehicle_id/],
        ['an offer of no status the API gives', { commerce: { offers: [{ product_id: 'p', title: 'T', price: 1, currency: 'USD', valid_from: '2030-01-01T00:00:00Z', valid_until: '2030-02-01T00:00:00Z', status: 'withdrawn' }] } }, 'commerce.offers[0].status', /must be one of \[valid, expired\]/]
    ];

    it('refuses a bad export file or record with a 400 naming the field, and makes nothing', async () => {

        const admin = adminBearer(kit.server);
        const live = async () => body<{ total: number }>(await kit.server.inject({ url: '/_instances', headers: admin })).total;
        const count = await live();
        for (const [what, fixture, field, message, pay = true] of refusals) {
            const error = expectError(await kit.server.inject({ method: 'POST', url: '/_instances', headers: admin, payload: { pay, fixture } }), 400, 'invalid_fixture', `fixture.${field}`);
            expect(error.message, what).to.match(message);
            expect(await live(), what).to.equal(count);
        }
    });

    it('reads a file of an older schema, a header alone, and wallets given without their balances', async () => {

        const older = { localgate: { format: 1, migrations: { logistics: ['001_vehicles_locations_drivers_bookings'] } }, logistics: { bookings: [booking] } };
        const t = await kit.instance({ seed: 'demo', fixture: older, pay: true });
        expect(body<{ total: number }>(await t.inject({ url: '/v1/logistics/bookings', headers: t.auth('ana') })).total).to.equal(1);

        const alone = await kit.instance({ seed: 'none', fixture: { localgate: { format: 1 } } });
        expect((await alone.export()).commerce).to.equal({ businesses: [], products: [], offers: [], inquiries: [], scam_reports: [] });

        const wallets = await kit.instance({ seed: 'none', pay: true, fixture: { pay: { wallets: [wallet], transactions: [deposit, { ...deposit, id: 't-2', asset: 'MIT', amount: 40 }, { ...deposit, id: 't-3', type: 'withdrawal', amount: 100 }] } } });
        expect(body(await wallets.inject({ url: '/v1/pay/wallet', headers: wallets.auth('ana') }))).to.equal({ ...wallet, balances: [{ asset: 'MIT', amount: 40, pending_in: 0, pending_out: 0 }, { asset: 'USD', amount: 400, pending_in: 0, pending_out: 0 }] });
        await Promise.all([t.close(), alone.close(), wallets.close()]);
    });
});
