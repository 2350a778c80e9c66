import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { openSqliteNamespace } from '../lib/storage/sqlite/engine';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


// A data set composed across engines loads fixtures through each SQLite namespace; this runs without PostgreSQL.
describe('an SQLite namespace of a composed data set', () => {

    it('stores fixture rows in one transaction and runs what comes after inside it', async () => {

        const namespace = openSqliteNamespace('commerce', undefined, { storage: 'memory', dataDir: ':memory:', seed: false });
        const business = { id: 'b-1', name: 'Pier Kiosk', description: '', category: 'Kiosk', city: 'Harbourside', phone: '1', created_at: '2025-01-01T00:00:00.000Z' };
        let inside = false;
        const stored = namespace.storeFixture([{ collection: 'businesses', rows: [{ where: 'businesses[0]', origin: 'fixture', row: business, references: [] }] }], () => {

            inside = namespace.db.inTransaction;
        });

        expect(stored).to.equal(1);
        expect(inside).to.be.true();
        expect(namespace.db.prepare('SELECT id FROM businesses').pluck().all()).to.equal(['b-1']);
        expect(await namespace.health()).to.include({ state: 'ready', engine: 'sqlite', storage: 'memory' });
    });
});
