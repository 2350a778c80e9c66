import Path from 'node:path';

import type { Settings } from '../config';
import { provisionPay, type PayCredentials } from '../storage';
import type { DatabaseSettings } from '../storage/settings';
import { shellQuote, UsageError, type Command, type Io } from './command';


export const command: Command = {
    synopsis: 'localgate provision pay [--data-dir D]',
    flags: ['data-dir', 'memory'],
    explain: 'Creates the pay database at PAY_DB_URL (else DATA_DIR/pay.db) and applies its schema; refuses a database holding other tables but no pay migrations. Records PAY_DB_PUBLISHABLE_KEY and PAY_DB_SECRET_KEY when both are set (a server running with them is ready on its next request), else a fresh key pair; an earlier pair stops working. Prints PAY_DB_URL, PAY_DB_PUBLISHABLE_KEY and PAY_DB_SECRET_KEY.',
    // The pair set for a server is the pair recorded, so that the server needs no restart to be ready.
    run: (settings, args, values, io) => recordPair(settings, args, io, (url, database) => provisionPay(url, database, settings.pay))
};


/** Records a pay key pair where the settings place pay's database (its file in DATA_DIR without PAY_DB_URL) and prints the three settings. */
export async function recordPair(settings: Settings, args: string[], io: Io, record: (url: string, database: DatabaseSettings) => Promise<PayCredentials>, rotated = false): Promise<number> {

    if (args.length !== 1 || args[0] !== 'pay') {
        throw new UsageError('provision and rotate-keys take one namespace: pay');
    }

    if (!settings.pay.url && settings.storage === 'memory') {
        throw new Error('set PAY_DB_URL or DATA_DIR to a directory: an in-memory pay database would vanish when this command exits (start with --memory-pay for pay in memory)');
    }

    const credentials = await record(settings.pay.url ?? Path.join(settings.dataDir, 'pay.db'), settings.database);
    for (const [name, value] of Object.entries(credentials)) {
        io.out(`${name}=${shellQuote(value)}`);
    }

    io.err(`localgate: ${nextStep(settings, rotated)}`);
    return 0;
}


// What a user does with the printed settings, on standard error so that the three lines alone go to a file.
function nextStep(settings: Settings, rotated: boolean): string {

    // The keys were both recorded from the environment, or neither: provisioning refuses half a pair.
    const { url, publishableKey } = settings.pay;
    if (!rotated && url && publishableKey) {
        return 'recorded the keys of this environment: a server running with these three settings serves pay from its next request, without a restart';
    }

    const restart = 'save the three lines (`> pay.env`), then start the server with them: `set -a; . ./pay.env; set +a; npm start`';
    return rotated ?
        `the old keys stopped working: a running server needs the new ones; ${restart}` :
        `a server serves pay once it has these three settings; a running one needs a restart with them: ${restart}`;
}
