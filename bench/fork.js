'use strict';

// node bench/fork.js (after npm run build): how long a fork of an instance takes in process, through the test kit.
// The source is a demo instance with pay; each fork is timed from the call to the resolved instance, then closed.
// Settings: BENCH_FORKS (300), after 20 forks of warm-up.

const { createTestKit } = require('../dist/testing');


const internals = {
    forks: Number(process.env.BENCH_FORKS ?? 300),
    warmUp: 20
};


internals.main = async function () {

    const kit = await createTestKit();
    const source = await kit.instance({ pay: true });
    const times = [];
    for (let i = 0; i < internals.forks + internals.warmUp; ++i) {
        const started = process.hrtime.bigint();
        const fork = await source.fork();
        times.push(Number(process.hrtime.bigint() - started) / 1e6);
        await fork.close();
    }

    const timed = times.slice(internals.warmUp).sort((a, b) => a - b);
    const at = (share) => timed[Math.min(timed.length - 1, Math.floor(share * timed.length))].toFixed(3);
    console.log(`fork of a demo instance with pay, in process: median ${at(0.5)} ms, p95 ${at(0.95)} ms over ${timed.length} forks`);
    await kit.close();
};


internals.main().catch((err) => {

    console.error(err);
    process.exit(1);
});
