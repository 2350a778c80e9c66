import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import type { Server } from '@hapi/hapi';
import Lab from '@hapi/lab';

import type { Options } from '../lib';
import { FixtureError } from '../lib/fixtures';
import { payProviders } from '../lib/namespaces/pay/fixture';
import { durationText } from '../lib/durations';
import type { NamespacesDataSet } from '../lib/storage/data-set';
import { provisionPay, type PayCredentials } from '../lib/storage';
import { createTestKit, type TestKit } from '../lib/testing';
import { frozenMovesExport, readWorld, worldFixture, writeWorld } from './helpers/world-records';
import { engineServer, engines, freshDatabase } from './helpers/postgres';
import { bearer, body, tempDir, testServer } from './helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


function paySettings(credentials: PayCredentials): Options['pay'] {

    return { url: credentials.PAY_DB_URL, publishableKey: credentials.PAY_DB_PUBLISHABLE_KEY, secretKey: credentials.PAY_DB_SECRET_KEY };
}


/** A default data set on the engine, with pay provisioned there too (a file beside it on SQLite). */
async function provisionedServer(engine: 'sqlite' | 'postgres', seed: boolean): Promise<Server> {

    if (engine === 'sqlite') {
        return engineServer(engine, { seed, pay: paySettings(await provisionPay(Path.join(tempDir(), 'pay.db'))) });
    }

    const pay = await freshDatabase();
    const server = await engineServer(engine, { seed, pay: paySettings(await provisionPay(pay.url, { poolMax: 4, connectTimeoutMs: 5000, statementTimeoutMs: 10_000 })) });
    server.ext('onPostStop', () => pay.drop());
    return server;
}


