'use strict';

// The mock servers of the suite benchmark, each reset per test the way its users reset it: json-server 0.17 (its
// file rewritten from a master copy and read back), WireMock standalone (POST /__admin/reset and the stubs
// again), Mockoon CLI (CRUD routes over data buckets, POST /mockoon-admin/state/purge).

const ChildProcess = require('node:child_process');
const { randomUUID } = require('node:crypto');
const Fs = require('node:fs');
const Http = require('node:http');
const Path = require('node:path');

const Job = require('./job');
const Localgate = require('./localgate');


const internals = {};


// The demo records the mocks serve: the same products, vehicles and (none of the caller's) bookings.
internals.collections = function () {

    return {
        businesses: Job.demo.commerce.businesses,
        products: Job.demo.commerce.products,
        locations: Job.demo.logistics.locations,
        vehicles: Job.demo.logistics.vehicles,
        bookings: []
    };
};


internals.request = function (agent, base) {

    return (method, path, body, token) => Localgate.send(agent, base, method, path, body, token);
};


// A child process whose output is kept and can be waited on, line by line, from a given point.
internals.spawn = function (command, args, options) {

    const child = ChildProcess.spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = { text: '', waiters: [] };
    const take = (chunk) => {

        output.text += chunk.toString();
        output.waiters = output.waiters.filter((waiter) => !waiter());
    };

    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.output = output;
    child.until = function (pattern, from) {

        return internals.until(child, output, pattern, from);
    };

    return child;
};


internals.until = function (child, output, pattern, from) {

    return new Promise((resolve, reject) => {

        const check = () => {

            if (pattern.test(output.text.slice(from))) {
                resolve();
                return true;
            }

            if (child.exitCode !== null) {
                reject(new Error(`exited (${child.exitCode}): ${output.text.slice(-2000)}`));
                return true;
            }

            return false;
        };

        if (!check()) {
            output.waiters.push(check);
            child.once('exit', check);
        }
    });
};


internals.stop = function (child) {

    if (!child || child.exitCode !== null || child.signalCode !== null) {
        return;
    }

    return new Promise((resolve) => {

        child.once('exit', resolve);
        child.kill('SIGTERM');
    });
};


/**
 * json-server 0.17 as its README's Module section runs it (bench/suite/json-server.js), reset as its users reset it:
 * the master copy written over db.json, here by a custom route that then reads the file back into the router's
 * database. The CLI's --watch, which reloads the file when it changes, was tried first and cannot serve a suite: it
 * also sees json-server's own writes, which lowdb makes after the answer, and a second write answered meanwhile makes
 * the file differ from the data in memory, so it restarts its server in the middle of a test (ECONNRESET).
 */
exports.jsonServer = function ({ port, dir, ready }) {

    const file = Path.join(dir, 'db.json');
    const base = `http://127.0.0.1:${port}`;
    const query = `customer_id=${Job.caller}&_limit=${Job.limit}`;
    let child;
    let agent;
    return {
        name: 'json-server 0.17, file rewritten per test',
        async setup() {

            Fs.mkdirSync(dir, { recursive: true });
            const master = Path.join(dir, 'master.json');
            Fs.writeFileSync(master, JSON.stringify(internals.collections(), null, 2));
            child = internals.spawn(process.execPath, [Path.join(__dirname, 'json-server.js'), file, master, String(port)], { cwd: dir });
            await ready(`${base}/products?_limit=1`, child);
        },
        async test() {

            agent = new Http.Agent({ keepAlive: true, maxSockets: 1 });
            const send = internals.request(agent, base);
            Job.expect(await send('GET', `/products?_limit=${Job.limit}`), 200);
            Job.expect(await send('GET', `/vehicles?_limit=${Job.limit}`), 200);
            const before = Job.expect(await send('GET', `/bookings?${query}`), 200);
            Job.expect(await send('POST', '/products', { ...Job.product, created_by: Job.caller }), 201);
            const booking = Job.expect(await send('POST', '/bookings', { ...Job.booking, customer_id: Job.caller, status: 'confirmed' }), 201);
            const after = Job.expect(await send('GET', `/bookings?${query}`), 200);
            Job.expect(await send('POST', '/__reset'), 200);
            agent.destroy();
            return after.length === before.length + 1 && after.some((item) => item.id === booking.id);
        },
        teardown() {

            agent?.destroy();
            return internals.stop(child);
        }
    };
};


