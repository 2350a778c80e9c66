import { existingSecret, mintToken } from '../auth';
import type { Settings } from '../config';
import { parseDurationSeconds } from '../durations';
import { UsageError, type Command, type Io } from './command';


export const command: Command = {
    synopsis: 'localgate token [--admin] <subject> [--ttl T] [--data-dir D | --memory]',
    flags: ['ttl', 'admin', 'data-dir', 'memory'],
    explain: 'Prints a bearer token for <subject>, alone on one line, signed with AUTH_JWT_SECRET or the secret a server started on DATA_DIR keeps there (it never makes one). --ttl: seconds, or 30m, 2h, 7d; from 1 second to 365 days; default 1h. --admin adds the claim role: "admin" that the /_instances routes need; its subject defaults to admin.',
    run: (settings, args, values, io) => Promise.resolve(token(settings, args, { ttl: values.ttl, admin: values.admin }, io))
};

export const maxTtlSeconds = 365 * 86400;


function token(settings: Settings, args: string[], flags: { ttl?: string; admin?: boolean }, io: Io): number {

    const [named, ...more] = args;
    const subject = named === undefined ? (flags.admin ? 'admin' : '') : (more.length ? '' : named.trim());
    if (!subject) {
        throw new UsageError('token takes exactly one subject, for example: npx localgate token alice');
    }

    const secret = existingSecret(settings.jwtSecret, settings.dataDir);
    io.out(mintToken(secret, subject, ttlSeconds(flags.ttl ?? '1h'), { admin: flags.admin }));
    return 0;
}


/** Parses 90, 90s, 30m, 2h or 7d into seconds, from 1 second to 365 days. */
export function ttlSeconds(ttl: string): number {

    const seconds = parseDurationSeconds(ttl);
    if (!seconds) {
        throw new UsageError(`--ttl must be a positive duration such as 3600, 30m, 2h or 7d, not "${ttl}"`);
    }

    if (seconds > maxTtlSeconds) {
        throw new UsageError(`--ttl must be at most 365 days (365d), not "${ttl}"`);
    }

    return seconds;
}
