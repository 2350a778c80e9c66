'use strict';

// BENCH_ONLY=free (or node bench/free.js after npm run build): what events and the timeline cost, beside the builds
// before them, in one run. Writes the section "Events for free" of results.md (before the PostgreSQL section, keeping
// the rest) with the machine's load beside the figures:
// - in one process, through server.inject, the builds side by side taking turns (BENCH_FREE_TURNS of
//   BENCH_FREE_INJECTS requests each, after one of warm-up): product writes and sandbox deposits beside the build
//   before events (BENCH_EVENTS_BASELINE, ff3710d), bookings read and written beside the build before the timeline
//   (BENCH_TIME_BASELINE, 6fd41a4), and a product write on a data set with one endpoint (a loopback receiver
//   answering 204, in a process of its own) beside the build before events' write: CPU time per request (each turn waits for its
//   deliveries, which it pays for), and for the endpoint its own request's wall time (the delivery goes after the
//   answer);
// - memory: 1,000 (BENCH_LIVE_INSTANCES) empty instances, and as many with 8 endpoints each, each set in a fresh
//   process (bench/instance-memory.js);
// - cold start: `node bin/localgate.js start` on an existing data directory and `node bench/bare.js`, taking turns
//   (BENCH_FREE_STARTS each), wall time from the spawn to the first 200 on /health.
// The suite job and the deliveries have sections of their own (BENCH_ONLY=suite, BENCH_ONLY=events).

const ChildProcess = require('node:child_process');
const { randomBytes } = require('node:crypto');
const Fs = require('node:fs');
const Http = require('node:http');
const Os = require('node:os');
const Path = require('node:path');

const ResultsFile = require('./results-file');
const Time = require('./time');


const internals = {
    root: Path.join(__dirname, '..'),
    writesBaseline: process.env.BENCH_EVENTS_BASELINE ?? 'ff3710d',
    timelineBaseline: process.env.BENCH_TIME_BASELINE ?? '6fd41a4',
    turns: Number(process.env.BENCH_FREE_TURNS ?? 20),
    injects: Number(process.env.BENCH_FREE_INJECTS ?? 500),
    starts: Number(process.env.BENCH_FREE_STARTS ?? 11),
    instances: Number(process.env.BENCH_LIVE_INSTANCES ?? 1000),
    bakery: 'd851fadb-03ca-5a24-ba16-c15cce19933b',
    vehicles: ['67f7b2a9-5639-460c-a9f5-d114637c1b43', '1a1aec40-05e3-4128-a86c-6981ec6a3eb5', 'ffc619e8-15d4-45e7-b413-80963e315b7d'],
    locations: ['8a5c2440-7943-4c0d-bdf4-9777cd05095e', '2f4a202e-61d6-4275-9ddb-094f7d5a839d']
};


internals.median = Time.median;
internals.percentile = Time.percentile;


// A loopback receiver answering 204, in a process of its own (as an application's would be): it counts what it
// received, and answers GET /count with the count.
internals.receiver = async function () {

    const script = `
        let received = 0;
        const server = require('node:http').createServer((req, res) => {
            req.resume();
            req.on('end', () => {
                if (req.method === 'GET') {
                    return res.end(String(received));
                }
                received += 1;
                res.writeHead(204).end();
            });
        });
        server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));`;
    const child = ChildProcess.spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const port = await new Promise((resolve, reject) => {

        child.stdout.once('data', (chunk) => resolve(Number(String(chunk).trim())));
        child.once('exit', (code) => reject(new Error(`the receiver exited with ${code}`)));
    });
    const agent = new Http.Agent({ keepAlive: true });
    const received = function () {

        return new Promise((resolve, reject) => {

            Http.get({ host: '127.0.0.1', port, path: '/count', agent }, (res) => {

                let text = '';
                res.on('data', (chunk) => (text += chunk));
                res.on('end', () => resolve(Number(text)));
            }).on('error', reject);
        });
    };

    return {
        url: `http://127.0.0.1:${port}/hook`,
        received,
        close: () => {

            agent.destroy();
            child.kill();
        }
    };
};


