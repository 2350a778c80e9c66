import Assert from 'node:assert';
import Fs from 'node:fs';
import Path from 'node:path';

import Joi from 'joi';

import { parseDurationSeconds } from './durations';
import { clockTimestamp, firstDetail } from './fields';
import type { Namespace } from './namespace';
import { consoleApiModes, memoryDataDir, minSecretBytes, SettingError, type ConsoleApiMode } from './setting-error';
import { engines, locate, payLocation } from './storage/engines';
import type { DatabaseSettings, Location, PaySettings, StorageSettings } from './storage/settings';


export const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export type LogLevel = typeof logLevels[number];

export const logFormats = ['auto', 'json', 'pretty'] as const;

/** auto: pretty lines on a terminal, JSON elsewhere (the command line decides); a server built from code treats it as json. */
export type LogFormat = typeof logFormats[number];

/**
 * The namespaces every data set has a database for, placed by the settings (<NAME>_DB_URL, DATABASE_URL, DATA_DIR).
 * Pay is apart, as its database is provisioned on its own (PAY_DB_URL and its keys).
 */
export function placedNamespaces(namespaces: readonly Namespace[]): Namespace[] {

    return namespaces.filter((namespace) => namespace.readiness === 'migrated');
}

/** The setting that places a namespace's database on its own: <NAME>_DB_URL. */
export function locationSetting(namespace: string): string {

    return `${namespace.toUpperCase()}_DB_URL`;
}

/** The settings: storage's (where the databases are, decided here once) and the service's. */
export interface Settings extends StorageSettings {
    port: number;
    host: string;
    keepSecret: boolean;
    jwtSecret?: string;
    databaseUrl?: string;
    namespaceUrls: Record<string, string>;
    logLevel: LogLevel;
    logFormat: LogFormat;
    corsOrigins: string[];
    drainTimeoutMs: number;
    validateResponses: boolean;
    instanceIdleTtlMs: number;
    maxInstances: number;
    maxSnapshotMib: number;
    maxFixtureMib: number;
    instancePoolMib: number;
    consoleApi: ConsoleApiMode;
    journalSize: number;
    journalBodyBytes: number;
    journalBudgetMib: number;
    /** CLOCK: the instant the default data set's clock stands still at from the start, until moved (PUT /_clock); unset, the wall clock. */
    clock?: string;
    /** WEBHOOK_HOSTS: the hosts a webhook endpoint may name (any 127.0.0.0/8 address counts as loopback when 127.0.0.1 is one). */
    webhookHosts: string[];
    /** WEBHOOK_TIMEOUT_MS: how long a webhook attempt waits for the receiver's answer. */
    webhookTimeoutMs: number;
    /** WEBHOOK_DISABLE_AFTER: the deliveries an endpoint gives up in a row that disable it; 0 never does. */
    webhookDisableAfter: number;
    /** WEBHOOK_LEASE_MARGIN_MS: how long a claimed attempt's lease outlasts WEBHOOK_TIMEOUT_MS, before another process may take it. */
    webhookLeaseMarginMs: number;
    /** WEBHOOK_MAX_SOCKETS: the sockets to webhook receivers the process holds at once, in use and idle. */
    webhookMaxSockets: number;
    /** WEBHOOK_SOCKET_IDLE_MS: how long a socket to a receiver stays open with nothing to send. */
    webhookSocketIdleMs: number;
    /** CLOCK_MOVE_DEADLINE_MS: how long a move of the clock may take before it answers, the attempts left made after. */
    clockMoveDeadlineMs: number;
    logStream?: NodeJS.WritableStream;
    /** Programmatic only: the interval of an event stream's heartbeat comment (15 s). */
    eventHeartbeatMs: number;
    /** Decided from the placements: whether a database of the default data set is on an engine other processes may share (PostgreSQL). */
    sharedByProcesses: boolean;
    /**
     * Decided from the placements: how often, in ms, the default data set looks for transitions and deliveries other
     * processes made due under the wall clock: every second where other processes may share its databases, never (0)
     * where they cannot.
     */
    transitionPollMs: number;
}

/** The settings decided from the others: a caller's values for them are ignored. */
type Decided = 'placedNamespaces' | 'placements' | 'payLocation' | 'sharedByProcesses' | 'transitionPollMs';

export type Options = Partial<Omit<Settings, Decided | 'pay' | 'database' | 'seed' | 'seedFile'>> & { pay?: PaySettings; database?: Partial<DatabaseSettings>; seed?: boolean | string };

