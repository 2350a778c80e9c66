'use strict';

// In a fresh process: what the instance registry of one server costs a test suite, operation by operation. One server
// (createServer with databases in memory), then rounds of: a new demo-seeded instance, its first and second product
// page (server.inject: the first prepares the instance's statements), a write, a snapshot, a write, a restore of that
// snapshot, a reset, a delete. Each operation is timed on its own with hrtime; the first rounds warm up and are left
// out. Prints JSON: the times of every measured round, in milliseconds, per operation.
// Arguments: rounds measured (300), warm-up rounds (50).

const Localgate = require('../dist');


const internals = {
    operations: ['create', 'firstRead', 'nextRead', 'snapshot', 'restore', 'reset', 'delete']
};


internals.timeAsync = async function (fn) {

    const started = process.hrtime.bigint();
    const result = await fn();
    return [Number(process.hrtime.bigint() - started) / 1e6, result];
};


internals.write = async function (server, instance, token, n) {

    const res = await server.inject({
        method: 'POST',
        url: `${instance.basePath}/v1/commerce/products`,
        headers: { authorization: `Bearer ${token}` },
        payload: { name: `Bench product ${n}`, price: 9.5, currency: 'USD', business_id: internals.businessId }
    });

    internals.expect(res, 201);
};


internals.read = async function (server, instance) {

    const res = await server.inject(`${instance.basePath}/v1/commerce/products?limit=20`);
    internals.expect(res, 200);
};


internals.expect = function (res, status) {

    if (res.statusCode !== status) {
        throw new Error(`${res.request.method.toUpperCase()} ${res.request.path}: ${res.statusCode} ${res.payload.slice(0, 300)}`);
    }
};


internals.round = async function (server, registry, token, n) {

    const times = {};
    let instance;
    [times.create, instance] = await internals.timeAsync(() => registry.create({ seed: 'demo', ids: 'random', pay: false }));
    [times.firstRead] = await internals.timeAsync(() => internals.read(server, instance));
    [times.nextRead] = await internals.timeAsync(() => internals.read(server, instance));
    await internals.write(server, instance, token, 2 * n);
    let snapshot;
    [times.snapshot, snapshot] = await internals.timeAsync(() => instance.snapshot());
    await internals.write(server, instance, token, 2 * n + 1);
    [times.restore] = await internals.timeAsync(() => instance.restore(snapshot));
    [times.reset] = await internals.timeAsync(() => instance.reset());
    [times.delete] = await internals.timeAsync(() => registry.delete(instance.id));
    return times;
};


internals.main = async function (rounds, warmup) {

    const server = await Localgate.createServer({ dataDir: ':memory:', logLevel: 'silent' });
    try {
        const { instances: registry, secret } = server.app.localgate;
        const token = Localgate.mintToken(secret, 'bench-writer', 3600);
        const page = JSON.parse((await server.inject('/v1/commerce/products?limit=1')).payload);
        internals.businessId = page.data[0].business_id;

        const times = Object.fromEntries(internals.operations.map((operation) => [operation, []]));
        for (let i = 0; i < warmup + rounds; ++i) {
            const round = await internals.round(server, registry, token, i);
            if (i >= warmup) {
                for (const operation of internals.operations) {
                    times[operation].push(round[operation]);
                }
            }
        }

        process.stdout.write(JSON.stringify({ rounds, warmup, times }) + '\n');
    }
    finally {
        await server.stop();
    }
};


internals.main(Number(process.argv[2] ?? 300), Number(process.argv[3] ?? 50));
