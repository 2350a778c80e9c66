import Fs from 'node:fs';
import Path from 'node:path';
import Util from 'node:util';

import { existingSecret, mintToken } from './auth';
import { wallContext } from './data-set/clock';
import { mintSecret } from './events/signing';
import { durationSeconds, locationSetting, placedNamespaces, settingsFromEnvironment, type DatabaseSettings, type Flags, type LogFormat, type Settings } from './config';
import { readFixtureFile } from './fixtures';
import { isSecret, typePatternSchema } from './events/webhook-schemas';
import { createServer } from './index';
import { listen, typesOf } from './listen';
import { builtInNamespaces } from './namespaces';
import { packageRoot } from './paths';
import { createEngine, databasesWhere, provisionPay, rotatePayKeys, seedDefaultDataSet, type PayCredentials } from './storage';
import { NoPayForFixture } from './storage/data-set';
import { engineOf, type Location } from './storage/engines';


export interface Io {
    out(line: string): void;
    err(line: string): void;
    /** True when standard output is a terminal: LOG_FORMAT=auto then logs pretty lines. */
    tty?: boolean;
}

export const usage = `Usage: localgate <command> [options]

Commands:
  start                   start the service (default)
  migrate                 apply pending migrations and exit
  provision pay           create the pay database, record the key pair set (else a fresh one) and print the settings
  rotate-keys pay         record a new pay key pair (the old one stops working) and print the settings
  token [--admin] <subject>  print a bearer token for <subject> (--ttl 1h, 30m, 2d or seconds; at most 365d);
                          --admin adds the role claim the /_instances routes need (subject default: admin)
  seed --file F.json      load a fixture file {"<namespace>": {"<collection>": [records]}} (--without-pay: leave its pay records out)
  export [--file F.json]  write every record of the databases as a fixture file (to standard output without --file)
  listen --forward-to URL forward a data set's events, signed, to a URL of this machine (--url, --instance, --types, --secret)
  help [command]          print this, or what a command takes

Options: --version, --help (also after a command: npx localgate token --help)
Settings are read from the environment too:
  service     PORT, HOST, DATA_DIR, AUTH_JWT_SECRET, SEED (demo, none or a fixture file), CLOCK, CORS_ORIGINS, DRAIN_TIMEOUT_MS, CONSOLE_API,
              VALIDATE_RESPONSES, LOG_LEVEL, LOG_FORMAT (auto: pretty lines on a terminal, else json; json; pretty)
  pay         PAY_DB_URL, PAY_DB_PUBLISHABLE_KEY, PAY_DB_SECRET_KEY, MEMORY_PAY
  PostgreSQL  DATABASE_URL, ${placedNamespaces(builtInNamespaces).map(({ name }) => locationSetting(name)).join(', ')} (a postgres:// URL or an SQLite file),
              DB_POOL_MAX, DB_CONNECT_TIMEOUT_MS, DB_STATEMENT_TIMEOUT_MS
  instances   INSTANCE_IDLE_TTL, MAX_INSTANCES, MAX_SNAPSHOT_MIB (the memory all snapshots may hold), MAX_FIXTURE_MIB,
              FIXTURE_CACHE_MIB, INSTANCE_POOL_MIB (the memory of instances made ahead)
  journal     JOURNAL_SIZE, JOURNAL_BODY_BYTES, JOURNAL_BUDGET_MIB
  webhooks    WEBHOOK_HOSTS, WEBHOOK_TIMEOUT_MS, WEBHOOK_DISABLE_AFTER, WEBHOOK_LEASE_MARGIN_MS, WEBHOOK_MAX_SOCKETS,
              WEBHOOK_SOCKET_IDLE_MS, EVENTS_KEPT, CLOCK_MOVE_DEADLINE_MS`;

