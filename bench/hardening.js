'use strict';

// BENCH_ONLY=hardening npm run bench: what the requests that once stalled the server cost now, in process, on one
// server in memory (server.inject). Each attack runs once, then /health is timed alone; the journal's heap is read
// after a garbage collection (the script turns on --expose-gc for itself).

const V8 = require('node:v8');
const Vm = require('node:vm');

const Localgate = require('../dist');


V8.setFlagsFromString('--expose-gc');

const internals = {
    gc: Vm.runInNewContext('gc'),
    arrays: `[${'{},'.repeat(5_400)}{}]`
};


internals.time = async function (send) {

    const start = performance.now();
    await send();
    return performance.now() - start;
};


internals.heap = function () {

    internals.gc();
    internals.gc();
    return process.memoryUsage().heapUsed;
};


internals.main = async function () {

    const server = await Localgate.createServer({ storage: 'memory', logLevel: 'silent', journalBudgetMib: 16 });
    const user = { authorization: `Bearer ${Localgate.mintToken(server.app.localgate.secret, 'ann')}` };
    const admin = { authorization: `Bearer ${Localgate.mintToken(server.app.localgate.secret, 'admin', 3600, { admin: true })}` };
    const health = () => internals.time(() => server.inject('/health'));
    const count = (pattern) => server.inject({ method: 'POST', url: '/_requests/count', headers: admin, payload: pattern });
    const rows = [];
    const measure = async (what, send) => {

        const ms = await internals.time(send);
        rows.push([what, ms, await health()]);
    };

    // Warm up the routes, RE2 and the JSON paths, so that the first attack does not pay for loading them.
    await server.inject('/v1/commerce/nothing');
    await count({ headers: { 'x-t': { matches: 'a+' } }, bodyPatterns: [{ matchesJsonPath: '$..*' }] });

    await measure('GET /v1/commerce/products/<8 KB>/x (near miss)', () => server.inject(`/v1/commerce/products/${'p'.repeat(8192)}/x`));
    await measure('GET /v1/commerce/products/<16 KB>/x (near miss)', () => server.inject(`/v1/commerce/products/${'p'.repeat(16_000)}/x`));
    await server.inject({ url: '/v1/weather/status', headers: { 'x-t': `${'a'.repeat(34)}!` } });
    await measure('count, header matches (a+)+ against 35 characters', () => count({ headers: { 'x-t': { matches: '(a+)+' } } }));
    await measure('count, matchesJsonPath $..*..*..*..* (refused)', () => count({ bodyPatterns: [{ matchesJsonPath: '$..*..*..*..*' }] }));
    await measure('3 POSTs of 64 KB "eyJeyJ…", then the journal listed', async () => {

        for (let i = 0; i < 3; ++i) {
            await server.inject({ method: 'POST', url: '/v1/commerce/products', headers: user, payload: { name: 'eyJ'.repeat(21_800) } });
        }

        await server.inject({ url: '/_requests?limit=100', headers: admin });
    });

    // The worst a pattern within the limits costs: 1,000 entries, each with a 15 KB header, and a pattern of nearly
    // 200 RE2 instructions that matches the whole of each, so no match ends early.
    await server.inject({ method: 'DELETE', url: '/_requests', headers: admin });
    const wide = 'a'.repeat(15_000);
    for (let i = 0; i < 1000; ++i) {
        await server.inject({ url: '/v1/weather/status', headers: { 'x-t': wide } });
    }

    await count({});
    await measure('count, 1,000 entries with a 15 KB header each, (?:.{95}|a)*(?:.{90}|b)* (193 instructions)', () => count({ headers: { 'x-t': { matches: '(?:.{95}|a)*(?:.{90}|b)*' } } }));

    // The journal's memory: a 16 MiB budget filled with 16 KB bodies of [{},{},…].
    await server.inject({ method: 'DELETE', url: '/_requests', headers: admin });
    const before = internals.heap();
    for (let i = 0; i < 2000; ++i) {
        await server.inject({ method: 'POST', url: '/v1/commerce/products', headers: { ...user, 'content-type': 'application/json' }, payload: internals.arrays });
    }

    const kept = JSON.parse((await server.inject({ url: '/_requests?limit=1', headers: admin })).payload).total;
    const grown = internals.heap() - before;

    console.log('| request | its time | /health after it |');
    console.log('|---|---|---|');
    for (const [what, ms, after] of rows) {
        console.log(`| ${what} | ${ms.toFixed(1)} ms | ${after.toFixed(1)} ms |`);
    }

    console.log(`\nJournal budget 16 MiB, 2,000 POSTs of 16 KB [{},{},…]: ${kept} kept, heap grown ${(grown / 2 ** 20).toFixed(1)} MiB`);
    await server.stop();
};


module.exports = { main: internals.main };
