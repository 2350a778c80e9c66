import Path from 'node:path';
import Util from 'node:util';

import { mintToken, resolveSecret } from './auth';
import { wallContext } from './clock';
import { durationSeconds, settingsFromEnvironment, type Flags, type Settings } from './config';
import { readFixtureFile } from './fixtures';
import { createServer } from './index';
import { createEngine, provisionPay } from './storage';


export interface Io {
    out(line: string): void;
    err(line: string): void;
}

export const usage = `Usage: localgate <command> [options]

Commands:
  start                   start the service (default)
  migrate                 apply pending migrations and exit
  provision pay           create the pay database and print the settings to export
  token [--admin] <subject>  print a bearer token for <subject> (--ttl 1h, 30m, 2d or seconds);
                          --admin adds the role claim the /_instances routes need (subject default: admin)
  seed --file F.json      load a fixture file {"<namespace>": {"<collection>": [records]}}

Options:
  --port N, --host H, --data-dir D, --memory, --memory-pay, --no-seed, --log-level L, --ttl T,
  --admin, --file F, --help
Settings are read from the environment too (PORT, HOST, DATA_DIR, AUTH_JWT_SECRET, PAY_DB_URL,
PAY_DB_PUBLISHABLE_KEY, PAY_DB_SECRET_KEY, LOG_LEVEL, CORS_ORIGINS, SEED, DRAIN_TIMEOUT_MS,
INSTANCE_IDLE_TTL, MAX_INSTANCES, MEMORY_PAY).`;

const options = {
    port: { type: 'string' },
    host: { type: 'string' },
    'data-dir': { type: 'string' },
    memory: { type: 'boolean' },
    'memory-pay': { type: 'boolean' },
    admin: { type: 'boolean' },
    seed: { type: 'boolean' },
    'no-seed': { type: 'boolean' },
    'log-level': { type: 'string' },
    ttl: { type: 'string' },
    file: { type: 'string' },
    help: { type: 'boolean', short: 'h' }
} as const;

class UsageError extends Error { }


/** Runs one command line; resolves to the exit code (for start, once the server has stopped). */
export async function main(argv: string[], env: NodeJS.ProcessEnv, io: Io): Promise<number> {

    try {
        const { values, positionals } = parse(argv);
        if (values.help) {
            io.out(usage);
            return 0;
        }

        const [command = 'start', ...args] = positionals;
        const { admin, ...rest } = values;
        const flags: Flags = { ...rest, seed: values['no-seed'] ? false : values.seed };
        const settings = settingsFromEnvironment(env, flags);

        switch (command) {
            case 'start': return await start(settings, io);
            case 'migrate': return migrateAll(settings, io);
            case 'provision': return provision(settings, args, io);
            case 'token': return token(settings, args, { ttl: values.ttl, admin }, io);
            case 'seed': return seed(settings, values.file, io);
            default: throw new UsageError(`unknown command "${command}"`);
        }
    }
    catch (err) {
        io.err(`localgate: ${(err as Error).message}`);
        if (err instanceof UsageError) {
            io.err(usage);
            return 2;
        }

        return 1;
    }
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
        // Listening failed (the port is taken, say): close the databases before reporting it.
        await server.stop();
        throw err;
    }

    const storage = settings.storage === 'memory' ? 'in memory' : `in ${Path.resolve(settings.dataDir)}`;
    io.out(`localgate listening on ${server.info.uri} with databases ${storage}`);
    io.out('Mint a token: npx localgate token <subject>   (or: npm run --silent token -- <subject>)');

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


function migrateAll(settings: Settings, io: Io): number {

    const data = createEngine({ ...settings, seed: false }).openDefault(wallContext());
    try {
        for (const [namespace, health] of Object.entries(data.health())) {
            io.out(health.state === 'ready' ? `${namespace}: schema version ${health.schema_version}` : `${namespace}: not provisioned (run \`localgate provision pay\`)`);
        }
    }
    finally {
        data.close();
    }

    return 0;
}


function provision(settings: Settings, args: string[], io: Io): number {

    if (args.length !== 1 || args[0] !== 'pay') {
        throw new UsageError('provision takes one namespace: pay');
    }

    if (!settings.pay.url && settings.storage === 'memory') {
        throw new Error('set PAY_DB_URL or DATA_DIR to a directory: an in-memory pay database would vanish when this command exits (start with --memory-pay for pay in memory)');
    }

    const credentials = provisionPay(settings.pay.url ?? Path.join(settings.dataDir, 'pay.db'));
    for (const [name, value] of Object.entries(credentials)) {
        io.out(`${name}=${shellQuote(value)}`);
    }

    return 0;
}


function token(settings: Settings, args: string[], flags: { ttl?: string; admin?: boolean }, io: Io): number {

    const subject = args.length === 1 ? args[0]!.trim() : (flags.admin && !args.length ? 'admin' : '');
    if (!subject) {
        throw new UsageError('token takes exactly one subject, for example: localgate token alice');
    }

    const secret = resolveSecret(settings.jwtSecret, settings.dataDir, true);
    io.out(mintToken(secret, subject, ttlSeconds(flags.ttl ?? '1h'), { admin: flags.admin }));
    return 0;
}


function seed(settings: Settings, file: string | undefined, io: Io): number {

    if (!file) {
        throw new UsageError('seed needs --file F.json');
    }

    const data = createEngine({ ...settings, seed: false }).openDefault(wallContext());
    try {
        const path = Path.resolve(file);
        const counts = data.loadFixture(readFixtureFile(path), path);
        io.out(Object.entries(counts).map(([namespace, count]) => `${namespace}: ${count} records added`).join('\n'));
    }
    finally {
        data.close();
    }

    return 0;
}


/** Parses 90, 90s, 30m, 2h or 7d into seconds. */
export function ttlSeconds(ttl: string): number {

    const seconds = durationSeconds(ttl);
    if (!seconds) {
        throw new UsageError(`--ttl must be a positive duration such as 3600, 30m, 2h or 7d, not "${ttl}"`);
    }

    return seconds;
}


function shellQuote(value: string): string {

    return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
