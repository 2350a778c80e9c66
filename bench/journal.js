'use strict';

// BENCH_ONLY=journal npm run bench: what faults and the request journal cost, and that they hold under load.
// Two servers in memory, each its own process, side by side: JOURNAL_SIZE=0 (the journal off, as before it existed)
// and the default (on); no fault rule set. Rounds alternate between them. Then, against the one with the journal:
// count over a full 1,000-entry journal over HTTP, 8 instances in parallel with rules on one, and 300 deposits whose
// replies are dropped after the write, each retried with its Idempotency-Key.
// Settings: BENCH_SECONDS (3), BENCH_ROUNDS (3), BENCH_CONNECTIONS (10).

const ChildProcess = require('node:child_process');
const { randomBytes } = require('node:crypto');
const Http = require('node:http');

const Autocannon = require('autocannon');

const Localgate = require('../dist');


const internals = {
    seconds: Number(process.env.BENCH_SECONDS ?? 3),
    rounds: Number(process.env.BENCH_ROUNDS ?? 3),
    connections: Number(process.env.BENCH_CONNECTIONS ?? 10),
    secret: randomBytes(32).toString('hex'),
    bakery: 'd851fadb-03ca-5a24-ba16-c15cce19933b'
};


// The child: a server in memory with the journal size given, its URL on standard output.
internals.serve = async function (journalSize) {

    const server = await Localgate.createServer({ storage: 'memory', logLevel: 'silent', port: 0, jwtSecret: process.env.AUTH_JWT_SECRET, journalSize: Number(journalSize), maxInstances: 100 });
    await server.start();
    process.stdout.write(`${server.info.uri}\n`);
};


internals.start = function (journalSize) {

    const child = ChildProcess.spawn(process.execPath, [__filename, 'serve', String(journalSize)], { env: { ...process.env, AUTH_JWT_SECRET: internals.secret }, stdio: ['ignore', 'pipe', 'inherit'] });
    return new Promise((resolve, reject) => {

        child.once('error', reject);
        child.stdout.once('data', (chunk) => resolve({ url: chunk.toString().trim(), stop: () => child.kill() }));
    });
};


internals.request = function (url, { method = 'GET', headers = {}, body } = {}) {

    return new Promise((resolve, reject) => {

        const request = Http.request(url, { method, headers: { 'content-type': 'application/json', ...headers }, agent: internals.agent }, (res) => {

            let text = '';
            res.on('data', (chunk) => {

                text += chunk;
            });
            res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: text ? JSON.parse(text) : null }));
        });
        request.once('error', reject);
        request.end(body === undefined ? undefined : JSON.stringify(body));
    });
};


internals.load = async function (url, options) {

    const result = await Autocannon({ url, connections: internals.connections, duration: internals.seconds, ...options });
    return result.requests.average;
};


internals.throughput = async function (servers) {

    const writer = { authorization: `Bearer ${Localgate.mintToken(internals.secret, 'bench-writer', 24 * 3600)}`, 'content-type': 'application/json' };
    const scenarios = {
        read: (server) => internals.load(`${server.url}/v1/commerce/products?business_id=${internals.bakery}&limit=20`),
        write: (server) => internals.load(`${server.url}/v1/commerce/products`, { method: 'POST', headers: writer, body: JSON.stringify({ name: 'Bench loaf', price: 2.5, currency: 'USD', business_id: internals.bakery }) })
    };

    const totals = {};
    for (const [name, run] of Object.entries(scenarios)) {
        totals[name] = { off: 0, on: 0 };
        for (let i = 0; i < internals.rounds; ++i) {
            for (const target of i % 2 ? ['on', 'off'] : ['off', 'on']) {
                totals[name][target] += await run(servers[target]);
            }
        }
    }

    return Object.fromEntries(Object.entries(totals).map(([name, { off, on }]) => [name, { off: off / internals.rounds, on: on / internals.rounds, ratio: on / off }]));
};


internals.countLatency = async function (url, admin) {

    const { body: instance } = await internals.request(`${url}/_instances`, { method: 'POST', headers: admin, body: {} });
    for (let i = 0; i < 1000; ++i) {
        await internals.request(`${url}${instance.base_path}/v1/commerce/products?limit=5&offset=${i % 30}`, { headers: { 'x-client': i % 2 ? 'bench' : 'other' } });
    }

    const pattern = { method: 'GET', urlPathPattern: '/v1/commerce/.*', headers: { 'x-client': { equalTo: 'bench' } }, queryParameters: { limit: { equalTo: '5' } } };
    const times = [];
    let count;
    for (let i = 0; i < 300; ++i) {
        const started = process.hrtime.bigint();
        count = (await internals.request(`${url}/_instances/${instance.id}/requests/count`, { method: 'POST', headers: admin, body: pattern })).body.count;
        times.push(Number(process.hrtime.bigint() - started) / 1e6);
    }

    const { body: page } = await internals.request(`${url}/_instances/${instance.id}/requests?limit=1`, { headers: admin });
    times.sort((a, b) => a - b);
    return { entries: page.total, count, p50: times[Math.floor(times.length / 2)], p99: times[Math.floor(times.length * 0.99)] };
};


