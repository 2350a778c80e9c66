import { placedNamespaces, type PlacedNamespace } from '../../config';
import type { NamespacesDataSet } from '../data-set';
import type { DataSet, InstanceData, InstanceDataOptions } from '../engine';
import { namespaceImage } from './images';
import { SqliteInstanceData, type SqliteSnapshot } from './instance';
import { SqliteNamespace } from './namespace';
import { openCopy, type Database } from './open';
import { MemoryPay, NoPay } from './pay-access';


/** The SQLite database of a namespace of a data set this engine opened (its tests look inside). */
export function sqliteDatabase(data: DataSet, namespace: PlacedNamespace): Database {

    return ((data as NamespacesDataSet).database(namespace) as SqliteNamespace).db;
}


/** A new, migrated, optionally seeded instance data set: SQLite databases in memory, copied from shared images. */
export function createSqliteInstance(options: InstanceDataOptions): InstanceData {

    // A fork starts from its source's copy, which is also what it resets to.
    const from = (options.from as SqliteSnapshot | undefined)?.images;
    const images = { pay: from ? from.pay : (options.pay ? namespaceImage('pay', false) : undefined) } as SqliteSnapshot['images'];
    const databases = {} as Record<PlacedNamespace, SqliteNamespace>;
    for (const namespace of placedNamespaces) {
        images[namespace] = from ? from[namespace]! : namespaceImage(namespace, options.seed);
        databases[namespace] = new SqliteNamespace(null, 'memory', images[namespace]);
    }

    const pay = images.pay ? new MemoryPay(openCopy(images.pay), options.context, images.pay) : new NoPay();
    const data = new SqliteInstanceData(databases, pay, options.context, { images, bytes: 0 });
    if (options.fixture) {
        try {
            data.loadFixtureNow(options.fixture.records, options.fixture.origin);
        }
        catch (err) {
            Object.values(databases).forEach((database) => void database.close());
            void pay.close();
            throw err;
        }

        data.settle();
    }

    return data;
}
