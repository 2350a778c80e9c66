'use strict';

// BENCH_ONLY=time npm run bench (and the last part of a full run): what the timeline of a data set costs and that it
// is deterministic. Three measurements:
// - advance: in process, through the kit users get, an instance with a frozen clock and pay is given 1,000 pending
//   bank-transfer deposits, then `t.clock.advance('3d')` settles all of them inside the call; timed with
//   process.hrtime, BENCH_TIME_ADVANCES (15) rounds after 2 of warm-up, each on a fresh instance.
// - throughput with nothing scheduled: the code of commit 6fd41a4 (the last before the timeline), built from git into
//   bench/.cache/, and the current dist/, each a server in memory in its own process, take turns round by round
//   under the same load (autocannon in this process, BENCH_CONNECTIONS (10) connections, BENCH_TIME_ROUNDS (6) rounds
//   of BENCH_SECONDS (2) s, the first of each pair alternating). Reported: the median of each round's ratio of req/s,
//   and each server's CPU time per request (from /proc), which a busy machine bends less. Nothing falls due while
//   it runs: the demo data's next instant is weeks away and the bookings written lie in 2200. Then the same requests
//   in one process through server.inject, both builds side by side: CPU time per request, steadier on a busy machine.
// - the scenario of bench/time-scenario.json played twice, each on a fresh instance with a frozen clock and
//   sequential ids: the answers' bytes compared.
// Settings: BENCH_TIME_BASELINE (6fd41a4) names another commit to compare with.

const ChildProcess = require('node:child_process');
const { randomBytes } = require('node:crypto');
const Fs = require('node:fs');
const Os = require('node:os');
const Path = require('node:path');

const Autocannon = require('autocannon');
const ResultsFile = require('./results-file');


const internals = {
    root: Path.resolve(__dirname, '..'),
    baseline: process.env.BENCH_TIME_BASELINE || '6fd41a4',
    advanceRounds: Number(process.env.BENCH_TIME_ADVANCES ?? 15),
    rounds: Number(process.env.BENCH_TIME_ROUNDS ?? 6),
    seconds: Number(process.env.BENCH_SECONDS ?? 2),
    connections: Number(process.env.BENCH_CONNECTIONS ?? 10),
    injects: Number(process.env.BENCH_TIME_INJECTS ?? 1000),
    secret: randomBytes(32).toString('hex'),
    bakery: 'd851fadb-03ca-5a24-ba16-c15cce19933b',
    // Demo vehicles and locations: the bookings written go to these, an hour each, backwards from 2200.
    vehicles: ['67f7b2a9-5639-460c-a9f5-d114637c1b43', '1a1aec40-05e3-4128-a86c-6981ec6a3eb5', 'ffc619e8-15d4-45e7-b413-80963e315b7d'],
    locations: ['8a5c2440-7943-4c0d-bdf4-9777cd05095e', '2f4a202e-61d6-4275-9ddb-094f7d5a839d'],
    horizon: Date.parse('2200-01-01T00:00:00.000Z'),
    scenario: Path.join(__dirname, 'time-scenario.json')
};


internals.median = function (values) {

    const sorted = [...values].sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};


internals.percentile = function (values, p) {

    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
};


// 1,000 pending deposits on a fresh instance, then the advance that settles them, timed.
internals.advance = async function (kit) {

    const instance = await kit.instance({ pay: true, seed: 'none', clock: '2030-01-01T00:00:00.000Z', ids: 'sequential' });
    try {
        for (let i = 0; i < 1000; ++i) {
            // One in ten ends in 99 and is returned: both ways a transfer settles.
            const amount = 100 * (i + 1) + (i % 10 === 0 ? 99 : i % 50);
            const res = await instance.inject({
                method: 'POST',
                url: '/v1/pay/gateway/deposit',
                headers: { ...instance.auth(`payer-${i % 20}`), 'idempotency-key': `deposit-${i}` },
                payload: { provider_id: 'bank-transfer', asset: 'USD', amount }
            });

            if (res.statusCode !== 201) {
                throw new Error(`deposit ${i}: ${res.statusCode} ${res.payload}`);
            }
        }

        const started = process.hrtime.bigint();
        const applied = await instance.clock.advance('3d');
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        const total = Object.values(applied).reduce((sum, count) => sum + count, 0);
        if (total !== 1000 || applied['pay.transaction.failed'] !== 100) {
            throw new Error(`the advance applied ${JSON.stringify(applied)}, not 900 completed and 100 failed`);
        }

        return ms;
    }
    finally {
        await instance.close();
    }
};