/** The hosts a webhook may call when WEBHOOK_HOSTS is unset: this machine, and the host of a container. */
export const defaultWebhookHosts = ['127.0.0.1', 'localhost', '::1', 'host.docker.internal'] as const;

const namespaceName = /^[a-z][a-z0-9]*$/;

const optionalText = Joi.string().trim().empty('');

// A namespace URL: a PostgreSQL URL, or a path or file: URL that stays SQLite; any other scheme names its setting.
const databaseLocation = optionalText.custom((value: string, helpers) => {

    try {
        locationOf(value, String(helpers.state.path?.at(-1)));
        return value;
    }
    catch {
        return helpers.error('url.location');
    }
}).messages({ 'url.location': '{{#label}} must be a postgres:// URL, a path or a file: URL on this machine' });

// Labels are the environment names, so an error names the setting a user can change.
export const settingsSchema = Joi.object<Settings>({
    port: Joi.number().integer().min(0).max(65535).default(3000).label('PORT'),
    host: Joi.string().trim().hostname().default('127.0.0.1').messages({ 'string.hostname': '{{#label}} must be a host name or an IP address' }).label('HOST'),
    storage: Joi.string().valid('file', 'memory').default('file').label('storage'),
    dataDir: Joi.string().trim().min(1).default('./data').label('DATA_DIR'),
    // A generated secret is kept in the data directory so that tokens minted by another command work; a server made
    // in memory from code keeps it in memory unless told otherwise.
    keepSecret: Joi.boolean().default(Joi.ref('storage', { adjust: (storage: Settings['storage']) => storage === 'file' })).label('keepSecret'),
    jwtSecret: Joi.string().empty(Joi.valid(null)).custom((value: string, helpers) => {

        return Buffer.byteLength(value, 'utf8') >= minSecretBytes ? value : helpers.error('secret.short');
    }).messages({
        'string.empty': '{{#label}} must be at least 32 bytes long',
        'secret.short': '{{#label}} must be at least 32 bytes long'
    }).label('AUTH_JWT_SECRET'),
    pay: Joi.object({
        url: optionalText.custom((value: string, helpers) => {

            try {
                payLocation(value);
                return value;
            }
            catch {
                return helpers.error('url.file');
            }
        }).messages({ 'url.file': '{{#label}} must be a postgres:// URL, a path, a file: URL on this machine, or :memory:' }).label('PAY_DB_URL'),
        // An empty key stays empty, not unset: pay stays unconfigured, and `provision pay` refuses it by name.
        publishableKey: Joi.string().trim().allow('').label('PAY_DB_PUBLISHABLE_KEY'),
        secretKey: Joi.string().trim().allow('').label('PAY_DB_SECRET_KEY')
    }).default({}),
    databaseUrl: optionalText.custom((value: string, helpers) => {

        return engines.postgres.names(value) ? value : helpers.error('url.postgres');
    }).messages({ 'url.postgres': '{{#label}} must be a postgres:// or postgresql:// URL' }).label('DATABASE_URL'),
    // Each placed namespace's location, keyed by its name: settingsFor() names each by its variable.
    namespaceUrls: Joi.object().default({}),
    database: Joi.object({
        poolMax: Joi.number().integer().min(1).max(1000).default(10).label('DB_POOL_MAX'),
        connectTimeoutMs: Joi.number().integer().min(1).default(5000).label('DB_CONNECT_TIMEOUT_MS'),
        statementTimeoutMs: Joi.number().integer().min(1).default(10_000).label('DB_STATEMENT_TIMEOUT_MS')
    }).default(),
    logLevel: Joi.string().valid(...logLevels).default('info').label('LOG_LEVEL'),
    logFormat: Joi.string().valid(...logFormats).default('auto').label('LOG_FORMAT'),
    corsOrigins: Joi.array().items(Joi.string().min(1)).min(1).default(['*']).label('CORS_ORIGINS'),
    seed: Joi.alternatives(Joi.boolean().truthy('demo').falsy('none'), Joi.string().min(1).custom(existingFile))
        .default(true).messages({ 'string.empty': '{{#label}} must be demo, none or the path of a fixture file', 'seed.file': '{{#label}} must be demo, none or the path of a fixture file: there is no file {{#file}}' }).label('SEED'),
    seedFile: Joi.string().label('seedFile'),
    drainTimeoutMs: Joi.number().integer().min(0).default(10_000).label('DRAIN_TIMEOUT_MS'),
    validateResponses: Joi.boolean().default(false).label('VALIDATE_RESPONSES'),
    instanceIdleTtlMs: Joi.number().integer().min(1000).default(3_600_000).label('INSTANCE_IDLE_TTL'),
    maxInstances: Joi.number().integer().min(0).default(1000).label('MAX_INSTANCES'),
    maxSnapshotMib: Joi.number().integer().min(0).default(512).label('MAX_SNAPSHOT_MIB'),
    maxFixtureMib: Joi.number().integer().min(1).default(16).label('MAX_FIXTURE_MIB'),
    // The images of fixtures loaded into instances, kept to make the next instance from the same fixture (0: none).
    fixtureCacheMib: Joi.number().integer().min(0).default(64).label('FIXTURE_CACHE_MIB'),
    // The instances made ahead of the kinds most used, ready to hand out (0: none).
    instancePoolMib: Joi.number().integer().min(0).default(16).label('INSTANCE_POOL_MIB'),
    memoryPay: Joi.boolean().default(false).when('storage', {
        is: 'file',
        then: Joi.valid(false).messages({ 'any.only': '{{#label}} needs storage in memory (--memory or DATA_DIR=:memory:); for files run `npx localgate provision pay`' })
    }).label('MEMORY_PAY'),
    consoleApi: Joi.string().valid(...consoleApiModes).default('auto').label('CONSOLE_API'),
    // The request journal of each data set: entries kept (0 turns it off), the body bytes an entry keeps, and the
    // memory all journals share.
    journalSize: Joi.number().integer().min(0).max(100_000).default(1000).label('JOURNAL_SIZE'),
    journalBodyBytes: Joi.number().integer().min(0).default(16_384).label('JOURNAL_BODY_BYTES'),
    journalBudgetMib: Joi.number().integer().min(1).default(64).label('JOURNAL_BUDGET_MIB'),
    eventsKept: Joi.number().integer().min(100).max(1_000_000).default(10_000).label('EVENTS_KEPT'),
    // Stored as the instant's ISO form, so that a restart compares it with the clock file's as text.
    clock: clockTimestamp().label('CLOCK'),
    // Host names as a URL's hostname reads them: lower case, IPv6 without its brackets.
    webhookHosts: Joi.array().items(Joi.string().trim().lowercase().min(1).max(253).pattern(/^[^\s/@:[\]]+$|^[0-9a-f:.]+$/).messages({
        'string.pattern.base': '{{#label}} must be host names or IP addresses, without a scheme, port or path'
    }).label('WEBHOOK_HOSTS')).min(1).default([...defaultWebhookHosts]).label('WEBHOOK_HOSTS'),
    webhookTimeoutMs: Joi.number().integer().min(1).max(600_000).default(10_000).label('WEBHOOK_TIMEOUT_MS'),
    webhookDisableAfter: Joi.number().integer().min(0).max(1_000_000).default(5).label('WEBHOOK_DISABLE_AFTER'),
    // Past the longest latency a fault rule adds (60 s), so that an attempt a rule holds is not taken over while it waits.
    webhookLeaseMarginMs: Joi.number().integer().min(0).max(600_000).default(70_000).label('WEBHOOK_LEASE_MARGIN_MS'),
    webhookMaxSockets: Joi.number().integer().min(1).max(65_536).default(256).label('WEBHOOK_MAX_SOCKETS'),
    // Below the 5 s a Node receiver keeps an idle connection, so that the sender closes first and never writes into a
    // socket the receiver is closing.
    webhookSocketIdleMs: Joi.number().integer().min(1).max(600_000).default(4000).label('WEBHOOK_SOCKET_IDLE_MS'),
    clockMoveDeadlineMs: Joi.number().integer().min(1).max(600_000).default(10_000).label('CLOCK_MOVE_DEADLINE_MS'),
    // Programmatic only: where log lines go instead of stdout.
    logStream: Joi.object().label('logStream'),
    // Programmatic only: a test need not wait 15 s for a heartbeat.
    eventHeartbeatMs: Joi.number().integer().min(10).default(15_000).label('eventHeartbeatMs'),
    // The namespaces are programmer input, checked on their own; decisions are made again from the settings they came
    // from, whatever a caller passes back.
    namespaces: Joi.any().strip(),
    placedNamespaces: Joi.any().strip(),
    placements: Joi.any().strip(),
    payLocation: Joi.any().strip(),
    sharedByProcesses: Joi.any().strip(),
    transitionPollMs: Joi.any().strip()
}).prefs({ errors: { wrap: { label: false } } });


