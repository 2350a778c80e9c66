import Fs from 'node:fs';
import Path from 'node:path';

import { locationSetting, placedNamespaces, settingsFromEnvironment, type Flags } from '../config';
import { builtInNamespaces } from '../namespaces';
import { packageRoot } from '../paths';
import { fieldOf, thrownMessage } from '../thrown';
import { parse, UsageError, type Command, type Io } from './command';
import { command as exportCommand } from './export';
import { command as listen } from './listen';
import { command as migrate } from './migrate';
import { command as drift } from './drift';
import { command as fixture } from './fixture';
import { command as provision } from './provision';
import { command as record } from './record';
import { command as rotateKeys } from './rotate-keys';
import { command as scenario } from './scenario';
import { command as seed } from './seed';
import { command as start } from './start';
import { command as token } from './token';
import { command as trigger } from './trigger';


export type { Io } from './command';

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
  scenario run FILE...    run scenario files on fresh instances, a line a step (--url, --reporter tap|junit, --out)
  trigger <event-type>    make an event of that type happen through the API, with its built-in scenario (--set, --instance, --url)
  record --upstream URL   a proxy to the hosted API that writes every exchange to an HTTP Archive (--port 4010, --out session.har)
  fixture from-har FILE   write the records a recording saw as a fixture file (--out F.json; to standard output without it)
  drift FILE.har          replay a recording on a fresh instance and report where the answers part (--url, --ignore, --report, --markdown, --strict)
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

// The commands by name: what each takes (any other flag is a usage error) and what it runs.
const commands: Record<string, Command> = {
    start,
    migrate,
    provision,
    'rotate-keys': rotateKeys,
    token,
    seed,
    export: exportCommand,
    listen,
    scenario,
    trigger,
    record,
    fixture,
    drift
};


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

        const refused = Object.keys(values).filter((flag) => !known.flags.some((taken) => taken === flag));
        if (refused.length) {
            throw new UsageError(`${command} does not take ${refused.map((flag) => `--${flag}`).join(', ')}: ${known.synopsis}`);
        }

        // The settings read the flags they share with the environment; --no-seed is SEED=none.
        const flags: Flags = { ...values, seed: values['no-seed'] ? false : values.seed };
        return await known.run(settingsFromEnvironment(builtInNamespaces, env, flags), args, values, io);
    }
    catch (err) {
        // One line per refusal, whatever the failure underneath wrote (SQLite's integrity report is several).
        io.err(`localgate: ${thrownMessage(err).trim().replace(/\s*\n\s*/g, '; ')}`);
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

    return String(fieldOf(JSON.parse(Fs.readFileSync(Path.join(packageRoot, 'package.json'), 'utf8')), 'version'));
}
