import type { Namespace } from '../../namespace';
import type { NamespacesDataSet } from '../data-set';
import type { DataSetDatabases, InstanceData, InstanceDataOptions } from '../engine';
import { fixtureImageKey, type FixtureImages } from '../fixture-images';
import { namespaceImage } from './images';
import { SqliteInstanceData, type SqliteSnapshot } from './instance';
import { SqliteNamespace } from './namespace';
import type { Database } from './open';
import type { StorageSettings } from '../settings';


/** What an instance's databases are made from: the namespaces, those placed, and the events each database keeps. */
export type InstanceSettings = Pick<StorageSettings, 'namespaces' | 'placedNamespaces'> & Partial<Pick<StorageSettings, 'eventsKept'>>;


/** The SQLite database of a namespace of a data set this engine opened (its tests look inside). */
export function sqliteDatabase(data: DataSetDatabases, namespace: string): Database {

    return ((data as NamespacesDataSet).database(namespace) as SqliteNamespace).db;
}


/**
 * A new, migrated, optionally seeded instance data set: SQLite databases in memory, copied from shared images. A
 * fixture loaded before from the same start comes from the image that load made, kept in `fixtureImages`, with the id
 * counter it left. As with a template database, what the load drew (the wall clock's time and the random id of a
 * record that names neither) was drawn once, when the image was made, and every instance from it has the same.
 */
export function createSqliteInstance(settings: InstanceSettings, options: InstanceDataOptions<SqliteSnapshot>, fixtureImages: FixtureImages<SqliteSnapshot>): Promise<InstanceData> {

    return new Promise((resolve) => {

        resolve(sqliteInstance(settings, options, fixtureImages));
    });
}


function sqliteInstance(settings: InstanceSettings, options: InstanceDataOptions<SqliteSnapshot>, fixtureImages: FixtureImages<SqliteSnapshot>): InstanceData {

    const key = options.fixture && fixtureImages.maxBytes ? options.imageKey ?? fixtureImageKey(options) : null;
    const image = key === null ? undefined : fixtureImages.find(key);
    if (image) {
        options.context.ids.counter = image.counter;
        return openInstance(settings, { ...options, fixture: undefined, from: image.data });
    }

    const data = openInstance(settings, options);
    // A fork is made from its source's copy, and has none of its endpoints.
    if (options.from?.wired) {
        data.unwire();
    }

    if (options.fixture) {
        try {
            data.loadFixtureNow(options.fixture.records, options.fixture.origin);
        }
        catch (err) {
            void data.close();
            throw err;
        }

        const creation = data.settle();
        if (key !== null) {
            fixtureImages.keep(key, { data: creation, counter: options.context.ids.counter });
        }
    }

    return data;
}


// A fork, or an instance from a fixture's image, starts from that copy, which is also what it resets to. A provisioned
// namespace (pay) is there when asked (never seeded: in memory it is migrated as it is made), else absent.
function openInstance(settings: InstanceSettings, options: InstanceDataOptions<SqliteSnapshot>): SqliteInstanceData {

    const source = options.from;
    const from = source?.images;
    const { namespaces, eventsKept } = settings;
    const placed = new Set(settings.placedNamespaces);
    const fresh = (namespace: Namespace) => (placed.has(namespace) ? namespaceImage(namespace, options.seed) : (options.pay ? namespaceImage(namespace, false) : undefined));
    const images: SqliteSnapshot['images'] = {};
    const databases: Record<string, SqliteNamespace> = {};
    for (const namespace of namespaces) {
        const image = from ? from[namespace.name] : fresh(namespace);
        if (image) {
            images[namespace.name] = image;
            databases[namespace.name] = new SqliteNamespace(namespace, null, 'memory', image, eventsKept);
        }
    }

    return new SqliteInstanceData(namespaces, databases, options.context, { images, bytes: 0, wired: source?.wired ?? false });
}
