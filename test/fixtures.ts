import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import type { Server } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { FixtureError, readFixtureFile } from '../lib/fixtures';
import { seedDemo } from '../lib/storage/sqlite/fixtures';
import { namespaceImage } from '../lib/storage/sqlite/images';
import { closeDatabase, openCopy } from '../lib/storage/sqlite/open';
import { body, type List, tempDir, testServer } from './helpers/server';
import { weatherNamespace } from '../lib/namespaces/weather';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


const business = { id: 'b-pier', name: 'Pier Kiosk', category: 'Kiosk', city: 'Harbourside', phone: '+1 207 555 0199' };
const vehicle = { id: 'v-van', make: 'Ford', model: 'Transit', year: 2021, seats: 3, daily_rate: 70, currency: 'GBP' };


describe('fixtures', () => {

    let server: Server;


    before(async () => {

        server = await testServer({ seed: false });
    });

    after(async () => {

        await server.stop();
    });

    it('loads every collection a fixture can fill, in the API\'s shape, and skips records whose id exists', async () => {

        const fixture = {
            commerce: {
                businesses: [business],
                products: [{ id: 'p-cone', name: 'Cone', description: 'Vanilla', price: 2.5, currency: 'USD', business_id: 'b-pier', created_by: 'ana', created_at: '2025-01-01T00:00:00Z' }],
                offers: [{ id: 'o-two', product_id: 'p-cone', title: 'Two cones', price: 4, currency: 'USD', valid_from: '2025-06-01T00:00:00Z', valid_until: '2025-09-01T00:00:00Z' }],
                inquiries: [{ product_id: 'p-cone', message: 'Vegan?', owner_id: 'ben' }, { business_id: 'b-pier', message: 'Open late?', owner_id: 'ben' }],
                scam_reports: [{ target_type: 'business', target_id: 'b-pier', reason: 'Never opens', reporter_id: 'cat' }, { target_type: 'offer', target_id: 'o-two', reason: 'Fake', reporter_id: 'cat' }]
            },
            logistics: {
                locations: [{ id: 'quay', name: 'Quay', address: '1 Quay Street', city: 'Harbourside', latitude: 50.6, longitude: -3.4 }],
                vehicles: [vehicle, { ...vehicle, id: 'v-old', is_available: false }],
                drivers: [{ name: 'Dee', phone: '1', license_number: 'L1', vehicle_id: 'v-van' }, { name: 'Eve', phone: '2', license_number: 'L2', is_active: false }]
            }
        };

        expect(await server.app.localgate.data.loadFixture(fixture, 'test')).to.equal({ commerce: 7, logistics: 5 });
        expect(await server.app.localgate.data.loadFixture({ commerce: { businesses: [business] }, logistics: { vehicles: [vehicle] } }, 'test')).to.equal({ commerce: 0, logistics: 0 });

        expect(body(await server.inject('/v1/commerce/products/p-cone'))).to.equal({
            id: 'p-cone', name: 'Cone', description: 'Vanilla', price: 2.5, currency: 'USD', business_id: 'b-pier', created_by: 'ana', created_at: '2025-01-01T00:00:00.000Z', scam_report_count: 0
        });
        expect(body(await server.inject('/v1/commerce/businesses/b-pier'))).to.include({ description: '', scam_report_count: 1 });
        expect(body<List<{ price: number; scam_report_count: number }>>(await server.inject('/v1/commerce/offers')).data[0]).to.include({ price: 4, scam_report_count: 1 });
        expect(body<List<{ id: string }>>(await server.inject('/v1/logistics/vehicles?available=false')).data.map((item) => item.id)).to.equal(['v-old']);
        const { logistics } = await server.app.localgate.data.exportRecords() as { logistics: { drivers: { name: string; vehicle_id: string | null; is_active: boolean }[] } };
        const drivers = logistics.drivers.map(({ name, vehicle_id: vehicleId, is_active: active }) => ({ name, vehicleId, active })).sort((a, b) => a.name.localeCompare(b.name));
        expect(drivers).to.equal([{ name: 'Dee', vehicleId: 'v-van', active: true }, { name: 'Eve', vehicleId: null, active: false }]);
    });

    const refused: [string, unknown, string][] = [
        ['a fixture that is not an object', [], 'test must hold an object keyed by namespace'],
        ['a fixture that is null', null, 'test must hold an object keyed by namespace'],
        ['a fixture that is a number', 42, 'test must hold an object keyed by namespace'],
        ['a key naming no namespace', { bank: {} }, 'test: unknown namespace "bank" (fixtures fill commerce, logistics, pay)'],
        ['a namespace that holds no object', { commerce: [] }, 'test: commerce must hold an object keyed by collection'],
        ['a collection no fixture fills', { commerce: { shops: [] } }, 'test: commerce has no collection "shops" a fixture can fill (expected businesses, products, offers, inquiries, scam_reports)'],
        ['a collection that is not an array', { commerce: { businesses: {} } }, 'test: commerce.businesses must be an array of records'],
        ['a record that is not an object', { commerce: { businesses: ['b'] } }, 'test: commerce.businesses[0]: value must be of type object'],
        ['a record without a required field', { logistics: { vehicles: [{ ...vehicle, model: undefined }] } }, 'test: logistics.vehicles[0].model: model is required'],
        ['a field the API does not show', { logistics: { vehicles: [{ ...vehicle, colour: 'red' }] } }, 'test: logistics.vehicles[0].colour: colour is not allowed'],
        ['an inquiry about two things', { commerce: { inquiries: [{ product_id: 'p', business_id: 'b', message: 'Hi', owner_id: 'o' }] } }, 'test: commerce.inquiries[0]: value contains a conflict between exclusive peers [product_id, business_id]'],
        ['a scam report of a missing target', { commerce: { scam_reports: [{ target_type: 'product', target_id: 'gone', reason: 'Odd', reporter_id: 'r' }] } }, 'test: commerce.scam_reports[0].target_id: "gone" names no record of products'],
        ['a reference across the fixture that fails after the first namespace', { commerce: { businesses: [{ ...business, id: 'b-new' }] }, logistics: { drivers: [{ name: 'F', phone: '3', license_number: 'L3', vehicle_id: 'v-none' }] } },
            'test: logistics.drivers[0].vehicle_id: "v-none" names no record of vehicles']
    ];

    it('refuses a bad fixture, names where, and loads nothing', async () => {

        const { data } = server.app.localgate;
        const stored = await data.exportRecords();
        for (const [what, fixture, message] of refused) {
            await expect(data.loadFixture(fixture, 'test'), what).to.reject(FixtureError, message);
            expect(await data.exportRecords(), what).to.equal(stored);
        }
    });

    it('names a file it cannot read or parse', () => {

        const dir = tempDir();
        expect(() => readFixtureFile(Path.join(dir, 'none.json'))).to.throw(FixtureError, /^Cannot read fixture .*none\.json: ENOENT/);
        Fs.writeFileSync(Path.join(dir, 'bad.json'), '{"commerce": ');
        expect(() => readFixtureFile(Path.join(dir, 'bad.json'))).to.throw(FixtureError, /^Cannot read fixture .*bad\.json: /);
    });

    it('seeds only namespaces that ship demo data', () => {

        const db = openCopy(namespaceImage(weatherNamespace, false));
        expect(seedDemo(db, weatherNamespace)).to.equal(0);
        closeDatabase(db);
    });
});