internals.advances = async function (Testing) {

    const kit = await Testing.createTestKit();
    try {
        for (let i = 0; i < 2; ++i) {
            await internals.advance(kit);
        }

        const times = [];
        for (let i = 0; i < internals.advanceRounds; ++i) {
            times.push(await internals.advance(kit));
        }

        return { times, p50: internals.median(times), p90: internals.percentile(times, 0.9), min: Math.min(...times), max: Math.max(...times) };
    }
    finally {
        await kit.close();
    }
};


// The scenario on a fresh instance: every answer's status and bytes, and what each move of the clock applied.
internals.play = async function (kit, scenario) {

    const instance = await kit.instance({ pay: true, clock: scenario.clock, ids: 'sequential' });
    try {
        const answers = [];
        for (const step of scenario.steps) {
            if (step.advance !== undefined || step.now !== undefined) {
                answers.push(JSON.stringify(step.advance !== undefined ? await instance.clock.advance(step.advance) : await instance.clock.set(step.now)));
                continue;
            }

            const headers = { ...(step.as ? instance.auth(step.as) : {}), ...(step.key ? { 'idempotency-key': step.key } : {}) };
            const res = await instance.inject({ method: step.method, url: step.url, headers, payload: step.payload });
            answers.push(`${step.method} ${step.url} ${res.statusCode} ${res.payload}`);
        }

        return answers;
    }
    finally {
        await instance.close();
    }
};


internals.determinism = async function (Testing) {

    const scenario = JSON.parse(Fs.readFileSync(internals.scenario, 'utf8'));
    const kit = await Testing.createTestKit();
    try {
        const first = await internals.play(kit, scenario);
        const second = await internals.play(kit, scenario);
        const differing = first.filter((answer, i) => answer !== second[i]).length;
        return {
            steps: scenario.steps.length,
            bytes: Buffer.byteLength(first.join('\n')),
            identical: differing === 0 && first.length === second.length,
            differing
        };
    }
    finally {
        await kit.close();
    }
};


// The baseline's dist, built once from git into bench/.baseline (kept between runs: a commit does not change). Not in
// bench/.cache, whose node_modules (the suite's tools) holds other versions of joi and hapi's types than the checkout.
internals.buildBaseline = function (commit = internals.baseline) {

    const dir = Path.join(__dirname, '.baseline', `baseline-${commit}`);
    if (Fs.existsSync(Path.join(dir, 'dist', 'index.js'))) {
        return Path.join(dir, 'dist');
    }

    Fs.rmSync(dir, { recursive: true, force: true });
    Fs.mkdirSync(dir, { recursive: true });
    // Inside the checkout, so that its requires and types resolve from this checkout's node_modules.
    const archive = ChildProcess.spawnSync('git', ['-C', internals.root, 'archive', '--format=tar', commit], { maxBuffer: 1 << 30 });
    if (archive.status !== 0) {
        throw new Error(`git archive ${commit} failed: ${archive.stderr}`);
    }

    ChildProcess.execFileSync('tar', ['-x', '-C', dir], { input: archive.stdout });
    ChildProcess.execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', Path.join(dir, 'tsconfig.build.json')], { stdio: 'inherit' });
    return Path.join(dir, 'dist');
};


// The child: a server in memory of the given dist, demo-seeded, its URL on standard output.
internals.serve = async function (dist) {

    const Localgate = require(dist);

    const server = await Localgate.createServer({ storage: 'memory', logLevel: 'silent', port: 0, jwtSecret: process.env.AUTH_JWT_SECRET });
    await server.start();
    process.stdout.write(`${server.info.uri}\n`);
};


internals.start = function (name, dist, secret = internals.secret) {

    const child = ChildProcess.spawn(process.execPath, [__filename, 'serve', dist], { env: { ...process.env, AUTH_JWT_SECRET: secret }, stdio: ['ignore', 'pipe', 'inherit'] });
    return new Promise((resolve, reject) => {

        child.once('error', reject);
        child.once('exit', (code) => reject(new Error(`${name} exited with ${code} before listening`)));
        child.stdout.once('data', (chunk) => resolve({ name, url: chunk.toString().trim(), pid: child.pid, stop: () => child.kill() }));
    });
};


// A process's user and system CPU time in µs, from /proc (clock ticks of 10 ms).
internals.cpu = function (pid) {

    const fields = Fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
};