// A server of a build in memory, with its tokens, a pay instance and a reader holding 100 bookings.
internals.serve = async function (dist, secret) {

    const Localgate = require(dist);

    const server = await Localgate.createServer({ storage: 'memory', logLevel: 'silent', jwtSecret: secret });
    const bearer = (subject, admin) => `Bearer ${Localgate.mintToken(secret, subject, 24 * 3600, admin ? { admin: true } : undefined)}`;
    const admin = bearer('bench-admin', true);
    const made = await server.inject({ method: 'POST', url: '/_instances', headers: { authorization: admin }, payload: { pay: true, seed: 'none' } });
    if (made.statusCode !== 201) {
        throw new Error(`${dist}: POST /_instances ${made.statusCode} ${made.payload}`);
    }

    const world = { server, admin, pay: JSON.parse(made.payload).base_path, writer: bearer('bench-writer'), reader: bearer('bench-reader'), payers: Array.from({ length: 100 }, (_, i) => bearer(`payer-${i}`)), slot: 0, deposits: 0 };

    for (let i = 0; i < 100; ++i) {
        const res = await server.inject({ method: 'POST', url: '/v1/logistics/bookings', headers: { authorization: world.reader }, payload: internals.booking(world) });
        if (res.statusCode !== 201) {
            throw new Error(`${dist}: a reader's booking ${res.statusCode} ${res.payload}`);
        }
    }

    return world;
};


// A booking an hour long, backwards from 2200, so that nothing falls due while the bench runs.
internals.booking = function (world) {

    const slot = world.slot++;
    const pickup = Date.parse('2200-01-01T00:00:00.000Z') - (Math.floor(slot / internals.vehicles.length) + 1) * 3600_000;
    return { vehicle_id: internals.vehicles[slot % internals.vehicles.length], pickup_location_id: internals.locations[0], dropoff_location_id: internals.locations[1], pickup_at: new Date(pickup).toISOString(), return_at: new Date(pickup + 3600_000).toISOString() };
};


internals.requests = {
    'products write': (world) => ({ method: 'POST', url: '/v1/commerce/products', headers: { authorization: world.writer }, payload: { name: 'Bench loaf', price: 2.5, currency: 'USD', business_id: internals.bakery } }),
    'deposits': (world) => {

        const n = world.deposits++;
        return { method: 'POST', url: `${world.pay}/v1/pay/gateway/deposit`, headers: { authorization: world.payers[n % 100], 'idempotency-key': `free-${n}` }, payload: { provider_id: 'sandbox', asset: 'USD', amount: 1000 } };
    },
    'bookings read': (world) => ({ url: '/v1/logistics/bookings?limit=20', headers: { authorization: world.reader } }),
    'bookings write': (world) => ({ method: 'POST', url: '/v1/logistics/bookings', headers: { authorization: world.writer }, payload: internals.booking(world) })
};


// Turns of `count` requests for each target, the order alternating; the first turn is warm-up. Per turn: CPU µs per
// request (this process's), and the median wall time of a request in ms.
internals.takeTurns = async function (targets, count, turns) {

    const figures = targets.map(() => ({ cpu: [], wall: [] }));
    for (let i = 0; i <= turns; ++i) {
        const order = i % 2 ? [...targets.keys()].reverse() : [...targets.keys()];
        for (const index of order) {
            const { world, request } = targets[index];
            const made = Array.from({ length: count }, () => request(world));
            const walls = [];
            const cpu = process.cpuUsage();
            for (const options of made) {
                const started = process.hrtime.bigint();
                const res = await world.server.inject(options);
                walls.push(Number(process.hrtime.bigint() - started) / 1e6);
                if (res.statusCode >= 300) {
                    throw new Error(`${targets[index].name}: ${options.url} ${res.statusCode} ${res.payload.slice(0, 300)}`);
                }
            }

            // A target whose requests send deliveries waits for them here, so that no other target's turn pays for them.
            await targets[index].settle?.();
            const used = process.cpuUsage(cpu);
            if (i > 0) {
                figures[index].cpu.push((used.user + used.system) / count);
                figures[index].wall.push(internals.median(walls));
            }
        }
    }

    return figures;
};


