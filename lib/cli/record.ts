import Path from 'node:path';

import type { Settings } from '../config';
import { UsageError, type Command, type Io } from './command';


export const command: Command = {
    synopsis: 'localgate record --upstream URL [--port 4010] [--out session.har]',
    flags: ['upstream', 'port', 'out'],
    explain: 'Listens on 127.0.0.1:--port (default 4010) as a proxy to the --upstream URL (http or https, a path under it kept as the base): each request is forwarded as it came and its answer passed back unchanged, and the exchange is written to --out (default session.har), an HTTP Archive (HAR 1.2) rewritten whole as exchanges come. Credentials are hidden before anything is written (Authorization, cookies, keys and any header, query parameter or JSON field named as one, tokens and whsec_ secrets anywhere); each caller is kept as a stable alias instead (_caller: caller-1, caller-2, ... by the credential it sent), so that a replay acts as the same callers. A line a exchange; an upstream that cannot be reached is answered 502 upstream_unreachable and said in a line. At most 10,000 exchanges are recorded and bodies of at most 1 MiB kept. Stops on Ctrl-C (SIGINT) or SIGTERM.',
    run: (settings, args, values, io) => record(settings, values, io)
};


async function record(settings: Settings, flags: { upstream?: string; port?: string; out?: string }, io: Io): Promise<number> {

    if (!flags.upstream) {
        throw new UsageError('record needs --upstream URL, the hosted API to record, for example: npx localgate record --upstream https://api.example.com');
    }

    const upstream = URL.canParse(flags.upstream) ? new URL(flags.upstream) : null;
    if (upstream === null || !['http:', 'https:'].includes(upstream.protocol) || `${upstream.search}${upstream.username}${upstream.password}` !== '') {
        throw new UsageError(`--upstream must be an http:// or https:// URL with no query or credentials in it: ${flags.upstream}`);
    }

    // --port is read with the settings (as PORT is), so it is a port by then; the recorder's own default is 4010.
    const port = flags.port === undefined ? 4010 : settings.port;
    const out = Path.resolve(flags.out ?? 'session.har');
    // Loaded when asked for, as drift and fixture are: `localgate start` does not pay for what it does not run.
    const { startRecorder } = await import('../record');
    const recorder = await startRecorder({ upstream, port, out, log: io.out });
    io.out(`localgate record: ${recorder.url} → ${upstream.origin}${upstream.pathname.replace(/\/$/, '')}, writing ${out} (Ctrl-C stops)`);
    const stopped = await new Promise<NodeJS.Signals>((resolve) => {

        const stop = (signal: NodeJS.Signals) => {

            process.off('SIGINT', stop);
            process.off('SIGTERM', stop);
            resolve(signal);
        };

        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
    });
    await recorder.close();
    io.out(`localgate record: ${stopped} received: ${recorder.entries} exchange${recorder.entries === 1 ? '' : 's'} in ${out}`);
    return 0;
}
