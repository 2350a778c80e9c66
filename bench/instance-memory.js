'use strict';

// In a fresh process (run with --expose-gc): the memory that live instances hold. One server (createServer with
// databases in memory, the cap raised to the count), its resident set size after a garbage collection; then the given
// number of instances, and the size again. The mode (second argument) says which instances:
// - demo (the default): demo-seeded; then one product page read in each (which opens its commerce database's
//   statements and caches), and the size again; then one vehicle page in each (logistics, the other database the API
//   reads; weather has none in use), and the size again;
// - empty: instances with no records (`seed: 'none'`), nothing read;
// - endpoints: demo-seeded, each given 8 webhook endpoints (PUT /_instances/{id}/webhooks), nothing read.
// Prints JSON: the sizes in bytes at each step, with the V8 heap and the memory outside it.
// Arguments: the number of instances (1000), the mode.

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


// 8 endpoints on an instance, to a loopback port nothing listens on (no event is written, so none is called).
internals.endpoints = async function (server, admin, instance) {

    const endpoints = Array.from({ length: 8 }, (_, i) => ({ url: `http://127.0.0.1:9/hook-${i}` }));
    const res = await server.inject({ method: 'PUT', url: `/_instances/${instance.id}/webhooks`, headers: { authorization: admin }, payload: { endpoints } });
    if (res.statusCode !== 200) {
        throw new Error(`PUT /_instances/${instance.id}/webhooks: ${res.statusCode} ${res.payload.slice(0, 300)}`);
    }
};


internals.main = async function (count, mode) {

    if (!['demo', 'empty', 'endpoints'].includes(mode)) {
        throw new Error(`the mode is demo, empty or endpoints, not ${mode}`);
    }

    const server = await Localgate.createServer({ dataDir: ':memory:', logLevel: 'silent', maxInstances: count });
    try {
        const registry = server.app.localgate.instances;
        const admin = `Bearer ${Localgate.mintToken(server.app.localgate.secret, 'bench-admin', 3600, { admin: true })}`;
        const make = async () => {

            const instance = await registry.create({ seed: mode === 'empty' ? 'none' : 'demo', ids: 'random', pay: false });
            if (mode === 'endpoints') {
                await internals.endpoints(server, admin, instance);
            }

            return instance;
        };

        // The first instance of a process builds the images every later one copies, and finds what they hold due:
        // paid before the baseline.
        await registry.delete((await make()).id);
        await server.inject('/v1/commerce/products?limit=20');
        const baseline = internals.usage();

        const started = process.hrtime.bigint();
        const instances = [];
        for (let i = 0; i < count; ++i) {
            instances.push(await make());
        }

        const createMs = Number(process.hrtime.bigint() - started) / 1e6;
        const created = internals.usage();
        if (mode !== 'demo') {
            process.stdout.write(JSON.stringify({ count, mode, live: registry.list().length, createMs, baseline, created }) + '\n');
            return;
        }

        await internals.readEach(server, instances, '/v1/commerce/products?limit=20');
        const read = internals.usage();
        await internals.readEach(server, instances, '/v1/logistics/vehicles?limit=20');
        const readBoth = internals.usage();
        process.stdout.write(JSON.stringify({ count, mode, live: registry.list().length, createMs, baseline, created, read, readBoth }) + '\n');
    }
    finally {
        await server.stop();
    }
};


internals.main(Number(process.argv[2] ?? 1000), process.argv[3] ?? 'demo');