const options = {
    port: { type: 'string' },
    host: { type: 'string' },
    'data-dir': { type: 'string' },
    memory: { type: 'boolean' },
    'memory-pay': { type: 'boolean' },
    admin: { type: 'boolean' },
    seed: { type: 'string' },
    'no-seed': { type: 'boolean' },
    'log-level': { type: 'string' },
    clock: { type: 'string' },
    ttl: { type: 'string' },
    file: { type: 'string' },
    'without-pay': { type: 'boolean' },
    'forward-to': { type: 'string' },
    url: { type: 'string' },
    instance: { type: 'string' },
    types: { type: 'string', multiple: true },
    secret: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean', short: 'v' }
} as const;

type Flag = keyof typeof options;

interface Command {
    synopsis: string;
    flags: Flag[];
    explain: string;
}

// What each command takes: any other flag is a usage error.
const commands: Record<string, Command> = {
    start: {
        synopsis: 'localgate start [--port N] [--host H] [--data-dir D | --memory [--memory-pay]] [--seed demo|none|F.json | --no-seed] [--log-level L] [--clock INSTANT]',
        flags: ['port', 'host', 'data-dir', 'memory', 'memory-pay', 'seed', 'no-seed', 'log-level', 'clock'],
        explain: 'Starts the service; PORT=0 (or --port 0) picks a free port. --seed (or SEED) names what empty databases get on start: demo (the default), none, or a fixture file such as an export, loaded only while none of the namespaces it fills holds a record (so a restart adds nothing). --memory keeps the databases in memory (the token secret stays in DATA_DIR, so `npx localgate token` works from another shell); --memory-pay gives it a provisioned pay namespace in memory. --clock (or CLOCK) freezes the default data set\'s clock at an ISO 8601 UTC instant until PUT /_clock moves it; on files it goes on from where it stood at the last stop.'
    },
    migrate: {
        synopsis: 'localgate migrate [--data-dir D]',
        flags: ['data-dir', 'memory'],
        explain: 'Applies pending migrations to every namespace (pay only once provisioned) and exits.'
    },
    provision: {
        synopsis: 'localgate provision pay [--data-dir D]',
        flags: ['data-dir', 'memory'],
        explain: 'Creates the pay database at PAY_DB_URL (else DATA_DIR/pay.db) and applies its schema; refuses a database holding other tables but no pay migrations. Records PAY_DB_PUBLISHABLE_KEY and PAY_DB_SECRET_KEY when both are set (a server running with them is ready on its next request), else a fresh key pair; an earlier pair stops working. Prints PAY_DB_URL, PAY_DB_PUBLISHABLE_KEY and PAY_DB_SECRET_KEY.'
    },
    'rotate-keys': {
        synopsis: 'localgate rotate-keys pay [--data-dir D]',
        flags: ['data-dir', 'memory'],
        explain: 'Records a new key pair in the provisioned pay database, retiring the old one, and prints the three settings.'
    },
    token: {
        synopsis: 'localgate token [--admin] <subject> [--ttl T] [--data-dir D | --memory]',
        flags: ['ttl', 'admin', 'data-dir', 'memory'],
        explain: 'Prints a bearer token for <subject>, alone on one line, signed with AUTH_JWT_SECRET or the secret a server started on DATA_DIR keeps there (it never makes one). --ttl: seconds, or 30m, 2h, 7d; from 1 second to 365 days; default 1h. --admin adds the claim role: "admin" that the /_instances routes need; its subject defaults to admin.'
    },
    seed: {
        synopsis: 'localgate seed --file F.json [--without-pay] [--data-dir D]',
        flags: ['file', 'without-pay', 'data-dir', 'no-seed'],
        explain: 'Loads a fixture file of records in the API\'s shape, {"<namespace>": {"<collection>": [records]}}, checked with the API\'s rules; records whose id exists are skipped (a wallet or transaction only when it holds what is stored), any other problem loads nothing (and leaves no new database file behind) and names the record and field. An export loads as it is; one of a newer format or schema is refused. Pay records need a provisioned pay database (`npx localgate provision pay`); --without-pay loads the rest and leaves them out.'
    },
    export: {
        synopsis: 'localgate export [--file F.json] [--data-dir D]',
        flags: ['file', 'data-dir'],
        explain: 'Writes every record of the configured databases (each namespace where its settings place it, and pay once provisioned) as one fixture file, opened by {"localgate": {"format": 1, "migrations": {...}}}: to F.json, else to standard output; GET /_export on a running server gives the same file. A data directory that does not exist is refused; one without databases gets new, empty ones. `npx localgate seed --file`, SEED=F.json and POST /_instances load it back.'
    },
    listen: {
        synopsis: 'localgate listen --forward-to URL [--url URL] [--instance ID] [--types pay.*,...] [--secret whsec_...] [--data-dir D | --memory]',
        flags: ['forward-to', 'url', 'instance', 'types', 'secret', 'data-dir', 'memory'],
        explain: 'Reads the event stream of a server (--url, default http://127.0.0.1:PORT) with an admin token it mints as `localgate token --admin` does, and posts each event written from now on, signed as Standard Webhooks says (the webhook-timestamp on the wall clock), to the --forward-to URL, printing a line per delivery: status, type, event id and time taken. --instance reads that instance\'s events instead of the default data set\'s; --types (an event type or a prefix ending in *, comma-separated or repeated) forwards only those; --secret signs with that whsec_ secret, else a new one, printed at the start. A dropped connection is opened again, after a wait of at most 10 s, resuming after the last event read. Stops on Ctrl-C (SIGINT) or SIGTERM.'
    }
};

