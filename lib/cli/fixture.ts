import Fs from 'node:fs';

import type { Settings } from '../config';
import { UsageError, type Command, type Io } from './command';


export const command: Command = {
    synopsis: 'localgate fixture from-har FILE.har [--out fixture.json]',
    flags: ['out'],
    explain: 'Reads an HTTP Archive (localgate record\'s, a browser\'s or Playwright\'s) and writes the records its answers held (businesses, products, offers, inquiries, scam reports, locations, vehicles, drivers, bookings, wallets and transactions, as their readers saw them) as a fixture file, ids kept, to --out or standard output: POST /_instances {"fixture": ...}, SEED=<file> and localgate seed --file load it. A record seen twice keeps the later answer; one that refers to a record the recording never showed is left out and named on standard error, never invented.',
    run: (settings, args, values, io) => fromHar(settings, args, values, io)
};


async function fromHar(settings: Settings, args: string[], flags: { out?: string }, io: Io): Promise<number> {

    const [verb, file, ...more] = args;
    if (verb !== 'from-har' || file === undefined || more.length) {
        throw new UsageError('fixture takes from-har and one recording, for example: npx localgate fixture from-har session.har --out fixture.json');
    }

    // A file that is no HAR this reads is said in one line (exit 1), as any failure of a command is.
    const [{ readHarFile }, { worldFromHar }] = await Promise.all([import('../drift/har'), import('../drift/world')]);
    const world = worldFromHar(readHarFile(file), settings.namespaces, 'latest');
    const text = `${JSON.stringify(world.fixture, null, 2)}\n`;
    for (const line of world.leftOut) {
        io.err(`left out: ${line}`);
    }

    const counts = Object.entries(world.counts).map(([collection, count]) => `${count} ${collection}`).join(', ');
    if (flags.out === undefined) {
        io.out(text.trimEnd());
    }
    else {
        Fs.writeFileSync(flags.out, text);
        io.out(`${flags.out}: ${counts || 'no records'}`);
    }

    return 0;
}