// A SEED that is neither demo nor none names a fixture file: it must be one, kept as an absolute path.
function existingFile(value: string, helpers: Joi.CustomHelpers): string | Joi.ErrorReport {

    const file = Path.resolve(value);
    return Fs.statSync(file, { throwIfNoEntry: false })?.isFile() ? file : helpers.error('seed.file', { file });
}


// The settings schema of a list of namespaces: each placed one's location under its own variable, <NAME>_DB_URL.
const schemas = new WeakMap<readonly Namespace[], Joi.ObjectSchema<Settings>>();

function settingsFor(namespaces: readonly Namespace[]): Joi.ObjectSchema<Settings> {

    let schema = schemas.get(namespaces);
    if (!schema) {
        const urls = placedNamespaces(namespaces).map(({ name }) => [name, databaseLocation.label(locationSetting(name))]);
        schema = settingsSchema.keys({ namespaceUrls: Joi.object(Object.fromEntries(urls)).default({}) });
        schemas.set(namespaces, schema);
    }

    return schema;
}


/**
 * Validates programmatic options once, for the namespaces the caller serves, and makes the decisions the rest reads;
 * the first problem becomes a SettingError naming the setting.
 */
export function resolveSettings(namespaces: readonly Namespace[], options: Options = {}): Settings {

    return settingsOf(namespaces, options);
}