class UsageError extends Error { }

export const maxTtlSeconds = 365 * 86400;


/** Runs one command line; resolves to the exit code (for start, once the server has stopped). */
export async function main(argv: string[], env: NodeJS.ProcessEnv, io: Io): Promise<number> {

    try {
        const { values, positionals } = parse(argv);
        if (values.version) {
            io.out(packageVersion());
            return 0;
        }

        const [command = 'start', ...args] = positionals;
        if (command === 'help' || values.help) {
            io.out(help(command === 'help' ? args[0] : positionals[0]));
            return 0;
        }

        const known = commands[command];
        if (!known) {
            throw new UsageError(`unknown command "${command}"`);
        }

        const refused = Object.keys(values).filter((flag) => !known.flags.includes(flag as Flag));
        if (refused.length) {
            throw new UsageError(`${command} does not take ${refused.map((flag) => `--${flag}`).join(', ')}: ${known.synopsis}`);
        }

        const { admin, ...rest } = values;
        const flags: Flags = { ...rest, seed: values['no-seed'] ? false : values.seed };
        const settings = settingsFromEnvironment(env, flags);

        switch (command) {
            case 'start': return await start({ ...settings, logFormat: logFormat(settings.logFormat, io.tty) }, io);
            case 'migrate': return await migrateAll(settings, io);
            // The pair set for a server is the pair recorded, so that the server needs no restart to be ready.
            case 'provision': return await provision(settings, args, io, (url, database) => provisionPay(url, database, settings.pay));
            case 'rotate-keys': return await provision(settings, args, io, rotatePayKeys, true);
            case 'token': return token(settings, args, { ttl: values.ttl, admin }, io);
            case 'export': return await exportFile(settings, values.file, io);
            case 'listen': return await listenCommand(settings, values, io);
            default: return await seed(settings, { file: values.file, withoutPay: values['without-pay'] }, io);
        }
    }
    catch (err) {
        // One line per refusal, whatever the failure underneath wrote (SQLite's integrity report is several).
        io.err(`localgate: ${(err as Error).message.trim().replace(/\s*\n\s*/g, '; ')}`);
        if (err instanceof UsageError) {
            io.err(usage);
            return 2;
        }

        return 1;
    }
}


function help(command: string | undefined): string {

    const known = command === undefined ? undefined : commands[command];
    if (!known) {
        return usage;
    }

    return `Usage: ${known.synopsis}\n\n${known.explain}`;
}


