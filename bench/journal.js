'use strict';

// BENCH_ONLY=journal npm run bench: what faults and the request journal cost, and that they hold under load.
// Two servers in memory, each its own process, side by side: JOURNAL_SIZE=0 (the journal off, as before it existed)
// and the default (on); no fault rule set. Rounds alternate between them. Then, against the one with the journal:
// count over a full 1,000-entry journal over HTTP, 8 instances in parallel with rules on one, and 300 deposits whose
// replies are dropped after the write, each retried with its Idempotency-Key.
// Settings: BENCH_SECONDS (2), BENCH_ROUNDS (6), BENCH_CONNECTIONS (10). On a shared machine the req/s of one round
// swing more than the journal's cost, so the two servers take turns round by round (the first alternating), each
// round's pair gives a ratio, and the median of those ratios is reported, with each server's CPU time per request
// (from /proc), which moves less with the machine's load than req/s.

const ChildProcess = require('node:child_process');
const { randomBytes } = require('node:crypto');
const Fs = require('node:fs');
const Http = require('node:http');
const Os = require('node:os');

const Autocannon = require('autocannon');

const Localgate = require('../dist');


const internals = {
    seconds: Number(process.env.BENCH_SECONDS ?? 2),
    rounds: Number(process.env.BENCH_ROUNDS ?? 6),
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
        child.stdout.once('data', (chunk) => resolve({ url: chunk.toString().trim(), pid: child.pid, stop: () => child.kill() }));
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


// One round against a server: its req/s (2xx only) and the server's CPU time per request, in µs.
internals.load = async function (server, path, options) {

    const cpu = internals.cpu(server.pid);
    const result = await Autocannon({ url: `${server.url}${path}`, connections: internals.connections, duration: internals.seconds, ...options });
    const answered = result['2xx'];
    return { rate: answered / internals.seconds, cpuUs: (internals.cpu(server.pid) - cpu) / (result.requests.total || 1) };
};


// A process's user and system CPU time in µs, from /proc (clock ticks of 10 ms).
internals.cpu = function (pid) {

    const fields = Fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
};


internals.throughput = async function (servers) {

    const writer = { authorization: `Bearer ${Localgate.mintToken(internals.secret, 'bench-writer', 24 * 3600)}`, 'content-type': 'application/json' };
    const scenarios = {
        read: (server) => internals.load(server, `/v1/commerce/products?business_id=${internals.bakery}&limit=20`),
        write: (server) => internals.load(server, '/v1/commerce/products', { method: 'POST', headers: writer, body: JSON.stringify({ name: 'Bench loaf', price: 2.5, currency: 'USD', business_id: internals.bakery }) })
    };

    const median = (values) => {

        const sorted = [...values].sort((a, b) => a - b);
        const middle = Math.floor(sorted.length / 2);
        return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    };

    const figures = {};
    for (const [name, run] of Object.entries(scenarios)) {
        const rounds = [];
        for (let i = 0; i < internals.rounds; ++i) {
            const round = {};
            for (const target of i % 2 ? ['on', 'off'] : ['off', 'on']) {
                round[target] = await run(servers[target]);
            }

            rounds.push(round);
        }

        figures[name] = {
            off: median(rounds.map((round) => round.off.rate)),
            on: median(rounds.map((round) => round.on.rate)),
            ratio: median(rounds.map((round) => round.on.rate / round.off.rate)),
            ratios: rounds.map((round) => round.on.rate / round.off.rate),
            cpuOff: median(rounds.map((round) => round.off.cpuUs)),
            cpuOn: median(rounds.map((round) => round.on.cpuUs))
        };
    }

    return figures;
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
            `Journal and faults, ${internals.rounds} rounds of ${internals.seconds} s, ${internals.connections} connections, alternating (node ${process.version}; load average ${Os.loadavg().map((value) => value.toFixed(2)).join(', ')} at the end):`,
            ...['read', 'write'].map((name) => {

                const { off, on, ratio, ratios, cpuOff, cpuOn } = throughput[name];
                const what = name === 'read' ? 'reads  (GET /v1/commerce/products?business_id=…&limit=20)' : 'writes (POST /v1/commerce/products)                     ';
                return `  ${what}: journal off ${off.toFixed(0)} req/s, on ${on.toFixed(0)} req/s (medians); on/off per round ${ratios.map((value) => `${(value * 100).toFixed(0)}%`).join(' ')}, median ${(ratio * 100).toFixed(1)}%; server CPU per request off ${cpuOff.toFixed(0)} µs, on ${cpuOn.toFixed(0)} µs: ${(cpuOff / cpuOn * 100).toFixed(1)}% of the speed`;
            }),
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
