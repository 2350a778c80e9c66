import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { commerceNamespace } from '../lib/namespaces/commerce';
import { SqliteCommerceStore } from '../lib/namespaces/commerce/sqlite';
import { migrate, namespaceMigrations } from '../lib/storage/sqlite/migrate';
import { openSqliteNamespace } from '../lib/storage/sqlite/namespace';
import { openDatabase } from '../lib/storage/sqlite/open';
import { demoOffers, frozenContext, offerStatusesOverTime } from './helpers/lifecycle';
import { insertRows } from './helpers/sqlite';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


// The SQLite engine's own side of commerce offers over time: what no route shows (the store's reads at each instant, the
// migration).


describe('commerce offers over time on SQLite', () => {

    it('reads each offer\'s status at the store\'s clock and stores none of them', async () => {

        const namespace = openSqliteNamespace(commerceNamespace, undefined, { storage: 'memory', dataDir: ':memory:', seed: true });
        const context = frozenContext('2026-01-01T00:00:00.000Z');
        const store = new SqliteCommerceStore(namespace.db, context);
        // No timeline reaches commerce: an offer's end is a read.
        expect(commerceNamespace.timed).to.not.exist();
        const transcript = await offerStatusesOverTime(store, context.clock);
        const stored = namespace.db.prepare('SELECT DISTINCT status FROM offers').pluck().all();
        await namespace.close();

        const inListOrder = (status: (offer: { id: string; valid_until: string }) => string) => demoOffers.map((offer) => [offer.id, status(offer)]);
        // The file lists them in list order (created_at, then id).
        expect(demoOffers.length).to.equal(17);
        expect(demoOffers.filter((offer) => offer.valid_until <= '2026-12-01T00:00:00.000Z').length).to.equal(3);
        expect(transcript).to.equal([
            inListOrder(() => 'valid'),
            inListOrder((offer) => (offer.valid_until <= '2026-12-01T00:00:00.000Z' ? 'expired' : 'valid')),
            inListOrder(() => 'expired'),
            // A clock set back reads them valid again: nothing was stored.
            inListOrder(() => 'valid')
        ]);
        expect(stored).to.equal(['valid']);
    });

    it('keeps an offer stored expired expired at any instant', async () => {

        const namespace = openSqliteNamespace(commerceNamespace, undefined, { storage: 'memory', dataDir: ':memory:', seed: true });
        const context = frozenContext('2026-01-01T00:00:00.000Z');
        const store = new SqliteCommerceStore(namespace.db, context);
        const id = demoOffers[0]!.id;
        namespace.db.prepare(`UPDATE offers SET status = 'expired' WHERE id = ?`).run(id);
        const statusOf = async () => (await store.listOffers({}, { limit: 100, offset: 0 })).data.filter((offer) => offer.id === id).map((offer) => offer.status);

        expect(await statusOf()).to.equal(['expired']);
        context.clock.freeze(new Date('2020-01-01T00:00:00.000Z'));
        expect(await statusOf()).to.equal(['expired']);
        await namespace.close();
    });

    it('adds the status to the offers stored before 002, each valid until its valid_until', () => {

        const db = openDatabase(':memory:');
        const migrations = namespaceMigrations(commerceNamespace);
        migrate(db, migrations.slice(0, 1));
        insertRows(db, 'businesses', [{ id: 'b', name: 'Bakery', category: 'Food', city: 'Harbourside', phone: '1', created_at: '2025-01-01T00:00:00.000Z' }]);
        insertRows(db, 'products', [{ id: 'p', business_id: 'b', name: 'Loaf', price_minor: 400, currency: 'USD', created_by: 'demo', created_at: '2025-01-01T00:00:00.000Z' }]);
        insertRows(db, 'offers', [{ id: 'o', product_id: 'p', title: 'Two', price_minor: 700, currency: 'USD', valid_from: '2025-01-01T00:00:00.000Z', valid_until: '2025-02-01T00:00:00.000Z', created_at: '2025-01-01T00:00:00.000Z' }]);

        expect(migrate(db, migrations.slice(0, 2))).to.equal([2]);
        expect(db.prepare('SELECT id, status FROM offers').all()).to.equal([{ id: 'o', status: 'valid' }]);
        expect(() => db.prepare(`UPDATE offers SET status = 'withdrawn'`).run()).to.throw(/CHECK constraint failed/);
        db.close();
    });
});
