import Crypto from 'node:crypto';
import Fs from 'node:fs';

import { existingSecret } from '../auth';
import type { Settings } from '../config';
import { createServer } from '../index';
import { UsageError, type Command, type Io } from './command';


export const command: Command = {
    synopsis: 'localgate drift FILE.har [--url URL] [--ignore JSONPATH ...] [--report drift.json] [--markdown drift.md] [--strict]',
    flags: ['url', 'ignore', 'report', 'markdown', 'strict'],
    explain: [
        'Replays a recording (an HTTP Archive: localgate record\'s, a browser\'s, Playwright\'s) on a fresh instance made from the world it started from (the records it saw before its writes made any),',
        'every request in order as its recorded caller, on the server at --url (with tokens signed by AUTH_JWT_SECRET) or on one it starts in memory, and compares each answer with the recorded one:',
        'a status that differs, a field removed, added or of another type, a promised header missing (X-Total-Count, Location) are errors; a value that differs is a warning',
        '(ids the replay made of recorded records are mapped, and instants and fields ending in _at are not compared, nor the fields --ignore names, a JSONPath into the answer, repeated).',
        'Each recorded answer is also held to localgate\'s own schema of its route: where the hosted service parts from the contract. A route localgate does not serve is a warning (an error with --strict).',
        'Prints a line an operation; --report writes the whole report as JSON, --markdown as Markdown. Exits 1 when there is an error, 0 otherwise.'
    ].join(' '),
    run: (settings, args, values, io) => replay(settings, args, values, io)
};

interface DriftFlags {
    url?: string;
    ignore?: string[];
    report?: string;
    markdown?: string;
    strict?: boolean;
}


async function replay(settings: Settings, args: string[], flags: DriftFlags, io: Io): Promise<number> {

    const [file, ...more] = args;
    if (file === undefined || more.length) {
        throw new UsageError('drift takes one recording, for example: npx localgate drift session.har --report drift.json');
    }

    const url = flags.url === undefined ? null : URL.canParse(flags.url) ? new URL(flags.url) : null;
    if (flags.url !== undefined && (url === null || !['http:', 'https:'].includes(url.protocol))) {
        throw new UsageError(`--url must be the http: or https: URL of a localgate server, such as http://127.0.0.1:3000, not "${flags.url}"`);
    }

    const [{ drift }, { readHarFile }, { driftLines, driftMarkdown }, { httpTarget, injectTarget }] = await Promise.all([import('../drift/drift'), import('../drift/har'), import('../drift/report'), import('../drift/targets')]);
    const exchanges = readHarFile(file);
    // The routes and schemas the recording is held to are this localgate's, whichever server replays it.
    const server = await createServer({ storage: 'memory', memoryPay: true, logLevel: 'silent', jwtSecret: Crypto.randomBytes(32).toString('hex'), port: 0 });
    try {
        const target = url === null ? injectTarget(server) : httpTarget(url, existingSecret(settings.jwtSecret, settings.dataDir));
        const report = await drift(server, target, exchanges, { ignore: flags.ignore ?? [], strict: flags.strict ?? false });
        for (const line of driftLines(report)) {
            io.out(line);
        }

        if (flags.report !== undefined) {
            Fs.writeFileSync(flags.report, `${JSON.stringify(report, null, 2)}\n`);
        }

        if (flags.markdown !== undefined) {
            Fs.writeFileSync(flags.markdown, driftMarkdown(report));
        }

        return report.totals.errors ? 1 : 0;
    }
    finally {
        await server.stop();
    }
}
