import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { commerceNamespace } from '../lib/namespaces/commerce';
import { SqliteCommerceStore } from '../lib/storage/sqlite/commerce';
import { migrate, namespaceMigrations } from '../lib/storage/sqlite/migrate';
import { openSqliteNamespace } from '../lib/storage/sqlite/namespace';
import { openDatabase } from '../lib/storage/sqlite/open';
import { demoOffers, frozenContext, offerExpiry } from './helpers/lifecycle';
import { insertRows } from './helpers/sqlite';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


// The SQLite engine's own side of commerce offers over time: what no route shows (applying expiries, the migration).

// The demo offers in the order they fall due, ties by id.
const byDue = [...demoOffers].sort((a, b) => a.valid_until.localeCompare(b.valid_until) || a.id.localeCompare(b.id));

const expiry = ({ id, valid_until: due }: { id: string; valid_until: string }) => ({ id, due, type: 'commerce.offer.expired' });


describe('commerce offers over time on SQLite', () => {

    it('reads each offer\'s status at the store\'s clock, and expires the due ones earliest first, each once', async () => {

        const namespace = openSqliteNamespace(commerceNamespace, undefined, { storage: 'memory', dataDir: ':memory:', seed: true });
        const context = frozenContext('2026-01-01T00:00:00.000Z');
        const store = new SqliteCommerceStore(namespace.db, context);
        // The timeline reaches the store through the namespace's descriptor.
        expect(commerceNamespace.timed?.(store)).to.shallow.equal(store);
        const transcript = await offerExpiry(store, context.clock);
        const stored = namespace.db.prepare('SELECT DISTINCT status FROM offers').pluck().all();
        await namespace.close();

        const dueBy = (instant: string) => byDue.filter((offer) => offer.valid_until <= instant);
        const inListOrder = (status: (offer: { id: string; valid_until: string }) => string) => demoOffers.map((offer) => [offer.id, status(offer)]);
        // The file lists them in list order (created_at, then id).
        expect(demoOffers.length).to.equal(17);
        expect(dueBy('2026-12-01T00:00:00.000Z').length).to.equal(3);
        expect(transcript).to.equal([
            new Date(byDue[0]!.valid_until),
            inListOrder(() => 'valid'),
            inListOrder((offer) => (offer.valid_until <= '2026-12-01T00:00:00.000Z' ? 'expired' : 'valid')),
            byDue.slice(0, 2).map(expiry), new Date(byDue[2]!.valid_until),
            byDue.slice(2, 3).map(expiry), new Date(byDue[3]!.valid_until),
            byDue.slice(3).map(expiry), null,
            // Time never takes an offer back: a clock set back shows what is stored.
            inListOrder(() => 'expired')
        ]);
        expect(stored).to.equal(['expired']);
    });

    it('adds the status to the offers stored before 002, each valid until the timeline moves it', () => {

        const db = openDatabase(':memory:');
        const migrations = namespaceMigrations(commerceNamespace);
        migrate(db, migrations.slice(0, 1));
        insertRows(db, 'businesses', [{ id: 'b', name: 'Bakery', category: 'Food', city: 'Harbourside', phone: '1', created_at: '2025-01-01T00:00:00.000Z' }]);
        insertRows(db, 'products', [{ id: 'p', business_id: 'b', name: 'Loaf', price_minor: 400, currency: 'USD', created_by: 'demo', created_at: '2025-01-01T00:00:00.000Z' }]);
        insertRows(db, 'offers', [{ id: 'o', product_id: 'p', title: 'Two', price_minor: 700, currency: 'USD', valid_from: '2025-01-01T00:00:00.000Z', valid_until: '2025-02-01T00:00:00.000Z', created_at: '2025-01-01T00:00:00.000Z' }]);

        expect(migrate(db, migrations)).to.equal([2]);
        expect(db.prepare('SELECT id, status FROM offers').all()).to.equal([{ id: 'o', status: 'valid' }]);
        expect(() => db.prepare(`UPDATE offers SET status = 'withdrawn'`).run()).to.throw(/CHECK constraint failed/);
        db.close();
    });
});
