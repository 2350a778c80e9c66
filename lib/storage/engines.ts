import Path from 'node:path';
import Url from 'node:url';

import { memoryDataDir, SettingError } from '../setting-error';
import type { Namespace } from '../namespace';
import type { NamespaceDatabase } from './engine';
import type { PayCredentials, PayKeys } from './pay-keys';
import type { ProvisionedNamespace } from './readiness';
import { always } from '../always';
import type { DatabaseSettings, EngineName, Location, OpenSettings, PayLocation, StorageSettings } from './settings';


export type { EngineName, Location } from './settings';


// The one table of storage engines: how a setting's URL names each, how each opens a namespace's database (placed or
// provisioned), and what each can do. Nothing else in lib/ asks which engine a database is on. An engine's code loads
// when a database is placed there: a start on the SQLite default never requires `pg`.



interface EngineEntry<Engine extends EngineName> {

    /** True when a setting's URL names a database of this engine. */
    names(url: string): boolean;

    /** Where a URL of this engine puts a database; a URL it cannot use throws a SettingError naming `setting`. */
    locate(url: string, setting: string): Required<Location<Engine>>;

    /** True when the databases live on a server several processes serve at once, so they must share a token secret. */
    readonly shared: boolean;

    /** Where a namespace's database is, in words for the start banner (never a password). */
    describe(location: Location<Engine>, settings: Pick<StorageSettings, 'storage' | 'dataDir'>): Promise<string>;

    /** The database files a namespace placed here keeps on this machine. */
    files(location: Location<Engine>, namespace: string, dataDir: string): string[];

    /** Opens a namespace's database here: migrated, and seeded with its demo data when the settings ask. */
    openNamespace(namespace: Namespace, location: Location<Engine>, settings: OpenSettings): Promise<NamespaceDatabase>;

    /** Opens a provisioned namespace's database (pay's) as the settings place it here, followed by its readiness. */
    openProvisioned(namespace: Namespace, settings: StorageSettings): Promise<ProvisionedNamespace>;

    /** Creates (or upgrades) pay's database here and records a key pair in it. */
    provisionPay(location: Required<Location<Engine>>, database: DatabaseSettings, keys: PayKeys): Promise<PayCredentials>;

    /** Records a new key pair in a provisioned pay database here. */
    rotatePayKeys(location: Required<Location<Engine>>, database: DatabaseSettings): Promise<PayCredentials>;
}


export const engines: { readonly [Name in EngineName]: EngineEntry<Name> } = {
    sqlite: {
        // Every URL that names no other engine: a path, a file: URL, or a scheme `locate` refuses by name.
        names: () => true,
        locate: (url, setting) => ({ engine: 'sqlite', file: databaseFile(url, setting) }),
        shared: false,
        describe: (location, settings) => Promise.resolve(location.file ? `in ${Path.resolve(location.file)}` : (settings.storage === 'memory' ? 'in memory' : `in ${Path.resolve(settings.dataDir)}`)),
        files: (location, namespace, dataDir) => [location.file ?? Path.resolve(dataDir, `${namespace}.db`)],
        openNamespace: async (namespace, location, settings) => (await import('./sqlite/namespace')).openSqliteNamespace(namespace, location.file, settings),
        openProvisioned: async (namespace, settings) => (await import('./sqlite/provisioned')).openSqliteProvisioned(namespace, settings),
        provisionPay: async (location, database, keys) => (await import('./sqlite/provision')).provisionPay(location.file, keys),
        rotatePayKeys: async (location) => (await import('./sqlite/provision')).rotatePayKeys(location.file)
    },
    postgres: {
        names: (url) => /^postgres(?:ql)?:\/\//i.test(url),
        locate: (url) => ({ engine: 'postgres', url }),
        shared: true,
        describe: async (location) => `on PostgreSQL at ${(await import('./postgres/migrate')).describeUrl(location.url)}`,
        files: () => [],
        openNamespace: async (namespace, location, settings) => (await import('./postgres/namespace')).PgNamespace.open(namespace, location.url, settings.database, settings.seed, settings.eventsKept),
        openProvisioned: async (namespace, settings) => (await import('./postgres/provisioned')).openPgProvisioned(namespace, settings.pay, settings.database, settings.eventsKept),
        provisionPay: async (location, database, keys) => (await import('./postgres/provision')).provisionPostgresPay(location.url, database, keys),
        rotatePayKeys: async (location, database) => (await import('./postgres/provision')).rotatePostgresPayKeys(location.url, database)
    }
};

/** The engines' names, in the order a URL is offered to them: the catch-all SQLite last. */
export const engineNames = ['postgres', 'sqlite'] as const satisfies readonly EngineName[];


/** The entry of a location's engine, typed for that location. */
export function engineOf<Engine extends EngineName>(location: Location<Engine>): EngineEntry<Engine> {

    return engines[location.engine];
}


/** Where a setting's URL puts a database: the first engine that names it locates it. */
export function locate(url: string, setting: string): Required<Location> {

    // SQLite, last, names every URL.
    return engines[always(engineNames.find((name) => engines[name].names(url)), 'the engine of a URL')].locate(url, setting);
}


/** Where a PAY_DB_URL puts pay's database: on the engine its URL names (SQLite also takes `:memory:`). */
export function payLocation(url: string): PayLocation {

    return url === memoryDataDir ? { engine: 'sqlite', file: url } : locate(url, 'PAY_DB_URL');
}


// The SQLite file a setting names; throws naming the setting on a URL of another scheme.
function databaseFile(url: string, setting: string): string {

    // A scheme of two letters or more (a single one is a Windows drive) other than file: is no file SQLite opens.
    const scheme = /^([a-z][a-z0-9+.-]+):/i.exec(url)?.[1];
    if (scheme && scheme !== 'file') {
        throw new SettingError(setting, `must be a postgres:// URL, a path or a file: URL on this machine, not a ${scheme}: URL`);
    }

    if (url.startsWith('file://')) {
        return Url.fileURLToPath(url);
    }

    const path = url.startsWith('file:') ? decodeURIComponent(url.slice('file:'.length).replace(/\?.*$/s, '')) : url;
    return Path.resolve(path);
}
