import Path from 'node:path';

import Code from '@hapi/code';
import type { Server } from '@hapi/hapi';
import Lab from '@hapi/lab';

import type { Options } from '../lib';
import { provisionPay, type PayCredentials } from '../lib/storage';
import { createTestKit, type TestKit } from '../lib/testing';
import { readWorld, worldFixture, writeWorld } from './helpers/world';
import { engineServer, engines, freshDatabase } from './helpers/postgres';
import { bearer, tempDir } from './helpers/server';


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

    describe(`the default data set on ${engine}, exported and loaded back`, () => {

        let kit: TestKit;

        before(async () => {

            kit = await createTestKit();
        });

        after(() => kit.close());

        it('reads the same in a new data set of the engine and in an instance', async () => {

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
