'use strict';

// The loops the profiles of bench/README.md ("Events for free") were taken of, to run under node --cpu-prof:
//
//   npm run build && node --cpu-prof --cpu-prof-dir=/tmp/profile bench/profile.js write 5000 [DIST]
//
// write: product writes through server.inject on a server in memory, three rounds of the count, the CPU time per
// write printed after each; kit: the suite's test (bench/suite/job.js) through the test kit, the count of tests, the
// median printed. DIST is the build to load (dist/ by default; bench/.baseline/baseline-<commit>/dist for another,
// as `node -e "require('./bench/time').buildBaseline('<commit>')"` builds it). The profile opens in Chrome's DevTools
// (Performance, load profile) or any .cpuprofile viewer.

const Path = require('node:path');

const Job = require('./suite/job');


const internals = {
    bakery: 'd851fadb-03ca-5a24-ba16-c15cce19933b',
    secret: 'profile-secret-'.padEnd(64, 'x')
};


internals.write = async function (dist, count) {

    const Localgate = require(dist);

    const server = await Localgate.createServer({ storage: 'memory', logLevel: 'silent', jwtSecret: internals.secret });
    const authorization = `Bearer ${Localgate.mintToken(internals.secret, 'bench-writer', 3600)}`;
    try {
        for (let i = 0; i < 3; ++i) {
            const cpu = process.cpuUsage();
            for (let j = 0; j < count; ++j) {
                const res = await server.inject({ method: 'POST', url: '/v1/commerce/products', headers: { authorization }, payload: { name: 'Bench loaf', price: 2.5, currency: 'USD', business_id: internals.bakery } });
                if (res.statusCode !== 201) {
                    throw new Error(`POST /v1/commerce/products: ${res.statusCode} ${res.payload}`);
                }
            }

            const used = process.cpuUsage(cpu);
            process.stdout.write(`round ${i}: ${((used.user + used.system) / count).toFixed(1)} µs of CPU a write\n`);
        }
    }
    finally {
        await server.stop();
    }
};


internals.kit = async function (dist, count) {

    const { createTestKit } = require(Path.join(dist, 'testing'));

    const kit = await createTestKit();
    const times = [];
    try {
        for (let i = 0; i < count; ++i) {
            const started = process.hrtime.bigint();
            const t = await kit.instance();
            const auth = t.auth(Job.caller);
            await Job.localgate(async (method, url, payload, authed) => {

                const res = await t.inject({ method, url, payload, headers: authed ? auth : {} });
                return { status: res.statusCode, body: res.payload };
            });

            await t.close();
            times.push(Number(process.hrtime.bigint() - started) / 1e6);
        }
    }
    finally {
        await kit.close();
    }

    times.sort((a, b) => a - b);
    process.stdout.write(`${count} tests, median ${times[Math.floor(count / 2)].toFixed(2)} ms\n`);
};


internals.main = function ([loop = 'write', count = '5000', dist = Path.join(__dirname, '..', 'dist')]) {

    if (loop !== 'write' && loop !== 'kit') {
        throw new Error(`the loop is write or kit, not ${loop}`);
    }

    return internals[loop](Path.resolve(dist), Number(count));
};


internals.main(process.argv.slice(2)).catch((err) => {

    console.error(err);
    process.exitCode = 1;
});
