'use strict';

// In a fresh process: how long createServer takes to give an initialized server with in-memory databases, migrations
// applied and demo data loaded, then stop it. Prints JSON: the first instance
// of the process (it pays for lazy initialisation) and the next ones.

const Localgate = require('../dist');


const internals = {};


internals.time = async function () {

    const started = process.hrtime.bigint();
    const server = await Localgate.createServer({ dataDir: ':memory:', logLevel: 'silent' });
    await server.stop();
    return Number(process.hrtime.bigint() - started) / 1e6;
};


internals.main = async function (count) {

    const first = await internals.time();
    const times = [];
    for (let i = 0; i < count; ++i) {
        times.push(await internals.time());
    }

    process.stdout.write(JSON.stringify({ first, times }) + '\n');
};


internals.main(Number(process.argv[2] ?? 50));