// Speed now against before, turn by turn (before's time over now's), their median and quartiles.
internals.compare = function (before, now) {

    const ratios = before.map((value, i) => value / now[i]);
    return { before: internals.median(before), now: internals.median(now), ratio: internals.median(ratios), low: internals.percentile(ratios, 0.25), high: internals.percentile(ratios, 0.75) };
};


internals.inProcess = async function (log) {

    const secret = randomBytes(32).toString('hex');
    const worlds = {
        [internals.writesBaseline]: await internals.serve(Time.buildBaseline(internals.writesBaseline), secret),
        [internals.timelineBaseline]: await internals.serve(Time.buildBaseline(internals.timelineBaseline), secret),
        now: await internals.serve(Path.join(internals.root, 'dist'), secret)
    };
    const receiver = await internals.receiver();
    // A server of this build whose default data set has one endpoint, for every type.
    const wired = await internals.serve(Path.join(internals.root, 'dist'), secret);
    try {
        const set = await wired.server.inject({ method: 'PUT', url: '/_webhooks', headers: { authorization: wired.admin }, payload: { endpoints: [{ url: receiver.url }] } });
        if (set.statusCode !== 200) {
            throw new Error(`PUT /_webhooks ${set.statusCode} ${set.payload}`);
        }

        const pairs = [
            ['products write', internals.writesBaseline],
            ['deposits', internals.writesBaseline],
            ['bookings read', internals.timelineBaseline],
            ['bookings write', internals.timelineBaseline]
        ];
        const figures = {};
        for (const [name, baseline] of pairs) {
            log(`free: ${name}, ${baseline} beside now`);
            const [before, now] = await internals.takeTurns([{ name: baseline, world: worlds[baseline], request: internals.requests[name] }, { name: 'now', world: worlds.now, request: internals.requests[name] }], internals.injects, internals.turns);
            figures[name] = { baseline, cpu: internals.compare(before.cpu, now.cpu) };
        }

        log(`free: products write with one endpoint, beside ${internals.writesBaseline} without`);
        const startedAt = await receiver.received();
        let expected = startedAt;
        const settle = async () => {

            expected += internals.injects;
            const deadline = Date.now() + 60_000;
            let received = await receiver.received();
            while (received < expected) {
                if (Date.now() > deadline) {
                    throw new Error(`the receiver holds ${received - startedAt} deliveries of ${expected - startedAt} after a minute`);
                }

                // Every 20 ms: each look is a request of this process, counted in the turn's CPU (about 1% of it).
                await new Promise((resolve) => setTimeout(resolve, 20));
                received = await receiver.received();
            }
        };

        const [before, now] = await internals.takeTurns([{ name: internals.writesBaseline, world: worlds[internals.writesBaseline], request: internals.requests['products write'] }, { name: 'one endpoint', world: wired, request: internals.requests['products write'], settle }], internals.injects, internals.turns);
        figures['products write, one endpoint'] = { baseline: internals.writesBaseline, wall: internals.compare(before.wall, now.wall), cpu: internals.compare(before.cpu, now.cpu), delivered: await receiver.received() - startedAt };
        return figures;
    }
    finally {
        for (const world of [...Object.values(worlds), wired]) {
            await world.server.stop();
        }

        receiver.close();
    }
};


internals.memory = function () {

    const figures = {};
    for (const mode of ['empty', 'endpoints']) {
        const out = ChildProcess.execFileSync(process.execPath, ['--expose-gc', Path.join(__dirname, 'instance-memory.js'), String(internals.instances), mode], { encoding: 'utf8', maxBuffer: 1 << 24 });
        const figure = JSON.parse(out.trim().split('\n').at(-1));
        figures[mode] = { ...figure, perInstanceKib: (figure.created.rss - figure.baseline.rss) / 1024 / figure.count };
    }

    return figures;
};


