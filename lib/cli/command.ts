import Util from 'node:util';

import type { Settings } from '../config';
import { thrownMessage } from '../thrown';


// What every command shares: the flags the command line knows, how it parses them, and the shape of a command.

export interface Io {
    out(line: string): void;
    err(line: string): void;
    /** True when standard output is a terminal: LOG_FORMAT=auto then logs pretty lines. */
    tty?: boolean;
}

/** A command line refused as typed: exits 2, with the usage after the reason. */
export class UsageError extends Error { }

export const flagOptions = {
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
    reporter: { type: 'string' },
    set: { type: 'string', multiple: true },
    out: { type: 'string' },
    upstream: { type: 'string' },
    ignore: { type: 'string', multiple: true },
    report: { type: 'string' },
    markdown: { type: 'string' },
    strict: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean', short: 'v' }
} as const;

export type Flag = keyof typeof flagOptions;

/** The flags of a command line as parsed. */
export type FlagValues = ReturnType<typeof parse>['values'];

/** A command: what it takes, how `help <command>` explains it, and what it does with the settings read for it. */
export interface Command {
    synopsis: string;
    flags: Flag[];
    explain: string;
    run(settings: Settings, args: string[], values: FlagValues, io: Io): Promise<number>;
}


/** Parses a command line's flags and positional words; an unknown or malformed flag is a usage error. */
export function parse(argv: string[]) {

    try {
        return Util.parseArgs({ args: argv, options: flagOptions, allowPositionals: true, strict: true });
    }
    catch (err) {
        throw new UsageError(thrownMessage(err));
    }
}


/** A value as a shell reads it back: bare when it is safe, else in single quotes. */
export function shellQuote(value: string): string {

    return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