// The settings of options in code, or of those the environment and the flags gave, which their schema reads alike.
function settingsOf(namespaces: readonly Namespace[], options: Options | Record<string, unknown>): Settings {

    const names = namespaces.map((namespace) => namespace.name);
    Assert.ok(names.every((name) => namespaceName.test(name)) && new Set(names).size === names.length, `Namespace names must be distinct, lower case letters and digits: ${names.join(', ')}`);
    const input = options.dataDir === memoryDataDir ? { ...options, dataDir: undefined, storage: 'memory' } : options;
    const { error, value } = settingsFor(namespaces).validate(input, { abortEarly: true, convert: true });
    if (error) {
        const detail = firstDetail(error);
        const label = String(detail.context?.label);
        throw new SettingError(label, detail.message.slice(label.length).trim());
    }

    const placed = placedNamespaces(namespaces);
    const placements = Object.fromEntries(placed.map(({ name }) => [name, namespaceLocation(value, name)]));
    const pay = value.pay.url === undefined ? undefined : payLocation(value.pay.url);
    const shared = [...Object.values(placements), ...(pay ? [pay] : [])].some((location) => engines[location.engine].shared);
    const settings: Settings = {
        ...value,
        ...(typeof value.seed === 'string' ? { seed: false, seedFile: value.seed } : {}),
        namespaces,
        placedNamespaces: placed,
        placements,
        ...(pay ? { payLocation: pay } : {}),
        sharedByProcesses: shared,
        transitionPollMs: shared ? 1000 : 0
    };

    // Several processes on one database must check each other's tokens: a secret generated by each would not.
    if (!settings.jwtSecret && shared) {
        throw new SettingError('AUTH_JWT_SECRET', 'must be set when a namespace is on PostgreSQL: every process serving it must sign and check tokens with one secret');
    }

    return settings;
}


// Where the settings put a namespace's database: its own URL, else DATABASE_URL, else SQLite in DATA_DIR (or memory).
function namespaceLocation(settings: Pick<Settings, 'databaseUrl' | 'namespaceUrls'>, namespace: string): Location {

    const url = settings.namespaceUrls[namespace];
    if (url !== undefined) {
        return locationOf(url, namespace);
    }

    return settings.databaseUrl ? { engine: 'postgres', url: settings.databaseUrl } : { engine: 'sqlite' };
}


function locationOf(url: string, namespace: string): Location {

    return locate(url, locationSetting(namespace));
}


// The settings a flag can set, by their environment names.
const flagOfSetting = new Map<string, keyof Flags>([
    ['CLOCK', 'clock'],
    ['PORT', 'port'],
    ['SEED', 'seed'],
    ['HOST', 'host'],
    ['DATA_DIR', 'data-dir'],
    ['LOG_LEVEL', 'log-level'],
    ['MEMORY_PAY', 'memory-pay']
]);

export interface Flags {
    port?: string;
    host?: string;
    'data-dir'?: string;
    memory?: boolean;
    'memory-pay'?: boolean;
    seed?: boolean | string;
    'log-level'?: string;
    clock?: string;
}

/**
 * Reads the settings of the namespaces served from the environment, with command-line flags taking precedence; the
 * only reader of process.env.
 */