internals.probe = function (port) {

    return new Promise((resolve) => {

        const req = Http.get({ host: '127.0.0.1', port, path: '/health' }, (res) => {

            res.resume();
            resolve(res.statusCode);
        });
        req.on('error', () => resolve(0));
    });
};


// Wall ms from the spawn to the first 200 on /health.
internals.startOnce = async function (args, env) {

    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const started = process.hrtime.bigint();
    const child = ChildProcess.spawn(process.execPath, args, { env: { ...process.env, ...env, PORT: String(port) }, stdio: 'ignore' });
    try {
        while (await internals.probe(port) !== 200) {
            if (child.exitCode !== null) {
                throw new Error(`${args.join(' ')} exited with ${child.exitCode} before answering`);
            }

            await new Promise((resolve) => setTimeout(resolve, 2));
        }

        return Number(process.hrtime.bigint() - started) / 1e6;
    }
    finally {
        child.kill('SIGKILL');
        await new Promise((resolve) => (child.exitCode === null && child.signalCode === null ? child.once('exit', resolve) : resolve()));
    }
};


internals.coldStart = async function () {

    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'localgate-free-'));
    try {
        const env = { DATA_DIR: dataDir, LOG_LEVEL: 'info', AUTH_JWT_SECRET: randomBytes(32).toString('hex') };
        const localgate = [Path.join(internals.root, 'bin', 'localgate.js'), 'start'];
        const bare = [Path.join(__dirname, 'bare.js')];
        // The first start makes the databases; both are run once untimed.
        await internals.startOnce(localgate, env);
        await internals.startOnce(bare, {});
        const times = { localgate: [], bare: [] };
        for (let i = 0; i < internals.starts; ++i) {
            for (const name of i % 2 ? ['bare', 'localgate'] : ['localgate', 'bare']) {
                times[name].push(await (name === 'bare' ? internals.startOnce(bare, {}) : internals.startOnce(localgate, env)));
            }
        }

        return { localgate: internals.median(times.localgate), bare: internals.median(times.bare), times };
    }
    finally {
        Fs.rmSync(dataDir, { recursive: true, force: true });
    }
};


internals.percent = (ratio) => `${(ratio * 100).toFixed(1)}%`;


// A verdict only where the middle half of the turns spans at most 10 points.
internals.judge = function ({ ratio, low, high }, target) {

    if (high - low > 0.1) {
        return `inconclusive: the middle half of the turns spans ${Math.round((high - low) * 100)} points`;
    }

    return ratio >= target ? 'PASS' : 'MISS';
};


exports.run = async function ({ log = (line) => console.log(line) } = {}) {

    const started = Date.now();
    const loads = [Os.loadavg()[0]];
    const sampler = setInterval(() => loads.push(Os.loadavg()[0]), 5000);
    try {
        const inProcess = await internals.inProcess(log);
        log('free: memory');
        const memory = internals.memory();
        log('free: cold start');
        const cold = await internals.coldStart();
        loads.push(Os.loadavg()[0]);
        return internals.section({ inProcess, memory, cold, loads, seconds: (Date.now() - started) / 1000 });
    }
    finally {
        clearInterval(sampler);
    }
};