// The requests of each scenario; bookings are written an hour each, backwards from 2200, per server.
internals.scenarios = function (tokens) {

    const json = { 'content-type': 'application/json' };
    const slots = new Map();
    return {
        'products read': () => ({ method: 'GET', path: `/v1/commerce/products?business_id=${internals.bakery}&limit=20` }),
        'bookings read': () => ({ method: 'GET', path: '/v1/logistics/bookings?limit=20', headers: { authorization: `Bearer ${tokens.reader}` } }),
        'products write': () => ({ method: 'POST', path: '/v1/commerce/products', headers: { ...json, authorization: `Bearer ${tokens.writer}` }, body: JSON.stringify({ name: 'Bench loaf', price: 2.5, currency: 'USD', business_id: internals.bakery }) }),
        'bookings write': (server) => {

            const slot = slots.get(server.url) ?? 0;
            slots.set(server.url, slot + 1);
            const pickup = internals.horizon - (Math.floor(slot / internals.vehicles.length) + 1) * 3600_000;
            const booking = {
                vehicle_id: internals.vehicles[slot % internals.vehicles.length],
                pickup_location_id: internals.locations[0],
                dropoff_location_id: internals.locations[1],
                pickup_at: new Date(pickup).toISOString(),
                return_at: new Date(pickup + 3600_000).toISOString()
            };

            return { method: 'POST', path: '/v1/logistics/bookings', headers: { ...json, authorization: `Bearer ${tokens.writer}` }, body: JSON.stringify(booking) };
        }
    };
};


internals.load = async function (server, request, seconds) {

    const cpu = internals.cpu(server.pid);
    const result = await Autocannon({
        url: server.url,
        connections: internals.connections,
        duration: seconds,
        requests: [{ setupRequest: (base) => ({ ...base, ...request(server) }) }]
    });

    return { rate: result['2xx'] / seconds, failed: result.requests.total - result['2xx'], cpuUs: (internals.cpu(server.pid) - cpu) / (result.requests.total || 1) };
};


