'use strict';

// node bench/instance-pool.js (after npm run build): the suite benchmark's test (bench/suite/job.js) through the test
// kit, in one process, on a kit with the pool of instances made ahead (INSTANCE_POOL_MIB's default) and on one with
// it off (0), taking turns 10 tests at a time. Prints each one's median per test, whole test (instance, requests,
// close), and per step. Settings: BENCH_POOL_ROUNDS (120 turns each, the first 4 warm-up).

const { createTestKit } = require('../dist/testing');

const Job = require('./suite/job');


const internals = {
    rounds: Number(process.env.BENCH_POOL_ROUNDS ?? 120),
    warmUp: 4,
    batch: 10,
    steps: ['create', 'products', 'vehicles', 'bookings', 'new product', 'new booking', 'bookings again', 'close']
};


internals.median = function (values) {

    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
};


// One test, each step timed: [whole, ...steps] in ms.
internals.test = async function (kit) {

    const times = [];
    const started = process.hrtime.bigint();
    let at = started;
    const lap = () => {

        const now = process.hrtime.bigint();
        times.push(Number(now - at) / 1e6);
        at = now;
    };

    const t = await kit.instance();
    lap();
    const auth = t.auth(Job.caller);
    await Job.localgate(async (method, url, payload, authed) => {

        const res = await t.inject({ method, url, payload, headers: authed ? auth : {} });
        lap();
        return { status: res.statusCode, body: res.payload };
    });

    at = process.hrtime.bigint();
    await t.close();
    lap();
    return [Number(process.hrtime.bigint() - started) / 1e6, ...times];
};


internals.main = async function () {

    const kits = { pool: await createTestKit(), 'no pool': await createTestKit({ instancePoolMib: 0 }) };
    const times = { pool: [], 'no pool': [] };
    for (let i = 0; i < internals.rounds; ++i) {
        for (const key of i % 2 ? ['pool', 'no pool'] : ['no pool', 'pool']) {
            for (let j = 0; j < internals.batch; ++j) {
                const test = await internals.test(kits[key]);
                if (i >= internals.warmUp) {
                    times[key].push(test);
                }
            }
        }
    }

    for (const [key, tests] of Object.entries(times)) {
        const steps = internals.steps.map((step, index) => `${step} ${internals.median(tests.map((test) => test[index + 1])).toFixed(3)}`);
        process.stdout.write(`${key}: ${tests.length} tests, median ${internals.median(tests.map((test) => test[0])).toFixed(2)} ms a test; steps (medians, ms): ${steps.join(', ')}\n`);
    }

    await Promise.all(Object.values(kits).map((kit) => kit.close()));
};


internals.main().catch((err) => {

    console.error(err);
    process.exitCode = 1;
});
