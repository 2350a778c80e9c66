import Path from 'node:path';

import type { Settings } from '../config';
import { readFixtureFile } from '../fixtures';
import { seedDefaultDataSet } from '../storage';
import { NoPayForFixture } from '../storage/data-set';
import { shellQuote, UsageError, type Command, type Io } from './command';


export const command: Command = {
    synopsis: 'localgate seed --file F.json [--without-pay] [--data-dir D]',
    flags: ['file', 'without-pay', 'data-dir', 'no-seed'],
    explain: 'Loads a fixture file of records in the API\'s shape, {"<namespace>": {"<collection>": [records]}}, checked with the API\'s rules; records whose id exists are skipped (a wallet or transaction only when it holds what is stored), any other problem loads nothing (and leaves no new database file behind) and names the record and field. An export loads as it is; one of a newer format or schema is refused. Pay records need a provisioned pay database (`npx localgate provision pay`); --without-pay loads the rest and leaves them out.',
    run: (settings, args, values, io) => seed(settings, { file: values.file, withoutPay: values['without-pay'] }, io)
};


async function seed(settings: Settings, flags: { file?: string; withoutPay?: boolean }, io: Io): Promise<number> {

    const { file, withoutPay } = flags;
    if (!file) {
        throw new UsageError('seed needs --file F.json');
    }

    if (settings.storage === 'memory') {
        throw new Error('seed loads into the databases in DATA_DIR: in memory they would vanish when this command exits (give a running server a fixture with POST /_instances)');
    }

    const path = Path.resolve(file);
    const fixture = readFixtureFile(path);
    const load = withoutPay ? leavePayOut(fixture) : fixture;
    try {
        const counts = await seedDefaultDataSet(settings, load, path);
        io.out(Object.entries(counts).map(([namespace, count]) => `${namespace}: ${count} records added`).join('\n'));
    }
    catch (err) {
        if (err instanceof NoPayForFixture) {
            throw new Error(`${path}: pay: this data set has no pay database ready to load wallets into: run \`npx localgate provision pay\` first and set the PAY_DB_URL, PAY_DB_PUBLISHABLE_KEY and PAY_DB_SECRET_KEY it prints, or load the rest without pay: \`npx localgate seed --file ${shellQuote(file)} --without-pay\``);
        }

        throw err;
    }

    if (load !== fixture) {
        io.out('pay: skipped (--without-pay)');
    }

    return 0;
}


// --without-pay leaves a fixture's pay records out; whatever else the file holds is the load's to check.
function leavePayOut(fixture: unknown): unknown {

    if (typeof fixture !== 'object' || fixture === null || !('pay' in fixture)) {
        return fixture;
    }

    const rest: Record<string, unknown> = { ...fixture };
    delete rest.pay;
    return rest;
}