function packageVersion(): string {

    return (JSON.parse(Fs.readFileSync(Path.join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;
}


function parse(argv: string[]) {

    try {
        return Util.parseArgs({ args: argv, options, allowPositionals: true, strict: true });
    }
    catch (err) {
        throw new UsageError((err as Error).message);
    }
}


async function start(settings: Settings, io: Io): Promise<number> {

    const server = await createServer(settings);
    try {
        await server.start();
    }
    catch (err) {
        // Listening failed (the port is taken, say): close the databases before reporting it, with nothing logged
        // about a server that never served.
        server.logger.level = 'silent';
        await server.stop();
        if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
            throw new Error(`port ${settings.port} on ${settings.host} is in use by another program: stop it, or set PORT=0 (or --port 0) to take a free port`);
        }

        throw err;
    }

    io.out(`localgate listening on ${server.info.uri} with databases ${await databasesWhere(settings)}`);
    io.out(`Mint a token: ${tokenCommand(process.cwd())} <subject>`);
    io.out(`Console: ${server.info.uri}/console`);

    return await new Promise<number>((resolve) => {

        const stop = async (signal: NodeJS.Signals) => {

            process.off('SIGINT', stop);
            process.off('SIGTERM', stop);
            io.err(`localgate: ${signal} received, finishing requests in flight (at most ${settings.drainTimeoutMs} ms)`);
            await server.stop({ timeout: settings.drainTimeoutMs });
            resolve(0);
        };

        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
    });
}


async function migrateAll(settings: Settings, io: Io): Promise<number> {

    const data = await createEngine({ ...settings, seed: false, seedFile: undefined }).openDefault(wallContext());
    try {
        for (const [namespace, health] of Object.entries(await data.health())) {
            io.out(health.state === 'ready' ? `${namespace}: schema version ${health.schema_version}` : `${namespace}: not provisioned (run \`npx localgate provision pay\`)`);
        }
    }
    finally {
        await data.close();
    }

    return 0;
}


async function provision(settings: Settings, args: string[], io: Io, record: (url: string, database: DatabaseSettings) => Promise<PayCredentials>, rotated = false): Promise<number> {

    if (args.length !== 1 || args[0] !== 'pay') {
        throw new UsageError('provision and rotate-keys take one namespace: pay');
    }

    if (!settings.pay.url && settings.storage === 'memory') {
        throw new Error('set PAY_DB_URL or DATA_DIR to a directory: an in-memory pay database would vanish when this command exits (start with --memory-pay for pay in memory)');
    }

    const credentials = await record(settings.pay.url ?? Path.join(settings.dataDir, 'pay.db'), settings.database);
    for (const [name, value] of Object.entries(credentials)) {
        io.out(`${name}=${shellQuote(value)}`);
    }

    io.err(`localgate: ${nextStep(settings, rotated)}`);
    return 0;
}


// What a user does with the printed settings, on standard error so that the three lines alone go to a file.
function nextStep(settings: Settings, rotated: boolean): string {

    // The keys were both recorded from the environment, or neither: provisioning refuses half a pair.
    const { url, publishableKey } = settings.pay;
    if (!rotated && url && publishableKey) {
        return 'recorded the keys of this environment: a server running with these three settings serves pay from its next request, without a restart';
    }

    const restart = 'save the three lines (`> pay.env`), then start the server with them: `set -a; . ./pay.env; set +a; npm start`';
    return rotated ?
        `the old keys stopped working: a running server needs the new ones; ${restart}` :
        `a server serves pay once it has these three settings; a running one needs a restart with them: ${restart}`;
}


function token(settings: Settings, args: string[], flags: { ttl?: string; admin?: boolean }, io: Io): number {

    const subject = args.length === 1 ? args[0]!.trim() : (flags.admin && !args.length ? 'admin' : '');
    if (!subject) {
        throw new UsageError('token takes exactly one subject, for example: npx localgate token alice');
    }

    const secret = existingSecret(settings.jwtSecret, settings.dataDir);
    io.out(mintToken(secret, subject, ttlSeconds(flags.ttl ?? '1h'), { admin: flags.admin }));
    return 0;
}


interface ListenFlags {
    'forward-to'?: string;
    url?: string;
    instance?: string;
    types?: string[];
    secret?: string;
}


async function listenCommand(settings: Settings, flags: ListenFlags, io: Io): Promise<number> {

    if (!flags['forward-to']) {
        throw new UsageError('listen needs --forward-to URL, the handler to post events to, for example: npx localgate listen --forward-to http://localhost:4000/hooks');
    }

    const forwardTo = httpUrl('--forward-to', flags['forward-to']);

    // A server listening on every interface is reached on this machine's loopback.
    const host = ['0.0.0.0', '::'].includes(settings.host) ? '127.0.0.1' : settings.host;
    const url = httpUrl('--url', flags.url ?? `http://${host.includes(':') ? `[${host}]` : host}:${settings.port}`);
    if (flags.instance !== undefined && !flags.instance.trim()) {
        throw new UsageError('--instance must name an instance id, such as the id POST /_instances answered');
    }

    for (const type of (flags.types ?? []).flatMap((value) => value.split(',')).map((text) => text.trim()).filter(Boolean)) {
        const { error } = typePatternSchema.label('--types').validate(type, { errors: { wrap: { label: false } } });
        if (error) {
            throw new UsageError(`${error.message}: ${type}`);
        }
    }

    if (flags.secret !== undefined && !isSecret(flags.secret)) {
        throw new UsageError('--secret must be whsec_ followed by the base64 of 24 to 64 bytes, as Standard Webhooks reads it (leave it out for a new one)');
    }

    const jwtSecret = existingSecret(settings.jwtSecret, settings.dataDir);
    const stop = new AbortController();
    const stopped = (signal: NodeJS.Signals) => {

        process.off('SIGINT', stopped);
        process.off('SIGTERM', stopped);
        io.err(`localgate listen: ${signal} received, stopped`);
        stop.abort();
    };

    process.on('SIGINT', stopped);
    process.on('SIGTERM', stopped);
    try {
        return await listen({
            url,
            forwardTo,
            instance: flags.instance,
            types: typesOf(flags.types ?? []),
            secret: flags.secret ?? mintSecret(),
            token: () => mintToken(jwtSecret, 'localgate-listen', 3600, { admin: true }),
            timeoutMs: settings.webhookTimeoutMs
        }, io, stop.signal);
    }
    finally {
        process.off('SIGINT', stopped);
        process.off('SIGTERM', stopped);
    }
}


// An http: or https: URL a flag names, as typed; anything else is a usage error that says so.
function httpUrl(flag: string, text: string): string {

    let protocol = '';
    try {
        protocol = new URL(text).protocol;
    }
    catch {
        // Said below.
    }

    if (protocol !== 'http:' && protocol !== 'https:') {
        throw new UsageError(`${flag} must be an http: or https: URL, such as http://localhost:4000/hooks, not "${text}"`);
    }

    return text;
}


async function seed(settings: Settings, flags: { file?: string; withoutPay?: boolean }, io: Io): Promise<number> {

    const { file, withoutPay } = flags;
    if (!file) {
        throw new UsageError('seed needs --file F.json');
    }

    if (settings.storage === 'memory') {
        throw new Error('seed loads into the databases in DATA_DIR: in memory they would vanish when this command exits (give a running server a fixture with POST /_instances)');
    }

    const path = Path.resolve(file);
    const fixture = readFixtureFile(path);
    const load = withoutPay ? leavePayOut(fixture) : fixture;
    try {
        const counts = await seedDefaultDataSet(settings, load, path);
        io.out(Object.entries(counts).map(([namespace, count]) => `${namespace}: ${count} records added`).join('\n'));
    }
    catch (err) {
        if (err instanceof NoPayForFixture) {
            throw new Error(`${path}: pay: this data set has no pay database ready to load wallets into: run \`npx localgate provision pay\` first and set the PAY_DB_URL, PAY_DB_PUBLISHABLE_KEY and PAY_DB_SECRET_KEY it prints, or load the rest without pay: \`npx localgate seed --file ${shellQuote(file)} --without-pay\``);
        }

        throw err;
    }

    if (load !== fixture) {
        io.out('pay: skipped (--without-pay)');
    }

    return 0;
}


// --without-pay leaves a fixture's pay records out; whatever else the file holds is the load's to check.
function leavePayOut(fixture: unknown): unknown {

    if (typeof fixture !== 'object' || fixture === null || !('pay' in fixture)) {
        return fixture;
    }

    const rest: Record<string, unknown> = { ...fixture };
    delete rest.pay;
    return rest;
}


async function exportFile(settings: Settings, file: string | undefined, io: Io): Promise<number> {

    // The databases as they are: an export loads no seed into them. It opens them as a start does, so a data directory
    // without databases gets new, empty (migrated) ones; one that does not exist is refused rather than made, when a
    // database would live there.
    if (settings.storage === 'file' && inDataDir(settings) && !Fs.existsSync(settings.dataDir)) {
        throw new Error(`there is no data directory ${Path.resolve(settings.dataDir)} to export: name one a server or \`npx localgate seed\` wrote (--data-dir or DATA_DIR)`);
    }

    const data = await createEngine({ ...settings, seed: false, seedFile: undefined }).openDefault(wallContext());
    try {
        const text = JSON.stringify(await data.exportRecords(), null, 1);
        if (file === undefined) {
            io.out(text);
        }
        else {
            Fs.writeFileSync(file, `${text}\n`);
            io.err(`localgate: exported to ${Path.resolve(file)}`);
        }
    }
    finally {
        await data.close();
    }

    return 0;
}


// True when a database of the settings is an SQLite file in the data directory: a namespace placed nowhere else, or a
// file named inside it (pay's too).
function inDataDir(settings: Settings): boolean {

    const dir = Path.resolve(settings.dataDir);
    const inside = (file: string) => !/^\.\.(?:[\\/]|$)/.test(Path.relative(dir, Path.resolve(file)));
    const locations: [string, Location][] = [...Object.entries(settings.placements), ...(settings.payLocation ? [['pay', settings.payLocation] satisfies [string, Location]] : [])];
    return locations.some(([namespace, location]) => engineOf(location).files(location, namespace, dir).some(inside));
}


/**
 * The token command that runs as typed where the server was started: in localgate's own clone, its script with node
 * (npx there installs the clone into npm's cache and reads its whole dependency tree first: seconds, not half of one);
 * anywhere else, npx, which finds the installed package's bin at once.
 */
export function tokenCommand(cwd: string): string {

    return Path.resolve(cwd) === packageRoot ? 'node bin/localgate.js token' : 'npx localgate token';
}


/** The log format a start uses: auto becomes pretty on a terminal, json elsewhere. */
export function logFormat(setting: LogFormat, tty: boolean | undefined): LogFormat {

    return setting === 'auto' ? (tty ? 'pretty' : 'json') : setting;
}


/** Parses 90, 90s, 30m, 2h or 7d into seconds, from 1 second to 365 days. */
export function ttlSeconds(ttl: string): number {

    const seconds = durationSeconds(ttl);
    if (!seconds) {
        throw new UsageError(`--ttl must be a positive duration such as 3600, 30m, 2h or 7d, not "${ttl}"`);
    }

    if (seconds > maxTtlSeconds) {
        throw new UsageError(`--ttl must be at most 365 days (365d), not "${ttl}"`);
    }

    return seconds;
}


function shellQuote(value: string): string {

    return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
