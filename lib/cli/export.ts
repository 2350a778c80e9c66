import Fs from 'node:fs';
import Path from 'node:path';

import { wallContext } from '../record-context';
import type { Settings } from '../config';
import { createEngine } from '../storage';
import { engineOf, type Location } from '../storage/engines';
import type { Command, Io } from './command';


export const command: Command = {
    synopsis: 'localgate export [--file F.json] [--data-dir D]',
    flags: ['file', 'data-dir'],
    explain: 'Writes every record of the configured databases (each namespace where its settings place it, and pay once provisioned) as one fixture file, opened by {"localgate": {"format": 1, "migrations": {...}}}: to F.json, else to standard output; GET /_export on a running server gives the same file. A data directory that does not exist is refused; one without databases gets new, empty ones. `npx localgate seed --file`, SEED=F.json and POST /_instances load it back.',
    run: (settings, args, values, io) => exportFile(settings, values.file, io)
};


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