internals.throughput = async function (Localgate, dist) {

    const servers = {};
    try {
        servers.before = await internals.start('before', internals.buildBaseline());
        servers.now = await internals.start('now', dist);
        const tokens = { reader: Localgate.mintToken(internals.secret, 'bench-reader', 24 * 3600), writer: Localgate.mintToken(internals.secret, 'bench-writer', 24 * 3600) };
        const scenarios = internals.scenarios(tokens);

        // The reader's 100 bookings, on both servers alike.
        for (const server of Object.values(servers)) {
            for (let i = 0; i < 100; ++i) {
                const { path, headers, body } = scenarios['bookings write'](server);
                const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${tokens.reader}` }, body });
                if (res.status !== 201) {
                    throw new Error(`${server.name}: booking ${i}: ${res.status} ${await res.text()}`);
                }
            }
        }

        const figures = {};
        for (const [name, request] of Object.entries(scenarios)) {
            // Warm-up, then rounds in turns.
            for (const server of Object.values(servers)) {
                await internals.load(server, request, 1);
            }

            const rounds = [];
            for (let i = 0; i < internals.rounds; ++i) {
                const round = {};
                for (const target of i % 2 ? ['now', 'before'] : ['before', 'now']) {
                    round[target] = await internals.load(servers[target], request, internals.seconds);
                }

                rounds.push(round);
            }

            figures[name] = {
                before: internals.median(rounds.map((round) => round.before.rate)),
                now: internals.median(rounds.map((round) => round.now.rate)),
                ratios: rounds.map((round) => round.now.rate / round.before.rate),
                ratio: internals.median(rounds.map((round) => round.now.rate / round.before.rate)),
                cpuBefore: internals.median(rounds.map((round) => round.before.cpuUs)),
                cpuNow: internals.median(rounds.map((round) => round.now.cpuUs)),
                failed: rounds.reduce((sum, round) => sum + round.before.failed + round.now.failed, 0)
            };
        }

        return figures;
    }
    finally {
        for (const server of Object.values(servers)) {
            server.stop();
        }
    }
};


// The same requests in one process through server.inject, both builds side by side (a server in memory each), taking
// turns: the CPU time per request, which the machine's load bends less than the req/s of servers competing for two
// cores. BENCH_TIME_INJECTS (1,000) requests a turn, 20 turns each after one of warm-up; each pair of turns a ratio.
internals.inProcess = async function (dist) {

    const builds = { before: require(internals.buildBaseline()), now: require(dist) };
    const secret = internals.secret;
    const servers = {};
    const slots = {};
    const count = internals.injects;
    try {
        for (const [name, Localgate] of Object.entries(builds)) {
            servers[name] = await Localgate.createServer({ storage: 'memory', logLevel: 'silent', jwtSecret: secret });
            slots[name] = 0;
        }

        const headers = (name, subject) => ({ authorization: `Bearer ${builds[name].mintToken(secret, subject, 24 * 3600)}` });
        const booking = (name) => {

            const slot = slots[name]++;
            const pickup = internals.horizon - (Math.floor(slot / internals.vehicles.length) + 1) * 3600_000;
            return { vehicle_id: internals.vehicles[slot % internals.vehicles.length], pickup_location_id: internals.locations[0], dropoff_location_id: internals.locations[1], pickup_at: new Date(pickup).toISOString(), return_at: new Date(pickup + 3600_000).toISOString() };
        };

        const requests = {
            'products read': () => ({ url: `/v1/commerce/products?business_id=${internals.bakery}&limit=20` }),
            'bookings read': (name) => ({ url: '/v1/logistics/bookings?limit=20', headers: headers(name, 'bench-reader') }),
            'products write': (name) => ({ method: 'POST', url: '/v1/commerce/products', headers: headers(name, 'bench-writer'), payload: { name: 'Bench loaf', price: 2.5, currency: 'USD', business_id: internals.bakery } }),
            'bookings write': (name) => ({ method: 'POST', url: '/v1/logistics/bookings', headers: headers(name, 'bench-writer'), payload: booking(name) })
        };

        for (const name of Object.keys(builds)) {
            for (let i = 0; i < 100; ++i) {
                await servers[name].inject({ method: 'POST', url: '/v1/logistics/bookings', headers: headers(name, 'bench-reader'), payload: booking(name) });
            }
        }

        const figures = {};
        for (const [scenario, request] of Object.entries(requests)) {
            const turns = { before: [], now: [] };
            for (let i = 0; i < 21; ++i) {
                for (const name of i % 2 ? ['now', 'before'] : ['before', 'now']) {
                    const made = Array.from({ length: count }, () => request(name));
                    const cpu = process.cpuUsage();
                    for (const options of made) {
                        const res = await servers[name].inject(options);
                        if (res.statusCode >= 300) {
                            throw new Error(`${name} ${scenario}: ${res.statusCode} ${res.payload}`);
                        }
                    }

                    const used = process.cpuUsage(cpu);
                    if (i > 0) {
                        turns[name].push((used.user + used.system) / count);
                    }
                }
            }

            const ratios = turns.before.map((before, i) => before / turns.now[i]);
            figures[scenario] = { before: internals.median(turns.before), now: internals.median(turns.now), ratios, ratio: internals.median(ratios) };
        }

        return figures;
    }
    finally {
        for (const server of Object.values(servers)) {
            await server.stop();
        }
    }
};


/** Measures the three and answers the section of results.md. */
exports.run = async function ({ log = (line) => console.log(line) } = {}) {

    const started = Date.now();
    const dist = Path.join(internals.root, 'dist');
    const Localgate = require(dist);
    const Testing = require(Path.join(dist, 'testing'));

    const advance = await internals.advances(Testing);
    log(`advance settling 1,000 deposits: p50 ${advance.p50.toFixed(1)} ms, p90 ${advance.p90.toFixed(1)} ms (${advance.times.map((ms) => ms.toFixed(0)).join(' ')})`);
    const determinism = await internals.determinism(Testing);
    log(`scenario played twice: ${determinism.identical ? 'identical' : `${determinism.differing} answers differ`} (${determinism.steps} steps, ${determinism.bytes} bytes)`);
    const throughput = await internals.throughput(Localgate, dist);
    for (const [name, figure] of Object.entries(throughput)) {
        log(`${name}: ${internals.baseline} ${figure.before.toFixed(0)} req/s, now ${figure.now.toFixed(0)} req/s; per round ${figure.ratios.map((ratio) => `${(ratio * 100).toFixed(0)}%`).join(' ')}; CPU per request ${figure.cpuBefore.toFixed(0)} / ${figure.cpuNow.toFixed(0)} µs`);
    }

    const inProcess = await internals.inProcess(dist);
    for (const [name, figure] of Object.entries(inProcess)) {
        log(`${name} in process: ${internals.baseline} ${figure.before.toFixed(1)} µs, now ${figure.now.toFixed(1)} µs of CPU per request`);
    }

    return internals.section({ advance, determinism, throughput, inProcess, seconds: (Date.now() - started) / 1000 });
};


internals.section = function ({ advance, determinism, throughput, inProcess, seconds }) {

    const verdict = (met) => (met ? 'PASS' : 'MISS');
    // A 3% target says nothing when the middle half of the rounds spreads over more than 10 points: the machine, not
    // the code, moved them.
    const judge = (ratios, ratio) => {

        const spread = internals.percentile(ratios, 0.75) - internals.percentile(ratios, 0.25);
        return spread > 0.1 ? `inconclusive: the middle half of the rounds spans ${Math.round(spread * 100)} points` : verdict(ratio >= 0.97);
    };

    const percent = (value) => `${(value * 100).toFixed(1)}%`;
    const rows = Object.entries(throughput).map(([name, figure]) => {

        const judged = judge(figure.ratios, figure.ratio);
        return `| ${name} | ${Math.round(figure.before).toLocaleString('en')} | ${Math.round(figure.now).toLocaleString('en')} | ${percent(figure.ratio)} (${figure.ratios.map((ratio) => `${Math.round(ratio * 100)}`).join(', ')}) | ${figure.cpuBefore.toFixed(0)} / ${figure.cpuNow.toFixed(0)} | ${percent(figure.cpuBefore / figure.cpuNow)} | ${judged}${figure.failed ? `, ${figure.failed} not 2xx` : ''} |`;
    });

    return [
        '## Time: the timeline of a data set',
        '',
        `\`BENCH_ONLY=time npm run bench\`, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${Math.round(seconds)} s; Node ${process.version}, ${Os.cpus().length} cores, load average ${Os.loadavg().map((value) => value.toFixed(1)).join(' / ')} at the end.`,
        '',
        '| what | figure | target | |',
        '|---|---|---|---|',
        `| \`t.clock.advance('3d')\` settling 1,000 pending bank transfers, in process (${advance.times.length} rounds) | p50 ${advance.p50.toFixed(1)} ms, p90 ${advance.p90.toFixed(1)} ms (${advance.min.toFixed(1)}–${advance.max.toFixed(1)}) | p50 ≤ 100 ms | ${verdict(advance.p50 <= 100)} |`,
        `| the frozen-clock scenario (bench/time-scenario.json, ${determinism.steps} steps) played twice | ${determinism.identical ? `identical, ${determinism.bytes.toLocaleString('en')} bytes of answers` : `${determinism.differing} answers differ`} | byte-identical | ${verdict(determinism.identical)} |`,
        '',
        `With nothing scheduled, beside commit ${internals.baseline} (the code before the timeline), servers in memory, ${internals.rounds} rounds of ${internals.seconds} s taking turns, ${internals.connections} connections:`,
        '',
        `| request | ${internals.baseline} req/s | now req/s | now / before, median (per round %) | CPU µs per request, before / now | CPU speed, before / now | ≥ 97% |`,
        '|---|---|---|---|---|---|---|',
        ...rows,
        '',
        `The same requests in one process through \`server.inject\`, both builds side by side, 20 turns of ${internals.injects.toLocaleString('en')} each taking turns:`,
        '',
        `| request | ${internals.baseline} CPU µs per request (median) | now | speed now / before, median of the turns' ratios (quartiles) | ≥ 97% |`,
        '|---|---|---|---|---|',
        ...Object.entries(inProcess).map(([name, figure]) => `| ${name} | ${figure.before.toFixed(1)} | ${figure.now.toFixed(1)} | ${percent(figure.ratio)} (${percent(internals.percentile(figure.ratios, 0.25))}–${percent(internals.percentile(figure.ratios, 0.75))}) | ${judge(figure.ratios, figure.ratio)} |`),
        ''
    ].join('\n');
};


/** Writes the section into results.md: in place of the last one, or before the PostgreSQL section. */
exports.writeSection = (section) => ResultsFile.replaceSection('## Time:', section);


/** The section of the last run, to keep when results.md is written again. */
exports.section = function () {

    const file = Path.join(__dirname, 'results.md');
    const existing = Fs.existsSync(file) ? Fs.readFileSync(file, 'utf8') : '';
    const start = existing.indexOf('\n## Time:');
    if (start === -1) {
        return null;
    }

    const end = existing.indexOf('\n## ', start + 1);
    return existing.slice(start + 1, end === -1 ? undefined : end + 1).replace(/\n*$/, '\n');
};


/** Builds a commit's dist once into bench/.baseline and answers its path (the events benchmark compares with another commit). */
exports.buildBaseline = internals.buildBaseline;

/** Starts a server in memory of a dist in a child process: { name, url, pid, stop }. */
exports.start = internals.start;

/** The helpers the events benchmark shares: a process's CPU time in µs, the median and a percentile of numbers. */
Object.assign(exports, { cpu: internals.cpu, median: internals.median, percentile: internals.percentile });


// Only when run as a script: the events benchmark requires this file, and its own arguments are not this one's.
if (require.main === module && process.argv[2] === 'serve') {
    internals.serve(process.argv[3]);
}
else if (require.main === module) {
    exports.run().then((section) => {

        exports.writeSection(section);
        process.stdout.write(`\n${section}`);
    }, (err) => {

        console.error(err);
        process.exit(1);
    });
}
