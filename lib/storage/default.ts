import type { RecordContext } from '../record-context';
import type { Namespace } from '../namespace';
import { readFixtureFile } from '../fixtures';
import { NamespacesDataSet, type NamespaceDatabases, type ProvisionedNamespaces } from './data-set';
import type { DataSetDatabases, NamespaceDatabase } from './engine';
import { engineOf, engines } from './engines';
import { always } from '../always';
import type { StorageSettings } from './settings';


// The default data set: each namespace opened where the settings place it. The PostgreSQL code (with `pg`) loads only
// when a namespace or pay is placed there: a start on the SQLite default never pays for requiring it.

/**
 * Opens every namespace where the settings place it, then each provisioned one (pay); a failure closes what was opened
 * and names the namespace.
 */
export async function openDefaultDataSet(settings: StorageSettings, context: RecordContext): Promise<DataSetDatabases> {

    // The seed file is read and bounded before any database is opened: a file refused here leaves nothing written.
    const seed = settings.seedFile ? readFixtureFile(settings.seedFile) : undefined;
    const opened: NamespaceDatabases = {};
    const provisioned: ProvisionedNamespaces = {};
    let positions: { close(): void } | null = null;
    let data: NamespacesDataSet;
    try {
        if (writesEventsToFiles(settings)) {
            const turn = (await import('./sqlite/positions')).openSqlitePositions(settings.dataDir);
            positions = turn;
            context.ids.positions = turn;
        }

        for (const namespace of settings.placedNamespaces) {
            opened[namespace.name] = await openNamespace(settings, namespace);
        }

        for (const namespace of settings.namespaces.filter(({ readiness }) => readiness === 'provisioned')) {
            if (settings.memoryPay) {
                // In memory, migrated as it is made: ready like a placed namespace.
                opened[namespace.name] = await engines.sqlite.openNamespace(namespace, { engine: 'sqlite' }, { ...settings, seed: false });
            }
            else {
                // Without a PAY_DB_URL, SQLite's: not configured.
                provisioned[namespace.name] = await engines[settings.payLocation?.engine ?? 'sqlite'].openProvisioned(namespace, settings);
            }
        }

        data = new NamespacesDataSet(settings.namespaces, opened, provisioned, context, positions);
    }
    catch (err) {
        await Promise.all([...Object.values(opened), ...Object.values(provisioned)].map((database) => database.close()));
        positions?.close();
        throw err;
    }

    if (settings.seedFile) {
        await loadSeedFile(data, seed, settings.seedFile);
    }

    return data;
}


// A seed file is loaded as the demo is: into databases that hold none of its namespaces' records yet. A file that does
// not load stops the start; the data set closes.
async function loadSeedFile(data: NamespacesDataSet, seed: unknown, file: string): Promise<void> {

    try {
        await data.loadSeed(seed, file);
    }
    catch (err) {
        await data.close();
        throw err;
    }
}


/**
 * Whether a database of the data set that writes events is an SQLite file (in DATA_DIR, or where a setting names it),
 * which another process may open too: then every process draws the data set's event positions in turn, from files
 * of its own in DATA_DIR (storage/sqlite/positions.ts). In memory, a process is alone with its databases.
 */
export function writesEventsToFiles(settings: StorageSettings): boolean {

    const onSqlite = (namespace: Namespace) => (namespace.readiness === 'provisioned' ? settings.payLocation : settings.placements[namespace.name])?.engine === 'sqlite';
    return settings.storage === 'file' && settings.namespaces.some((namespace) => namespace.events && onSqlite(namespace));
}


function openNamespace(settings: StorageSettings, namespace: Namespace): Promise<NamespaceDatabase> {

    const location = always(settings.placements[namespace.name], `the placement of ${namespace.name}`);
    return engineOf(location).openNamespace(namespace, location, settings);
}

