import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { wallContext } from '../lib/record-context';
import type { FixtureRows } from '../lib/fixtures';
import { NamespacesDataSet } from '../lib/storage/data-set';
import type { SeedCheck, WaitingDatabase } from '../lib/storage/engine';
import { openSqliteNamespace, type SqliteNamespace } from '../lib/storage/sqlite/namespace';
import { absentNamespace } from '../lib/storage/readiness';
import { builtInNamespaces } from '../lib/namespaces';
import { weatherNamespace } from '../lib/namespaces/weather';
import { logisticsNamespace } from '../lib/namespaces/logistics';
import { commerceNamespace } from '../lib/namespaces/commerce';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


const memory = { storage: 'memory' as const, dataDir: ':memory:', seed: false };

const business = { id: 'b-1', name: 'Pier Kiosk', category: 'Kiosk', city: 'Harbourside', phone: '1' };
const vehicle = { id: 'v-1', make: 'Ford', model: 'Transit', year: 2022, seats: 3, daily_rate: 55, currency: 'GBP', is_available: true };


// A database whose transactions wait (as PostgreSQL's do), over an SQLite one: it records the order of events and can
// fail after the transactions nested in it ran, as a failed commit would.
function waitingOver(inner: SqliteNamespace, events: string[], failAfter = false): WaitingDatabase {

    return {
        transactions: 'waiting',
        health: () => inner.health(),
        store: (context) => inner.store(context),
        eventLog: (namespace, context) => inner.eventLog(namespace, context),
        close: () => inner.close(),
        exportRows: (tables) => inner.exportRows(tables),
        async storeFixture(rows: FixtureRows, within: () => Promise<void>, seed?: SeedCheck): Promise<number | null> {

            events.push('waiting opens');
            const stored = inner.storeFixture(rows, () => events.push('immediate stored inside'), seed);
            await within();
            if (failAfter) {
                throw new Error('commit failed');
            }

            events.push('waiting commits');
            return stored;
        }
    };
}


describe('a data set over databases of both kinds', () => {

    it('loads a fixture with the waiting databases first and the immediate ones inside the last of them', async () => {

        const events: string[] = [];
        const commerce = openSqliteNamespace(commerceNamespace, undefined, memory);
        const logistics = openSqliteNamespace(logisticsNamespace, undefined, memory);
        const weather = openSqliteNamespace(weatherNamespace, undefined, memory);
        const data = new NamespacesDataSet(builtInNamespaces, { commerce: waitingOver(commerce, events), logistics, weather }, { pay: absentNamespace('sqlite', 'memory') }, wallContext());

        const counts = await data.loadFixture({ commerce: { businesses: [business] }, logistics: { vehicles: [vehicle] } }, 'fixture');
        expect(counts).to.equal({ commerce: 1, logistics: 1 });
        expect(events).to.equal(['waiting opens', 'immediate stored inside', 'waiting commits']);
        expect(commerce.db.prepare('SELECT id FROM businesses').pluck().all()).to.equal(['b-1']);
        expect(logistics.db.prepare('SELECT id FROM vehicles').pluck().all()).to.equal(['v-1']);
        await data.close();
    });

    it('passes a failure of a waiting database on, after the immediate ones ran inside it', async () => {

        const events: string[] = [];
        const commerce = openSqliteNamespace(commerceNamespace, undefined, memory);
        const data = new NamespacesDataSet(builtInNamespaces, {
            commerce: waitingOver(commerce, events, true),
            logistics: openSqliteNamespace(logisticsNamespace, undefined, memory),
            weather: openSqliteNamespace(weatherNamespace, undefined, memory)
        }, { pay: absentNamespace('sqlite', 'memory') }, wallContext());

        await expect(data.loadFixture({ commerce: { businesses: [business] } }, 'fixture')).to.reject('commit failed');
        expect(events).to.equal(['waiting opens', 'immediate stored inside']);
        await data.close();
    });
});
