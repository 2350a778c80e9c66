'use strict';

// Runs one Node target of the suite benchmark in a process of its own, as a suite runs in its own: the orchestrator's
// process also holds PGlite (PostgreSQL in WebAssembly) and the other targets' clients, whose memory and garbage
// collection would be charged to whichever target runs next. Started by inProcess() below with the target's factory
// (a name exported by bench/suite/localgate.js) and its argument; reads "run" lines on stdin and answers each with
// {"ms", "found"} (the test timed here), or {"error"}.

const Readline = require('node:readline');


const internals = {};


internals.main = async function () {

    const [factory, argument] = [process.argv[2], JSON.parse(process.argv[3])];
    const target = require('./localgate')[factory](argument);

    await target.setup();
    process.stdout.write('ready\n');
    for await (const line of Readline.createInterface({ input: process.stdin })) {
        if (line !== 'run') {
            continue;
        }

        try {
            const started = process.hrtime.bigint();
            const found = await target.test();
            process.stdout.write(`${JSON.stringify({ ms: Number(process.hrtime.bigint() - started) / 1e6, found })}\n`);
        }
        catch (err) {
            process.stdout.write(`${JSON.stringify({ error: err.message })}\n`);
        }
    }

    await target.teardown();
};


if (require.main === module) {
    internals.main().catch((err) => {

        process.stdout.write(`${JSON.stringify({ error: err.message })}\n`);
        process.exit(1);
    });
}