internals.isolation = async function (url, admin) {

    const instances = [];
    for (let i = 0; i < 8; ++i) {
        instances.push((await internals.request(`${url}/_instances`, { method: 'POST', headers: admin, body: {} })).body);
    }

    await internals.request(`${url}/_instances/${instances[0].id}/faults`, { method: 'PUT', headers: admin, body: { seed: 7, rules: [{ path: '/v1/*', probability: 0.5, status: 503 }] } });
    const statuses = await Promise.all(instances.map(async (instance) => {

        const seen = [];
        for (let i = 0; i < 100; ++i) {
            seen.push((await internals.request(`${url}${instance.base_path}/v1/logistics/vehicles?limit=5`)).status);
        }

        return seen.filter((status) => status === 503).length;
    }));

    return { inside: statuses[0], outside: statuses.slice(1).reduce((sum, count) => sum + count, 0) };
};


internals.deposits = async function (url, admin) {

    const { body: instance } = await internals.request(`${url}/_instances`, { method: 'POST', headers: admin, body: { pay: true } });
    const headers = { authorization: `Bearer ${Localgate.mintToken(internals.secret, 'bench-payer', 24 * 3600)}` };
    const rules = { rules: [{ method: 'POST', path: '/v1/pay/gateway/deposit', drop: 'after', times: 1 }] };
    let lost = 0;
    let replays = 0;
    for (let i = 0; i < 300; ++i) {
        // One lost reply per deposit: the rule is set again before each.
        await internals.request(`${url}/_instances/${instance.id}/faults`, { method: 'PUT', headers: admin, body: rules });
        const deposit = () => internals.request(`${url}${instance.base_path}/v1/pay/gateway/deposit`, { method: 'POST', headers: { ...headers, 'idempotency-key': `deposit-${i}` }, body: { provider_id: 'sandbox', asset: 'USD', amount: 100 } });
        try {
            await deposit();
        }
        catch {
            ++lost;
        }

        const retry = await deposit();
        replays += retry.status === 201 && retry.headers['idempotent-replayed'] === 'true' ? 1 : 0;
    }

    const { body: ledger } = await internals.request(`${url}${instance.base_path}/v1/pay/wallet/transactions?limit=1`, { headers });
    return { lost, replays, ledger: ledger.total };
};


internals.main = async function () {

    const started = Date.now();
    const servers = { off: await internals.start(0), on: await internals.start(1000) };
    // Dropped replies close their sockets: no keep-alive for the requests made here.
    internals.agent = new Http.Agent({ keepAlive: false });
    try {
        const admin = { authorization: `Bearer ${Localgate.mintToken(internals.secret, 'bench-admin', 24 * 3600, { admin: true })}` };
        const throughput = await internals.throughput(servers);
        const count = await internals.countLatency(servers.on.url, admin);
        const isolation = await internals.isolation(servers.on.url, admin);
        const deposits = await internals.deposits(servers.on.url, admin);

        const lines = [
            `Journal and faults, ${internals.rounds} rounds of ${internals.seconds} s, ${internals.connections} connections, alternating (node ${process.version}):`,
            `  reads  (GET /v1/commerce/products?business_id=…&limit=20): journal off ${throughput.read.off.toFixed(0)} req/s, on ${throughput.read.on.toFixed(0)} req/s: ${(throughput.read.ratio * 100).toFixed(1)}%`,
            `  writes (POST /v1/commerce/products):                     journal off ${throughput.write.off.toFixed(0)} req/s, on ${throughput.write.on.toFixed(0)} req/s: ${(throughput.write.ratio * 100).toFixed(1)}%`,
            `  count over a full journal (${count.entries} entries, ${count.count} matching): p50 ${count.p50.toFixed(2)} ms, p99 ${count.p99.toFixed(2)} ms over HTTP`,
            `  8 instances in parallel, rules on one: ${isolation.inside} of 100 requests got 503 inside it, ${isolation.outside} of 700 outside`,
            `  300 deposits under drop "after", each retried with its key: ${deposits.lost} replies lost, ${deposits.ledger} ledger entries, ${deposits.replays} replays`,
            `  (${Math.round((Date.now() - started) / 1000)} s)`
        ];
        console.log(lines.join('\n'));
    }
    finally {
        servers.off.stop();
        servers.on.stop();
    }
};


if (process.argv[2] === 'serve') {
    internals.serve(process.argv[3]);
}
else if (require.main === module) {
    internals.main().catch((err) => {

        console.error(err);
        process.exit(1);
    });
}

module.exports = { main: internals.main };
