import { existingSecret, mintToken } from '../auth';
import type { Settings } from '../config';
import { mintSecret } from '../signing';
import { eventTypesOf } from '../outbox';
import { isSecret, typePatternSchema } from '../events/webhook-schemas';
import { listen, typesOf } from '../listen';
import { defaultServerUrl } from './admin-client';
import { UsageError, type Command, type Io } from './command';


export const command: Command = {
    synopsis: 'localgate listen --forward-to URL [--url URL] [--instance ID] [--types pay.*,...] [--secret whsec_...] [--data-dir D | --memory]',
    flags: ['forward-to', 'url', 'instance', 'types', 'secret', 'data-dir', 'memory'],
    explain: 'Reads the event stream of a server (--url, default http://127.0.0.1:PORT) with an admin token it mints as `localgate token --admin` does, and posts each event written from now on, signed as Standard Webhooks says (the webhook-timestamp on the wall clock), to the --forward-to URL, printing a line per delivery: status, type, event id and time taken. --instance reads that instance\'s events instead of the default data set\'s; --types (an event type or a prefix ending in *, comma-separated or repeated) forwards only those; --secret signs with that whsec_ secret, else a new one, printed at the start. A dropped connection is opened again, after a wait of at most 10 s, resuming after the last event read. Stops on Ctrl-C (SIGINT) or SIGTERM.',
    run: (settings, args, values, io) => forward(settings, values, io)
};

interface ListenFlags {
    'forward-to'?: string;
    url?: string;
    instance?: string;
    types?: string[];
    secret?: string;
}


async function forward(settings: Settings, flags: ListenFlags, io: Io): Promise<number> {

    if (!flags['forward-to']) {
        throw new UsageError('listen needs --forward-to URL, the handler to post events to, for example: npx localgate listen --forward-to http://localhost:4000/hooks');
    }

    const forwardTo = httpUrl('--forward-to', flags['forward-to']);

    const url = httpUrl('--url', flags.url ?? defaultServerUrl(settings));
    if (flags.instance !== undefined && !flags.instance.trim()) {
        throw new UsageError('--instance must name an instance id, such as the id POST /_instances answered');
    }

    for (const type of (flags.types ?? []).flatMap((value) => value.split(',')).map((text) => text.trim()).filter(Boolean)) {
        const { error } = typePatternSchema(eventTypesOf(settings.namespaces)).label('--types').validate(type, { errors: { wrap: { label: false } } });
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
