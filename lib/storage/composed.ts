import type { RecordContext } from '../clock';
import { namespaceLocation, placedNamespaces, type PlacedNamespace, type Settings } from '../config';
import { fixtureNamespaces, fixtureRows, type FixtureRows } from '../fixtures';
import type { CommerceStore } from '../namespaces/commerce/store';
import type { LogisticsStore } from '../namespaces/logistics/store';
import type { PayAccess } from '../namespaces/pay/store';
import { fixtureSpecs } from './demo';
import { payHealth, type DataSet, type EngineName, type NamespaceHealth } from './engine';
import { PgCommerceStore } from './postgres/commerce';
import { PgLogisticsStore } from './postgres/logistics';
import { PgNamespace } from './postgres/namespace';
import { PgPayReadiness } from './postgres/pay-readiness';
import { SqliteCommerceStore } from './sqlite/commerce';
import { openSqliteNamespace, openSqlitePay, type SqliteNamespace } from './sqlite/engine';
import { SqliteLogisticsStore } from './sqlite/logistics';


// The default data set when settings place its namespaces one by one (on PostgreSQL, or on SQLite files of their
// own): each namespace is opened by its own engine, and the routes see the same stores as ever.

type Part = PgNamespace | SqliteNamespace;

interface Pay {
    access: PayAccess;
    engine: EngineName;
    storage: NamespaceHealth['storage'];
    close(): Promise<void>;
}


/** Opens every namespace where the settings place it; a failure closes what was opened and names the namespace. */
export async function openComposed(settings: Settings, context: RecordContext): Promise<DataSet> {

    const parts: Partial<Record<PlacedNamespace, Part>> = {};
    let pay: Pay | undefined;
    try {
        for (const namespace of placedNamespaces) {
            const location = namespaceLocation(settings, namespace);
            parts[namespace] = location.engine === 'postgres' ?
                await PgNamespace.open(namespace, location.url, settings.database, settings.seed) :
                openSqliteNamespace(namespace, location.file, settings);
        }

        pay = await openPay(settings, context);
    }
    catch (err) {
        await Promise.all(Object.values(parts).map((part) => part.close()));
        throw err;
    }

    return new ComposedDataSet(parts as Record<PlacedNamespace, Part>, pay, context);
}


async function openPay(settings: Settings, context: RecordContext): Promise<Pay> {

    if (settings.pay.url && PgPayReadiness.handles(settings.pay.url)) {
        const readiness = await PgPayReadiness.open(settings.pay, settings.database, context);
        return { access: readiness, engine: 'postgres', storage: 'server', close: () => readiness.close() };
    }

    return { ...openSqlitePay(settings, context), engine: 'sqlite' };
}


class ComposedDataSet implements DataSet {

    readonly commerce: CommerceStore;
    readonly logistics: LogisticsStore;
    readonly pay: PayAccess;

    constructor(private readonly parts: Record<PlacedNamespace, Part>, private readonly payPart: Pay, private readonly context: RecordContext) {

        const { commerce, logistics } = parts;
        this.commerce = commerce.kind === 'async' ? new PgCommerceStore(commerce.db, context) : new SqliteCommerceStore(commerce.db, context);
        this.logistics = logistics.kind === 'async' ? new PgLogisticsStore(logistics.db, context) : new SqliteLogisticsStore(logistics.db, context);
        this.pay = payPart.access;
    }

    async health(): Promise<Record<string, NamespaceHealth>> {

        const health: Record<string, NamespaceHealth> = {};
        for (const namespace of placedNamespaces) {
            health[namespace] = await this.parts[namespace].health();
        }

        health.pay = await payHealth(this.pay, this.payPart.engine, this.payPart.storage);
        return health;
    }

    /**
     * Every record is checked before any is stored. Each namespace's rows then go in one transaction, nested so that a
     * failure in any rolls back all: PostgreSQL's first, holding theirs open, then SQLite's, which cannot wait inside
     * a transaction. Only a failed commit on the database server itself can leave a load half done.
     */
    async loadFixture(fixture: unknown, origin: string): Promise<Record<string, number>> {

        const loads = fixtureNamespaces(fixture, origin, fixtureSpecs).map(([namespace, collections]) => ({
            part: this.parts[namespace as PlacedNamespace],
            namespace,
            rows: fixtureRows(namespace, collections, fixtureSpecs[namespace]!, origin, this.context)
        }));

        const counts = Object.fromEntries(loads.map((load) => [load.namespace, 0]));
        const later = loads.filter((load) => load.part.kind === 'sync');
        const first = loads.filter((load) => load.part.kind === 'async');
        const storeSync = (index: number): void => {

            const load = later[index];
            if (load) {
                counts[load.namespace] = (load.part as SqliteNamespace).storeFixture(load.rows, () => storeSync(index + 1));
            }
        };

        const store = async (index: number): Promise<void> => {

            const load = first[index];
            if (!load) {
                storeSync(0);
                return;
            }

            counts[load.namespace] = await (load.part as PgNamespace).storeFixture(load.rows as FixtureRows, () => store(index + 1));
        };

        await store(0);
        return counts;
    }

    async close(): Promise<void> {

        await Promise.all([...Object.values(this.parts).map((part) => part.close()), this.payPart.close()]);
    }
}