/** WireMock standalone from its npm package: the stubs posted per test, POST /__admin/reset after it. Stateless. */
exports.wiremock = function ({ port, cache, ready }) {

    const base = `http://127.0.0.1:${port}`;
    const json = (status, body) => ({ status, jsonBody: body, headers: { 'Content-Type': 'application/json' } });
    const page = (data) => ({ data, count: data.length, total: data.length });
    const collections = internals.collections();
    const mappings = [
        { request: { method: 'GET', urlPath: '/v1/commerce/products' }, response: json(200, page(collections.products.slice(0, Job.limit))) },
        { request: { method: 'GET', urlPath: '/v1/logistics/vehicles' }, response: json(200, page(collections.vehicles.slice(0, Job.limit))) },
        { request: { method: 'GET', urlPath: '/v1/logistics/bookings' }, response: json(200, page([])) },
        { request: { method: 'POST', urlPath: '/v1/commerce/products' }, response: json(201, { id: randomUUID(), ...Job.product }) },
        { request: { method: 'POST', urlPath: '/v1/logistics/bookings' }, response: json(201, { id: randomUUID(), ...Job.booking, customer_id: Job.caller, status: 'confirmed' }) }
    ];

    let child;
    let agent;
    return {
        name: 'WireMock standalone, stubs per test (stateless)',
        async setup() {

            // The package's bin only finds Java and runs its jar in a child it does not stop on SIGTERM: run the jar directly.
            const main = require.resolve('wiremock/package.json', { paths: [cache] });
            const jar = Path.join(Path.dirname(main), 'build', Fs.readdirSync(Path.join(Path.dirname(main), 'build')).find((name) => name.endsWith('.jar')));
            child = internals.spawn('java', ['-jar', jar, '--port', String(port), '--bind-address', '127.0.0.1', '--disable-banner', '--disable-request-logging', '--no-request-journal'], { cwd: Path.dirname(main) });
            await ready(`${base}/__admin/health`, child, 120_000);
        },
        async test() {

            // A connection kept alive within the test only: the server closes one left idle between tests.
            agent = new Http.Agent({ keepAlive: true, maxSockets: 1 });
            const send = internals.request(agent, base);
            Job.expect(await send('POST', '/__admin/mappings/import', { mappings }), 200);
            Job.expect(await send('GET', `/v1/commerce/products?limit=${Job.limit}`), 200);
            Job.expect(await send('GET', `/v1/logistics/vehicles?limit=${Job.limit}`), 200);
            Job.expect(await send('GET', `/v1/logistics/bookings?limit=${Job.limit}`), 200);
            Job.expect(await send('POST', '/v1/commerce/products', Job.product), 201);
            Job.expect(await send('POST', '/v1/logistics/bookings', Job.booking), 201);
            Job.expect(await send('GET', `/v1/logistics/bookings?limit=${Job.limit}`), 200);
            Job.expect(await send('POST', '/__admin/reset'), 200);
            agent.destroy();
            // A stub answers what it was given: the new booking cannot be there.
            return null;
        },
        teardown() {

            agent?.destroy();
            return internals.stop(child);
        },
        version: () => require(require.resolve('wiremock/package.json', { paths: [cache] })).version
    };
};


/** Mockoon CLI: one CRUD route per collection over a data bucket; POST /mockoon-admin/state/purge per test. */
exports.mockoon = function ({ port, dir, cache, ready }) {

    const base = `http://127.0.0.1:${port}`;
    // Mockoon 9 asks for a token on its admin API.
    const token = randomUUID();
    let child;
    let agent;
    return {
        name: 'Mockoon CLI, CRUD routes, state purged per test',
        async setup() {

            Fs.mkdirSync(dir, { recursive: true });
            const file = Path.join(dir, 'environment.json');
            Fs.writeFileSync(file, JSON.stringify(internals.mockoonEnvironment(cache, port)));
            child = internals.spawn(process.execPath, [require.resolve('@mockoon/cli/bin/run.js', { paths: [cache] }), 'start', '--data', file, '--port', String(port), '--hostname', '127.0.0.1', '--disable-log-to-file', '--admin-api-token', token], { cwd: dir });
            await ready(`${base}/v1/commerce/products?limit=1`, child, 60_000);
        },
        async test() {

            agent = new Http.Agent({ keepAlive: true, maxSockets: 1 });
            const send = internals.request(agent, base);
            const query = `customer_id_eq=${Job.caller}&limit=${Job.limit}`;
            Job.expect(await send('GET', `/v1/commerce/products?limit=${Job.limit}`), 200);
            Job.expect(await send('GET', `/v1/logistics/vehicles?limit=${Job.limit}`), 200);
            const before = Job.expect(await send('GET', `/v1/logistics/bookings?${query}`), 200);
            Job.expect(await send('POST', '/v1/commerce/products', { ...Job.product, created_by: Job.caller }), 201);
            const booking = Job.expect(await send('POST', '/v1/logistics/bookings', { ...Job.booking, customer_id: Job.caller, status: 'confirmed' }), 201);
            const after = Job.expect(await send('GET', `/v1/logistics/bookings?${query}`), 200);
            Job.expect(await send('POST', '/mockoon-admin/state/purge', undefined, token), 200);
            agent.destroy();
            return after.length === before.length + 1 && after.some((item) => item.id === booking.id);
        },
        teardown() {

            agent?.destroy();
            return internals.stop(child);
        },
        version: () => require(require.resolve('@mockoon/cli/package.json', { paths: [cache] })).version
    };
};


internals.mockoonEnvironment = function (cache, port) {

    const Commons = require(require.resolve('@mockoon/commons', { paths: [cache] }));

    const environment = Commons.BuildEnvironment({ hasDefaultRoute: false, hasContentTypeHeader: true, hasCorsHeaders: false, port });
    const paths = { products: '/v1/commerce/products', vehicles: '/v1/logistics/vehicles', bookings: '/v1/logistics/bookings' };
    environment.uuid = randomUUID();
    environment.name = 'localgate suite';
    for (const [name, records] of Object.entries(internals.collections())) {
        if (!paths[name]) {
            continue;
        }

        const bucket = { ...Commons.BuildDatabucket({ name, value: JSON.stringify(records) }), uuid: randomUUID(), id: name };
        const route = Commons.BuildCRUDRoute(true, { endpoint: paths[name].slice(1), databucketID: bucket.id });
        route.uuid = randomUUID();
        route.responses = route.responses.map((response) => ({ ...response, uuid: randomUUID() }));
        environment.data.push(bucket);
        environment.routes.push(route);
        environment.rootChildren.push({ type: 'route', uuid: route.uuid });
    }

    return environment;
};