for (const engine of engines) {

    describe(`the default data set on ${engine}, exported and loaded back`, { timeout: 60_000 }, () => {

        let kit: TestKit;

        before(async () => {

            kit = await createTestKit();
        });

        after(() => kit.close());

        it('reads the same in a new data set of the engine and in an instance', { timeout: 40_000 }, async () => {

            const original = await provisionedServer(engine, true);
            await original.app.localgate.data.loadFixture(worldFixture, 'test');
            const auth = (subject: string) => bearer(original, subject);
            await writeWorld((request) => original.inject(request), auth, () => undefined);
            const file = await original.app.localgate.data.exportRecords();

            const copy = await provisionedServer(engine, false);
            expect(await copy.app.localgate.data.loadFixture(file, 'export')).to.equal({ commerce: 78, logistics: 27, pay: 8 });
            expect(await copy.app.localgate.data.exportRecords()).to.equal(file);
            const instance = await kit.instance({ seed: 'none', pay: true, fixture: file });

            const seen = await readWorld((request) => original.inject(request), auth, file);
            expect(await readWorld((request) => copy.inject(request), (subject) => bearer(copy, subject), file)).to.equal(seen);
            expect(await readWorld((request) => instance.inject(request), (subject) => instance.auth(subject), file)).to.equal(seen);

            // Loading the file again adds nothing: every id is there already.
            expect(await copy.app.localgate.data.loadFixture(file, 'export')).to.equal({ commerce: 0, logistics: 0, pay: 0 });
            expect(await copy.app.localgate.data.exportRecords()).to.equal(file);
            await instance.close();
            await original.stop();
            await copy.stop();
        });

        it('refuses a booking that overlaps a confirmed one already stored, naming the record', async () => {

            const server = await engineServer(engine);
            const booking = worldFixture.logistics.bookings[0]!;
            await server.app.localgate.data.loadFixture({ logistics: { bookings: [{ ...booking, status: 'confirmed' }] } }, 'first');
            await expect(server.app.localgate.data.loadFixture({ logistics: { bookings: [{ ...booking, id: 'b-later', status: 'confirmed', pickup_at: '2030-03-02T09:00:00Z', return_at: '2030-03-05T09:00:00Z' }] } }, 'second'))
                .to.reject('second: logistics.bookings[0].pickup_at: [2030-03-02T09:00:00.000Z, 2030-03-05T09:00:00.000Z) overlaps "b-cancelled", another confirmed record of vehicle_id "1a1aec40-05e3-4128-a86c-6981ec6a3eb5"');

            // Cancelled, it holds no slot.
            expect(await server.app.localgate.data.loadFixture({ logistics: { bookings: [{ ...booking, id: 'b-off', status: 'cancelled' }] } }, 'third')).to.equal({ logistics: 1 });
            await server.stop();
        });

        it('refuses records that clash with stored ones, naming the record and field, and stores none of the load', async () => {

            const server = await provisionedServer(engine, false);
            const { data } = server.app.localgate;
            const wallet = { id: 'w-stored', owner_id: 'stored', created_at: '2030-01-01T00:00:00.000Z' };
            const move = (id: string, type: string, amount: number, minute: number) => ({ id, wallet_id: 'w-stored', type, asset: 'USD', amount, provider_id: 'sandbox', created_at: `2030-01-02T00:0${minute}:00.000Z` });
            const driver = { id: 'd-stored', name: 'Dee', phone: '1', license_number: 'STORED-1', created_at: '2030-01-01T00:00:00.000Z' };
            expect(await data.loadFixture({ logistics: { drivers: [driver] }, pay: { wallets: [wallet], transactions: [move('t-in', 'deposit', 500, 1), move('t-out', 'withdrawal', 400, 2)] } }, 'first')).to.equal({ logistics: 1, pay: 3 });
            const stored = await data.exportRecords();

            const clashes: [object, string][] = [
                [{ pay: { wallets: [{ ...wallet, id: 'w-other' }] } }, 'pay.wallets[0].owner_id: another stored record of wallets already has this owner_id'],
                [{ logistics: { drivers: [{ ...driver, id: 'd-other' }] } }, 'logistics.drivers[0].license_number: another stored record of drivers already has this license_number'],
                [{ pay: { wallets: [{ ...wallet, owner_id: 'someone' }] } }, 'pay.wallets[0].id: "w-stored" is already the id of a stored record of wallets with other contents'],
                [{ pay: { wallets: [wallet], transactions: [move('t-in', 'deposit', 700, 1)] } }, 'pay.transactions[0].id: "t-in" is already the id of a stored record of transactions with other contents'],
                // The file's own walk allows the withdrawal (500 in, 500 out); what is stored holds 100 only.
                [{ pay: { wallets: [wallet], transactions: [move('t-in', 'deposit', 500, 1), move('t-more', 'withdrawal', 500, 3)] } }, 'pay.transactions[1]: the stored data refuses this record (it breaks a rule of transactions, or of what it moves)']
            ];
            for (const [fixture, message] of clashes) {
                await expect(data.loadFixture({ commerce: { businesses: [{ id: 'b-new', name: 'New', category: 'C', city: 'X', phone: '1' }] }, ...fixture }, 'second'), message).to.reject(FixtureError, `second: ${message}`);
                expect(await data.exportRecords(), message).to.equal(stored);
            }

            // The same records again are left as they are.
            expect(await data.loadFixture({ pay: { wallets: [wallet], transactions: [move('t-in', 'deposit', 500, 1)] } }, 'again')).to.equal({ pay: 0 });
            await server.stop();
        });

        it('posts moves made at one instant deposits first, in the check and in the ledger, whatever their ids', { timeout: 20_000 }, async () => {

            const server = await provisionedServer(engine, false);
            const { data } = server.app.localgate;

            // Listed and numbered withdrawal first: at one instant the deposit still goes first, or the ledger refuses.
            const at = '2030-01-02T00:00:00.000Z';
            const move = (id: string, type: string, amount: number) => ({ id, wallet_id: 'w-ana', type, asset: 'USD', amount, provider_id: 'sandbox', created_at: at });
            expect(await data.loadFixture({ pay: { wallets: [{ id: 'w-ana', owner_id: 'ana', created_at: at }], transactions: [move('t-1', 'withdrawal', 50), move('t-2', 'deposit', 100)] } }, 'listed')).to.equal({ pay: 3 });

            // 30 exports of a frozen clock, each with new random ids: every one loads (a coin toss would fail one).
            const owners = Array.from({ length: 30 }, (_, i) => `owner-${i}`);
            for (const owner of owners) {
                expect(await data.loadFixture(await frozenMovesExport(kit, owner), owner), owner).to.equal({ commerce: 0, logistics: 0, pay: 3 });
            }

            const { wallets } = (await data.exportRecords() as { pay: { wallets: { owner_id: string; balances: unknown[] }[] } }).pay;
            expect(wallets.map(({ owner_id: owner, balances }) => [owner, balances]).sort()).to.equal(['ana', ...owners].map((owner) => [owner, [{ asset: 'USD', amount: 50, pending_in: 0, pending_out: 0 }]]).sort());
            await server.stop();
        });

        it('refuses nothing but the engine\'s own failure when a write fails for another reason', async () => {

            const server = await engineServer(engine, { seed: false });
            const database = (server.app.localgate.data as NamespacesDataSet).database('commerce');
            const rows = [{ collection: 'nowhere', rows: [{ where: 'commerce.nowhere[0]', origin: 'test', row: { id: 'x' }, references: [] }] }];
            const stored = database.transactions === 'waiting' ? database.storeFixture(rows, () => Promise.resolve()) : Promise.resolve().then(() => database.storeFixture(rows, () => undefined));
            const err = await expect(stored).to.reject() as Error;
            expect(err).to.not.be.an.instanceof(FixtureError);
            expect(err.message).to.match(/nowhere/);
            await server.stop();
        });

        it('moves money through the providers, assets and token stages the migrations ship, as a fixture is checked', async () => {

            const server = await provisionedServer(engine, false);
            const listed = body<{ data: { id: string; assets: string[]; status: string; supports_deposit: boolean; supports_withdrawal: boolean; settlement: object }[] }>(await server.inject({ url: '/v1/pay/gateway/providers', headers: bearer(server, 'ana') })).data;
            const tokens = body<{ data: { symbol: string; stage: string }[] }>(await server.inject({ url: '/v1/pay/tokens', headers: bearer(server, 'ana') })).data;
            const stageOf = Object.fromEntries(tokens.map((token) => [token.symbol, token.stage]));
            // The API words the settlement terms as durations; how a provider fails it shows by the moves the tests of pay make.
            const checked = Object.fromEntries(Object.entries(payProviders).map(([id, { deposit_settlement_s: deposit, withdrawal_settlement_s: withdrawal, failure_mode: _mode, ...terms }]) => [id, {
                ...terms, settlement: { deposit: durationText(deposit), withdrawal: durationText(withdrawal) }
            }]));
            expect(Object.fromEntries(listed.map(({ id, assets, status, supports_deposit: deposit, supports_withdrawal: withdrawal, settlement }) => [id, {
                status, supports_deposit: deposit, supports_withdrawal: withdrawal, assets: Object.fromEntries(assets.map((asset): [string, string | null] => [asset, stageOf[asset] ?? null])), settlement
            }]))).to.equal(checked);
            await server.stop();
        });

        it('loads a seed file on start only while the namespaces it fills hold no records, pay included', async () => {

            const dir = tempDir();
            const file = Path.join(dir, 'seed.json');
            // Pay first: its transaction is the outermost, the one that finds its records on the next start.
            Fs.writeFileSync(file, JSON.stringify({ pay: { wallets: [{ owner_id: 'ana' }] }, commerce: { businesses: [{ name: 'Kiosk', category: 'K', city: 'X', phone: '1' }] } }));
            const databases = engine === 'sqlite' ? [] : [await freshDatabase(), await freshDatabase()];
            const pay = paySettings(await provisionPay(engine === 'sqlite' ? Path.join(dir, 'pay.db') : databases[1]!.url, { poolMax: 4, connectTimeoutMs: 5000, statementTimeoutMs: 10_000 }));
            const options: Options = engine === 'sqlite' ? { dataDir: dir, seed: file, pay } : { databaseUrl: databases[0]!.url, database: { poolMax: 4 }, seed: file, pay };
            for (const start of [1, 2, 3]) {
                const server = await testServer(options);
                const { commerce, pay: records } = await server.app.localgate.data.exportRecords() as { commerce: { businesses: unknown[] }; pay: { wallets: unknown[] } };
                expect([commerce.businesses.length, records.wallets.length], `start ${start}`).to.equal([1, 1]);
                await server.stop();
            }

            await Promise.all(databases.map((database) => database.drop()));
        });

        it('loads a seed file once when two starts seed one set of databases at the same time', async () => {

            const dir = tempDir();
            const file = Path.join(dir, 'seed.json');
            // Records without ids: loaded twice, they would be there twice, under new ids.
            const location = { name: 'Quay', address: '1 Quay Street', city: 'Harbourside', latitude: 50.6, longitude: -3.4 };
            Fs.writeFileSync(file, JSON.stringify({ commerce: { businesses: [{ name: 'Kiosk', category: 'K', city: 'X', phone: '1' }] }, logistics: { locations: [location] } }));
            const database = engine === 'sqlite' ? null : await freshDatabase();
            const options: Options = database ? { databaseUrl: database.url, database: { poolMax: 4 }, seed: file } : { dataDir: dir, seed: file };
            const servers = await Promise.all([testServer(options), testServer(options)]);
            for (const server of servers) {
                const { commerce, logistics } = await server.app.localgate.data.exportRecords() as { commerce: { businesses: unknown[] }; logistics: { locations: unknown[] } };
                expect([commerce.businesses.length, logistics.locations.length]).to.equal([1, 1]);
            }

            await Promise.all(servers.map((server) => server.stop()));
            await database?.drop();
        });

        it('loads none of a seed file when a namespace it fills, but the first, holds records already', async () => {

            const dir = tempDir();
            const file = Path.join(dir, 'seed.json');
            Fs.writeFileSync(file, JSON.stringify({ commerce: { businesses: [{ name: 'Kiosk', category: 'K', city: 'X', phone: '1' }] }, logistics: { drivers: [{ name: 'Dee', phone: '1', license_number: 'SEED-1' }] } }));
            const database = engine === 'sqlite' ? null : await freshDatabase();
            const options: Options = database ? { databaseUrl: database.url, database: { poolMax: 4 } } : { dataDir: dir };
            const first = await testServer({ ...options, seed: false });
            await first.app.localgate.data.loadFixture({ logistics: { drivers: [{ id: 'd-there', name: 'Ann', phone: '2', license_number: 'THERE-1', created_at: '2030-01-01T00:00:00.000Z' }] } }, 'before');
            await first.stop();

            // The commerce rows went in first, inside the transaction that rolled back when logistics found its driver.
            const server = await testServer({ ...options, seed: file });
            const { commerce, logistics } = await server.app.localgate.data.exportRecords() as { commerce: { businesses: unknown[] }; logistics: { drivers: { id: string }[] } };
            expect([commerce.businesses, logistics.drivers.map(({ id }) => id)]).to.equal([[], ['d-there']]);
            await server.stop();
            await database?.drop();
        });

        it('exports no pay, and refuses pay records, while pay is not provisioned', async () => {

            // Pay's settings name a database of the engine that was never provisioned.
            const pay = engine === 'sqlite' ? { url: Path.join(tempDir(), 'pay.db') } : await freshDatabase();
            const server = await engineServer(engine, { seed: false, pay: { url: pay.url, publishableKey: 'pk_local_unknown', secretKey: 'sk_local_unknown' } });
            const file = await server.app.localgate.data.exportRecords();
            expect(Object.keys(file)).to.equal(['localgate', 'commerce', 'logistics']);
            await expect(server.app.localgate.data.loadFixture({ pay: { wallets: [] } }, 'file')).to.reject(/^file: pay: this data set has no pay namespace ready/);
            await server.stop();
            await (pay as { drop?: () => Promise<void> }).drop?.();
        });
    });
}