export function settingsFromEnvironment(namespaces: readonly Namespace[], env: NodeJS.ProcessEnv = process.env, flags: Flags = {}): Settings {

    const dataDir = pick(flags['data-dir'], env.DATA_DIR);
    const inMemory = flags.memory || dataDir === memoryDataDir;
    const options = {
        port: pick(flags.port, env.PORT),
        host: pick(flags.host, env.HOST),
        // In memory the data directory still keeps the generated token secret, so that `localgate token` in another
        // shell mints tokens this server accepts.
        storage: inMemory ? 'memory' : undefined,
        dataDir: dataDir === memoryDataDir ? undefined : dataDir,
        keepSecret: true,
        jwtSecret: env.AUTH_JWT_SECRET,
        pay: defined({
            url: env.PAY_DB_URL,
            publishableKey: env.PAY_DB_PUBLISHABLE_KEY,
            secretKey: env.PAY_DB_SECRET_KEY
        }),
        databaseUrl: pick(undefined, env.DATABASE_URL),
        namespaceUrls: defined(Object.fromEntries(placedNamespaces(namespaces).map(({ name }) => [name, pick(undefined, env[locationSetting(name)])]))),
        database: defined({
            poolMax: env.DB_POOL_MAX,
            connectTimeoutMs: env.DB_CONNECT_TIMEOUT_MS,
            statementTimeoutMs: env.DB_STATEMENT_TIMEOUT_MS
        }),
        logLevel: pick(flags['log-level'], env.LOG_LEVEL),
        logFormat: pick(undefined, env.LOG_FORMAT),
        corsOrigins: env.CORS_ORIGINS === undefined ? undefined : env.CORS_ORIGINS.split(',').map((origin) => origin.trim()).filter(Boolean),
        seed: flags.seed ?? pick(undefined, env.SEED),
        drainTimeoutMs: env.DRAIN_TIMEOUT_MS,
        validateResponses: env.VALIDATE_RESPONSES,
        instanceIdleTtlMs: env.INSTANCE_IDLE_TTL === undefined ? undefined : durationMs(env.INSTANCE_IDLE_TTL, 'INSTANCE_IDLE_TTL'),
        maxInstances: env.MAX_INSTANCES,
        maxSnapshotMib: env.MAX_SNAPSHOT_MIB,
        maxFixtureMib: env.MAX_FIXTURE_MIB,
        fixtureCacheMib: env.FIXTURE_CACHE_MIB,
        instancePoolMib: env.INSTANCE_POOL_MIB,
        memoryPay: flags['memory-pay'] ?? pick(undefined, env.MEMORY_PAY),
        consoleApi: env.CONSOLE_API,
        journalSize: env.JOURNAL_SIZE,
        journalBodyBytes: env.JOURNAL_BODY_BYTES,
        journalBudgetMib: env.JOURNAL_BUDGET_MIB,
        eventsKept: env.EVENTS_KEPT,
        clock: pick(flags.clock, env.CLOCK),
        webhookHosts: env.WEBHOOK_HOSTS === undefined ? undefined : env.WEBHOOK_HOSTS.split(',').map((host) => host.trim()).filter(Boolean),
        webhookTimeoutMs: env.WEBHOOK_TIMEOUT_MS,
        webhookDisableAfter: env.WEBHOOK_DISABLE_AFTER,
        webhookLeaseMarginMs: env.WEBHOOK_LEASE_MARGIN_MS,
        webhookMaxSockets: env.WEBHOOK_MAX_SOCKETS,
        webhookSocketIdleMs: env.WEBHOOK_SOCKET_IDLE_MS,
        clockMoveDeadlineMs: env.CLOCK_MOVE_DEADLINE_MS
    };

    try {
        return settingsOf(namespaces, defined(options));
    }
    catch (err) {
        // A value given as a flag is refused under the flag's name, one from the environment under the variable's.
        if (err instanceof SettingError) {
            const flag = flagOfSetting.get(err.setting);
            if (flag && flags[flag] !== undefined) {
                throw new SettingError(`--${flag}`, err.reason);
            }
        }

        throw err;
    }
}


// A duration setting (INSTANCE_IDLE_TTL) in ms; anything but a positive duration is refused naming the setting.
function durationMs(text: string, setting: string): number {

    const seconds = parseDurationSeconds(text);
    if (seconds === null) {
        throw new SettingError(setting, `must be a positive duration such as 3600, 30m, 2h or 7d, not "${text}"`);
    }

    return seconds * 1000;
}


function pick(flag: string | undefined, env: string | undefined): string | undefined {

    return flag ?? (env === '' ? undefined : env);
}


// Unset values are left out rather than carried as undefined, so settings print and compare cleanly.
function defined(values: Record<string, unknown>): Record<string, unknown> {

    return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined));
}