internals.section = function ({ inProcess, memory, cold, loads, seconds }) {

    const mib = (bytes) => (bytes / 2 ** 20).toFixed(0);
    const lines = [
        '## Events for free: events and the timeline beside the builds before them',
        '',
        `\`BENCH_ONLY=free npm run bench\`, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${Math.round(seconds)} s; Node ${process.version}, ${Os.cpus().length} cores (${Os.cpus()[0]?.model ?? 'unknown'}); load average (1 min) ${Math.min(...loads).toFixed(1)} to ${Math.max(...loads).toFixed(1)} while it ran, sampled every 5 s.`,
        '',
        `In one process through \`server.inject\`, servers in memory of each build side by side, ${internals.turns} turns of ${internals.injects} requests each taking turns (after one of warm-up): speed is the earlier build's CPU time per request over this build's, the median of the turns' ratios (quartiles).`,
        '',
        '| request | beside | CPU µs per request, before / now | speed now / before (quartiles) | target | |',
        '|---|---|---|---|---|---|'
    ];
    const targets = { 'products write': 0.97, 'deposits': 0.97, 'bookings read': 0.97, 'bookings write': 0.97 };
    for (const [name, target] of Object.entries(targets)) {
        const { baseline, cpu } = inProcess[name];
        lines.push(`| ${name} | ${baseline} | ${cpu.before.toFixed(1)} / ${cpu.now.toFixed(1)} | ${internals.percent(cpu.ratio)} (${internals.percent(cpu.low)}–${internals.percent(cpu.high)}) | ≥ ${internals.percent(target)} | ${internals.judge(cpu, target)} |`);
    }

    const wired = inProcess['products write, one endpoint'];
    lines.push(`| products write with one endpoint: the request's own wall time, median ms (its delivery follows the answer; ${wired.delivered} delivered) | ${wired.baseline}, no endpoint | ${wired.wall.before.toFixed(3)} / ${wired.wall.now.toFixed(3)} ms | ${internals.percent(wired.wall.ratio)} (${internals.percent(wired.wall.low)}–${internals.percent(wired.wall.high)}) | ≥ 90% | ${internals.judge(wired.wall, 0.9)} |`);
    lines.push(`| the same, CPU of the process (the delivery's included) | | ${wired.cpu.before.toFixed(1)} / ${wired.cpu.now.toFixed(1)} | ${internals.percent(wired.cpu.ratio)} (${internals.percent(wired.cpu.low)}–${internals.percent(wired.cpu.high)}) | | |`);

    const { empty, endpoints } = memory;
    const endpointsLimit = 300 * 2 ** 20;
    // Judged on 1,000 instances: another count is taken at its rate per instance.
    const thousand = endpoints.baseline.rss + (endpoints.created.rss - endpoints.baseline.rss) * 1000 / endpoints.count;
    lines.push('', 'Memory (bench/instance-memory.js, a fresh process each, RSS after a garbage collection):', '',
        '| instances | RSS MiB, the server alone / with them | per instance KiB | made in ms | target | |',
        '|---|---|---|---|---|---|',
        `| ${empty.count} empty (\`seed: 'none'\`) | ${mib(empty.baseline.rss)} / ${mib(empty.created.rss)} | ${empty.perInstanceKib.toFixed(0)} | ${empty.createMs.toFixed(0)} | ≤ 150 KiB each | ${empty.perInstanceKib <= 150 ? 'PASS' : 'MISS'} |`,
        `| ${endpoints.count} demo-seeded with 8 endpoints each | ${mib(endpoints.baseline.rss)} / ${mib(endpoints.created.rss)} | ${endpoints.perInstanceKib.toFixed(0)} | ${endpoints.createMs.toFixed(0)} | ≤ 300 MiB for 1,000 | ${thousand <= endpointsLimit ? 'PASS' : 'MISS'}${endpoints.count === 1000 ? '' : ` (${mib(thousand)} MiB for 1,000 at this rate)`} |`);

    const gap = cold.localgate - cold.bare;
    lines.push('', `Cold start, ${cold.times.localgate.length} starts each taking turns, wall time from the spawn to the first 200 on /health: \`node bin/localgate.js start\` on an existing data directory (LOG_LEVEL=info) ${cold.localgate.toFixed(0)} ms median, \`node bench/bare.js\` ${cold.bare.toFixed(0)} ms: ${gap.toFixed(0)} ms more (target within 250 ms: ${gap <= 250 ? 'PASS' : 'MISS'}).`, '');
    return lines.join('\n');
};


exports.writeSection = (section) => ResultsFile.replaceSection('## Events for free:', section);


if (require.main === module) {
    exports.run().then((section) => {

        exports.writeSection(section);
        console.log(section);
    }, (err) => {

        console.error(err);
        process.exitCode = 1;
    });
}
