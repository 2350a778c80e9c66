import { wallContext } from '../record-context';
import type { Settings } from '../config';
import { createEngine } from '../storage';
import type { Command, Io } from './command';


export const command: Command = {
    synopsis: 'localgate migrate [--data-dir D]',
    flags: ['data-dir', 'memory'],
    explain: 'Applies pending migrations to every namespace (pay only once provisioned) and exits.',
    run: (settings, args, values, io) => migrateAll(settings, io)
};


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
