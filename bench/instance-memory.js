'use strict';

// In a fresh process (run with --expose-gc): the memory that live demo-seeded instances hold. One server (createServer
// with databases in memory, the cap raised to the count), its resident set size after a garbage collection; then the
// given number of instances, and the size again; then one product page read in each (which opens its commerce
// database's statements and caches), and the size again; then one vehicle page in each (logistics, the other database
// the API reads; weather has none in use), and the size again. Prints JSON: the sizes in bytes at each step, with the
// V8 heap and the memory outside it.
// Argument: the number of instances (1000).

const Localgate = require('../dist');


const internals = {};


internals.usage = function () {

    global.gc();
    const { rss, heapUsed, external, arrayBuffers } = process.memoryUsage();
    return { rss, heapUsed, external, arrayBuffers };
};


internals.readEach = async function (server, instances, path) {

    for (const instance of instances) {
        const res = await server.inject(`${instance.basePath}${path}`);
        if (res.statusCode !== 200) {
            throw new Error(`${instance.basePath}${path}: ${res.statusCode} ${res.payload.slice(0, 300)}`);
        }
    }
};


internals.main = async function (count) {

    const server = await Localgate.createServer({ dataDir: ':memory:', logLevel: 'silent', maxInstances: count });
    try {
        const registry = server.app.localgate.instances;
        // The first instance of a process builds the images every later one copies: paid before the baseline.
        await registry.delete((await registry.create({ seed: 'demo', ids: 'random', pay: false })).id);
        await server.inject('/v1/commerce/products?limit=20');
        const baseline = internals.usage();

        const started = process.hrtime.bigint();
        const instances = [];
        for (let i = 0; i < count; ++i) {
            instances.push(await registry.create({ seed: 'demo', ids: 'random', pay: false }));
        }

        const createMs = Number(process.hrtime.bigint() - started) / 1e6;
        const created = internals.usage();

        await internals.readEach(server, instances, '/v1/commerce/products?limit=20');
        const read = internals.usage();
        await internals.readEach(server, instances, '/v1/logistics/vehicles?limit=20');
        const readBoth = internals.usage();
        process.stdout.write(JSON.stringify({ count, live: registry.list().length, createMs, baseline, created, read, readBoth }) + '\n');
    }
    finally {
        await server.stop();
    }
};


internals.main(Number(process.argv[2] ?? 1000));
