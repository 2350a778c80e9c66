'use strict';

// npm run bench: localgate as it ships, the floor (bench/floor.js) and json-server 0.17, side by side on loopback.
// Builds the data sets, starts every server as its own process, drives them from a separate load-generator process
// (bench/load.js, autocannon), alternating targets round by round, measures instances over HTTP, then times
// start-up and instances in process. Prints one table and writes it to bench/results.md; raw numbers and server logs go to bench/results/ (ignored by git).
// Settings (environment): BENCH_SECONDS (3), BENCH_ROUNDS (3), BENCH_WARMUP_SECONDS (1), BENCH_CONNECTIONS (10),
// BENCH_STARTS (5, cold starts per variant), BENCH_INSTANCES (50), BENCH_INSTANCE_OPS (300, rounds of in-process instance
// operations and of HTTP creates), BENCH_LIVE_INSTANCES (1000, live instances whose memory is measured),
// BENCH_INSTANCE_ROUNDS (6, rounds of the read in the default instance and in an instance).
// PostgreSQL: BENCH_PG_URL (postgres://postgres@127.0.0.1:5432/test: a server where a database localgate_bench_<random>
// is created for the run and dropped after it; skipped with a note when it does not answer), DB_POOL_MAX (10, the pool
// of localgate and of its floor alike). BENCH_ONLY=postgres runs the PostgreSQL part alone (and rewrites only its
// section of results.md), BENCH_ONLY=sqlite everything but it; BENCH_QUICK=1 makes every round 1 s, one round, 0.5 s of
// warm-up unless those are set. BENCH_PG_SCENARIOS picks some of the PostgreSQL scenarios; BENCH_PROFILE=<dir> runs
// localgate-pg and floor-pg with --cpu-prof, writing their profiles there. BENCH_ONLY=journal measures faults and the
// request journal alone (bench/journal.js), BENCH_ONLY=hardening what the requests that once stalled the server cost
// now (bench/hardening.js). BENCH_ONLY=time measures the timeline alone (bench/time.js), which a full run measures last.
// BENCH_ONLY=events measures events and webhooks alone (bench/events.js): deliveries, isolation, and writes beside the
// code before events. BENCH_ONLY=free measures what events and the timeline cost beside the builds before them, the
// memory of empty instances and of instances with endpoints, and cold start (bench/free.js).

const ChildProcess = require('node:child_process');
const { randomBytes } = require('node:crypto');
const Fs = require('node:fs');
const Http = require('node:http');
const Os = require('node:os');
const Path = require('node:path');
const Util = require('node:util');

const Pg = require('pg');

const Data = require('./data');
const DataPg = require('./data-pg');
const Events = require('./events');
const Floor = require('./floor');
const FloorPg = require('./floor-pg');
const Localgate = require('../dist');
const Ports = require('./ports');
const ResultsFile = require('./results-file');
const Suite = require('./suite');
const Time = require('./time');


const internals = {
    root: Path.resolve(__dirname, '..'),
    results: Path.join(__dirname, 'results'),
    quick: Boolean(process.env.BENCH_QUICK && process.env.BENCH_QUICK !== '0'),
    settings: {
        seconds: Number(process.env.BENCH_SECONDS ?? (process.env.BENCH_QUICK && process.env.BENCH_QUICK !== '0' ? 1 : 3)),
        rounds: Number(process.env.BENCH_ROUNDS ?? (process.env.BENCH_QUICK && process.env.BENCH_QUICK !== '0' ? 1 : 3)),
        warmup: Number(process.env.BENCH_WARMUP_SECONDS ?? (process.env.BENCH_QUICK && process.env.BENCH_QUICK !== '0' ? 0.5 : 1)),
        connections: Number(process.env.BENCH_CONNECTIONS ?? 10),
        starts: Number(process.env.BENCH_STARTS ?? 5),
        instances: Number(process.env.BENCH_INSTANCES ?? 50),
        instanceOps: Number(process.env.BENCH_INSTANCE_OPS ?? 300),
        liveInstances: Number(process.env.BENCH_LIVE_INSTANCES ?? 1000),
        // Twice the other cells' rounds: the target is a 5% difference, and rounds on a shared machine vary by more.
        instanceRounds: Number(process.env.BENCH_INSTANCE_ROUNDS ?? 6),
        only: process.env.BENCH_ONLY || undefined,
        pgUrl: process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/test',
        // A comma-separated subset of the PostgreSQL part's scenarios (products-read, bookings-read, bookings-write, products-write).
        pgScenarios: process.env.BENCH_PG_SCENARIOS ? process.env.BENCH_PG_SCENARIOS.split(',').map((name) => name.trim()) : undefined,
        // A directory: localgate-pg and floor-pg run with --cpu-prof and write their profiles there when stopped.
        profile: process.env.BENCH_PROFILE ? Path.resolve(process.env.BENCH_PROFILE) : undefined,
        poolMax: Number(process.env.DB_POOL_MAX ?? 10)
    },
    secret: randomBytes(32).toString('hex'),
    targets: ['localgate', 'floor', 'json-server'],
    // Measured beside the targets in the reads and writes, to split localgate's distance from the floor.
    reference: 'hapi-alone',
    sizes: [10_000, 1_000, 100_000],
    clockTicks: 100,
    // Rounds of instance operations left out of the figures, in process and over HTTP.
    instanceWarmup: 50,
    // Numbers every load job, so that booking slots of different jobs never meet.
    nextRun: 0
};


internals.cells = [
    { scenario: 'products-read', group: 'Reads', size: 10_000, title: 'GET /v1/commerce/products?business_id=…&limit=20 (10,000 products)' },
    { scenario: 'bookings-read', group: 'Reads', size: 10_000, title: 'GET /v1/logistics/bookings?limit=20 (caller with 1,000 bookings)' },
    { scenario: 'products-read', group: 'Scale', size: 1_000, title: 'GET /v1/commerce/products?business_id=…&limit=20 (1,000 products)' },
    { scenario: 'products-read', group: 'Scale', size: 100_000, title: 'GET /v1/commerce/products?business_id=…&limit=20 (100,000 products)' },
    { scenario: 'bookings-write', group: 'Writes', size: 10_000, title: 'POST /v1/logistics/bookings (non-overlapping slots)' },
    { scenario: 'products-write', group: 'Writes', size: 10_000, title: 'POST /v1/commerce/products' }
];


// On PostgreSQL: localgate and its floor on one database holding the 10,000 data set; localgate and the floor on
// SQLite's files of that data set beside them, so that what localgate adds is seen on both engines in the same rounds.
internals.pg = {
    targets: ['localgate-pg', 'floor-pg', 'localgate', 'floor'],
    target: 0.85,
    cells: internals.cells.filter((cell) => cell.size === 10_000)
};


internals.main = async function () {

    const { only } = internals.settings;
    // Faults and the request journal are measured on their own (bench/journal.js).
    if (only === 'journal') {
        return require('./journal').main();
    }

    // What the requests that once stalled the server cost now (bench/hardening.js).
    if (only === 'hardening') {
        return require('./hardening').main();
    }

    if (only !== undefined && only !== 'postgres' && only !== 'sqlite' && only !== 'suite' && only !== 'time' && only !== 'events' && only !== 'free') {
        throw new Error(`BENCH_ONLY must be postgres, sqlite, suite, time, events, free, journal or hardening, not ${only}`);
    }

    // What events and the timeline cost beside the builds before them (bench/free.js): writes and reads in one
    // process, the memory of empty instances and of instances with endpoints, cold start.
    if (only === 'free') {
        const section = await require('./free').run({ log: internals.log });
        require('./free').writeSection(section);
        process.stdout.write('\n' + section);
        return;
    }

    // Events and webhooks (bench/events.js): deliveries a second, an advance with its deliveries, isolation of
    // instances, writes beside the code before events, duplicates under a fault, deliveries played twice.
    if (only === 'events') {
        const section = await Events.run({ log: internals.log });
        Events.writeSection(section);
        process.stdout.write('\n' + section);
        return;
    }

    if (only === 'suite') {
        Suite.writeSection(await Suite.run({ log: internals.log }));
        return;
    }

    // The timeline (bench/time.js): advance, throughput beside the code before it, the scenario played twice.
    if (only === 'time') {
        const section = await Time.run({ log: internals.log });
        Time.writeSection(section);
        process.stdout.write('\n' + section);
        return;
    }

    const started = Date.now();
    internals.checkFloor();
    Fs.mkdirSync(internals.results, { recursive: true });
    const tmp = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'localgate-bench-'));
    const servers = [];
    const load = ChildProcess.fork(Path.join(__dirname, 'load.js'), { stdio: 'inherit' });

    try {
        const datasets = {};
        for (const size of only === 'postgres' ? [10_000] : internals.sizes) {
            const at = Date.now();
            datasets[size] = await Data.build(Path.join(tmp, String(size)), { products: size, secret: internals.secret });
            internals.log(`data set of ${size.toLocaleString('en')} products built in ${Date.now() - at} ms`);
        }

        const tokens = {
            reader: Localgate.mintToken(internals.secret, Data.reader, 24 * 3600),
            writer: Localgate.mintToken(internals.secret, Data.writer, 24 * 3600),
            // With the role claim the /_instances routes need.
            admin: Localgate.mintToken(internals.secret, 'bench-admin', 24 * 3600, { admin: true })
        };

        if (only === 'postgres') {
            const sqlite = {};
            for (const target of ['localgate', 'floor']) {
                sqlite[target] = await internals.start(target, datasets[10_000]);
                servers.push(sqlite[target]);
            }

            const postgres = await internals.postgres(load, datasets[10_000], tokens, sqlite, tmp);
            load.disconnect();
            const section = internals.pgReport(postgres, { seconds: (Date.now() - started) / 1000 });
            internals.writeSection(section);
            Fs.writeFileSync(Path.join(internals.results, `raw-postgres-${new Date().toISOString().replace(/[:.]/g, '-')}.json`), JSON.stringify({ settings: internals.settings, machine: internals.machine(), postgres }, null, 2));
            process.stdout.write('\n' + section);
            return;
        }

        const targets = {};
        for (const size of internals.sizes) {
            targets[size] = {};
            for (const target of internals.names(size)) {
                const server = await internals.start(target, datasets[size]);
                servers.push(server);
                targets[size][target] = server;
            }
        }

        await internals.checkSameData(targets[10_000], tokens);

        const measured = [];
        for (const cell of internals.cells) {
            const writes = cell.scenario.endsWith('-write');
            const job = (server) => ({
                url: server.url,
                style: server.target,
                scenario: cell.scenario,
                connections: internals.settings.connections,
                token: writes ? tokens.writer : tokens.reader,
                reader: Data.reader,
                writer: Data.writer,
                ids: datasets[cell.size]
            });

            const names = internals.names(cell.size);
            const rounds = Object.fromEntries(names.map((target) => [target, []]));
            for (const target of names) {
                await internals.measure(load, targets[cell.size][target], { ...job(targets[cell.size][target]), seconds: internals.settings.warmup, run: internals.nextRun++ });
            }

            for (let i = 0; i < internals.settings.rounds; ++i) {
                // Each round starts with another target, so that drift does not favour one.
                const order = names.map((target, index) => names[(index + i) % names.length]);
                for (const target of order) {
                    const server = targets[cell.size][target];
                    const result = await internals.measure(load, server, { ...job(server), seconds: internals.settings.seconds, run: internals.nextRun++ });
                    rounds[target].push(result);
                    internals.log(`${cell.group.toLowerCase()} ${cell.scenario} ${cell.size} round ${i + 1} ${target}: ${Math.round(result.rps)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, server CPU ${Math.round(result.serverCpu * 100)}%, load CPU ${Math.round(result.loadCpu * 100)}%, other CPU ${Math.round(result.otherCpu * 100)}%${result.failed ? `, ${result.failed} failed` : ''}`);
                }
            }

            measured.push({ ...cell, rounds });
        }

        // Beside the SQLite localgate and floor of the cells above, still running.
        const postgres = only === 'sqlite' ? { skipped: 'BENCH_ONLY=sqlite' } : await internals.postgres(load, datasets[10_000], tokens, { localgate: targets[10_000].localgate, floor: targets[10_000].floor }, tmp);

        const instances = await internals.instances(load, tmp, servers, tokens);
        load.disconnect();
        const logs = [];
        for (const server of servers.splice(0)) {
            await internals.stop(server);
            if (server.target === 'localgate') {
                logs.push({ size: server.size, lines: await internals.countLines(server.log), requests: server.requests });
            }
        }

        const startup = await internals.startup(tmp);
        Object.assign(instances, internals.inProcess());
        const time = await Time.run({ log: internals.log });
        const report = internals.report({ measured, startup, logs, instances, seconds: (Date.now() - started) / 1000 }) + '\n' + internals.pgReport(postgres);
        // The sections of the parts a full run does not measure are kept from their own runs (BENCH_ONLY=suite,
        // events, free).
        const suite = Suite.section();
        const kept = ['## Events and webhooks:', '## Events for free:'].map((heading) => [heading, ResultsFile.section(heading)]);
        Fs.writeFileSync(Path.join(__dirname, 'results.md'), report);
        if (suite) {
            Suite.writeSection(suite);
        }

        for (const [heading, section] of kept) {
            if (section) {
                ResultsFile.replaceSection(heading, section);
            }
        }

        Time.writeSection(time);

        Fs.writeFileSync(Path.join(internals.results, `raw-${new Date().toISOString().replace(/[:.]/g, '-')}.json`), JSON.stringify({ settings: internals.settings, machine: internals.machine(), measured, startup, logs, instances, postgres }, null, 2));
        process.stdout.write('\n' + report);
    }
    finally {
        if (load.connected) {
            load.disconnect();
        }

        for (const server of servers) {
            await internals.stop(server);
        }

        Fs.rmSync(tmp, { recursive: true, force: true });
    }
};


// The targets measured on a data set: the reference only beside the reads and writes, on 10,000 products.
internals.names = function (size) {

    return size === 10_000 ? [...internals.targets, internals.reference] : internals.targets;
};


// The floor must run the stores' SQL: refuse to compare against a floor that drifted from lib/.
internals.checkFloor = function () {

    for (const [namespace, queries] of Object.entries(Floor.sql)) {
        const shipped = require(`../dist/namespaces/${namespace}/sqlite`).queries;

        for (const [name, sql] of Object.entries(queries)) {
            if (shipped[name] !== sql) {
                throw new Error(`bench/floor.js: the SQL of ${namespace}.${name} differs from lib/namespaces/${namespace}/sqlite.ts (or dist/ is stale: npm run build); copy it over`);
            }
        }
    }
};


// pg, for the PostgreSQL targets: { url } of the database and the data directory localgate keeps its pay and secret in.
internals.start = async function (target, dataset, pg = {}) {

    const port = await Ports.freePort();
    const url = `http://127.0.0.1:${port}`;
    const log = Path.join(internals.results, `${target}-${dataset.products}.log`);
    const out = Fs.openSync(log, 'w');
    const spawn = {
        // What `npm start` runs, as it ships: logging at info, to a file.
        localgate: [['bin/localgate.js', 'start'], {
            cwd: internals.root,
            env: internals.env({ PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataset.dir, AUTH_JWT_SECRET: internals.secret, LOG_LEVEL: 'info' })
        }],
        // The same, on PostgreSQL: seeded by the benchmark, never with the demo data.
        'localgate-pg': [['bin/localgate.js', 'start'], {
            cwd: internals.root,
            env: internals.env({ PORT: String(port), HOST: '127.0.0.1', DATA_DIR: pg.dataDir, DATABASE_URL: pg.url, DB_POOL_MAX: String(internals.settings.poolMax), SEED: 'none', AUTH_JWT_SECRET: internals.secret, LOG_LEVEL: 'info' })
        }],
        floor: [[Path.join(__dirname, 'floor.js'), dataset.dir, String(port)], {}],
        'floor-pg': [[Path.join(__dirname, 'floor-pg.js'), pg.url, String(port)], { env: internals.env({ DB_POOL_MAX: String(internals.settings.poolMax) }) }],
        'hapi-alone': [[Path.join(__dirname, 'hapi-alone.js'), dataset.dir, String(port)], {}],
        // --quiet: no request log, the most favourable setting for it.
        'json-server': [[require.resolve('json-server/lib/cli/bin.js'), '--port', String(port), '--host', '127.0.0.1', '--quiet', dataset.jsonFile], { cwd: dataset.dir }]
    };

    const [args, options] = spawn[target];
    const profile = internals.settings.profile && pg.url && dataset.products !== 'migrate' ? ['--cpu-prof', '--cpu-prof-dir', internals.settings.profile, '--cpu-prof-name', `${target}-${Date.now()}.cpuprofile`] : [];
    const child = ChildProcess.spawn(process.execPath, [...profile, ...args], { ...options, stdio: ['ignore', out, out] });
    Fs.closeSync(out);
    const server = { target, size: dataset.products, url, child, log, requests: 0 };
    const probe = target.startsWith('localgate') ? '/health' : (target === 'json-server' ? '/products?_limit=1' : '/v1/commerce/products?limit=1');
    await internals.ready(`${url}${probe}`, child, 30_000);
    return server;
};


internals.env = function (values) {

    const env = { ...process.env };
    // Settings of the shell that would change what is measured; a PostgreSQL target gets its own.
    for (const name of ['VALIDATE_RESPONSES', 'SEED', 'DATABASE_URL', 'COMMERCE_DB_URL', 'LOGISTICS_DB_URL', 'WEATHER_DB_URL', 'PAY_DB_URL', 'DB_POOL_MAX']) {
        delete env[name];
    }

    return { ...env, ...values };
};


internals.stop = function (server) {

    const { child } = server;
    if (child.exitCode !== null || child.signalCode !== null) {
        return Promise.resolve();
    }

    return new Promise((resolve) => {

        child.once('exit', resolve);
        child.kill('SIGTERM');
    });
};


// With database ({ admin, name }: a client of the server and the benchmark's database), the CPU of that database's
// backends is measured too (dbCpu), and is not counted as other.
internals.measure = async function (load, server, job, { database } = {}) {

    const before = { server: internals.cpuSeconds(server.child.pid), machine: internals.busySeconds(), database: database ? await internals.backendsCpu(database) : null };
    const result = await internals.job(load, job);
    const serverCpu = (internals.cpuSeconds(server.child.pid) - before.server) / result.seconds;
    const machineCpu = (internals.busySeconds() - before.machine) / result.seconds;
    const dbCpu = database ? await internals.backendsCpu(database, before.database) / result.seconds : 0;
    const failed = Object.entries(result.statuses).filter(([status]) => Number(status) >= 300).reduce((sum, [, count]) => sum + count, 0) + result.errors;
    server.requests += Object.values(result.statuses).reduce((sum, count) => sum + count, 0);
    // What neither the server nor the load generator (nor the database) used: other processes disturbing the round.
    return { ...result, failed, serverCpu, ...(database ? { dbCpu } : {}), otherCpu: Math.max(0, machineCpu - serverCpu - result.loadCpu - dbCpu) };
};


// CPU seconds of the backends connected to the database (the server processes serving its connections, from /proc):
// by pid, or with `since`, the seconds used since that reading (a connection opened meanwhile counts from its start).
// The server's shared processes (WAL writer, checkpointer) and other databases' backends are left out.
internals.backendsCpu = async function ({ admin, name }, since) {

    const { rows } = await admin.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [name]);
    const now = new Map(rows.map(({ pid }) => [pid, internals.cpuSeconds(pid)]));
    if (!since) {
        return now;
    }

    let used = 0;
    for (const [pid, seconds] of now) {
        used += seconds - (since.get(pid) ?? 0);
    }

    return used;
};


internals.job = function (load, job) {

    return new Promise((resolve, reject) => {

        const timer = setTimeout(() => reject(new Error(`the load generator did not answer within ${job.seconds + 60} s`)), (job.seconds + 60) * 1000);
        load.once('message', (message) => {

            clearTimeout(timer);
            return message.error ? reject(new Error(message.error)) : resolve(message.result);
        });

        load.send(job);
    });
};


// User and system CPU time a process has used, from /proc (Linux); 0 elsewhere.
internals.cpuSeconds = function (pid) {

    try {
        const fields = Fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
        return (Number(fields[11]) + Number(fields[12])) / internals.clockTicks;
    }
    catch {
        return 0;
    }
};


// CPU time the whole machine has spent busy, from /proc/stat (Linux); 0 elsewhere.
internals.busySeconds = function () {

    try {
        // user nice system idle iowait irq softirq steal: all but idle and iowait.
        const [user, nice, system, , , irq, softirq, steal] = Fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1).map(Number);
        return (user + nice + system + irq + softirq + steal) / internals.clockTicks;
    }
    catch {
        return 0;
    }
};


internals.request = function (url, { method = 'GET', headers = {}, body, agent = false } = {}) {

    return new Promise((resolve, reject) => {

        const req = Http.request(url, { method, headers, agent }, (res) => {

            const chunks = [];
            res.on('data', (chunk) => chunks.push(chunk));
            res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() }));
        });

        req.once('error', reject);
        req.end(body);
    });
};


// Polls until the URL answers 200; resolves to the milliseconds that took.
internals.ready = async function (url, child, limit) {

    const started = process.hrtime.bigint();
    const elapsed = () => Number(process.hrtime.bigint() - started) / 1e6;
    let exited = null;
    child.once('exit', (code) => {

        exited = code;
    });

    while (elapsed() < limit) {
        if (exited !== null) {
            throw new Error(`${url}: the server exited (code ${exited}) before answering`);
        }

        try {
            const res = await internals.request(url);
            if (res.status === 200) {
                return elapsed();
            }
        }
        catch { }

        await Util.promisify(setTimeout)(2);
    }

    throw new Error(`${url} did not answer 200 within ${limit} ms`);
};


// Every target must serve the same records before their speeds are compared.
internals.checkSameData = async function (targets, tokens) {

    const business = (await internals.request(`${targets.localgate.url}/v1/commerce/products?limit=1&offset=200`)).body;
    const businessId = JSON.parse(business).data[0].business_id;
    const get = (target, localPath, jsonPath, token) => {

        const json = target === 'json-server';
        return internals.request(`${targets[target].url}${json ? jsonPath : localPath}`, { headers: json ? {} : { authorization: `Bearer ${token}` } });
    };

    const checks = [
        ['products', `/v1/commerce/products?business_id=${businessId}&limit=20`, `/products?business_id=${businessId}&_limit=20`, tokens.reader],
        ['bookings', '/v1/logistics/bookings?limit=20', `/bookings?customer_id=${Data.reader}&_limit=20`, tokens.reader]
    ];

    for (const [name, localPath, jsonPath, token] of checks) {
        const answers = await Promise.all(Object.keys(targets).map(async (target) => [target, await get(target, localPath, jsonPath, token)]));
        const expected = JSON.parse(answers[0][1].body);
        for (const [target, answer] of answers) {
            const records = target === 'json-server' ? JSON.parse(answer.body) : JSON.parse(answer.body).data;
            const same = answer.status === 200 && records.length === 20 &&
                Util.isDeepStrictEqual(target === 'json-server' ? records : JSON.parse(answer.body), target === 'json-server' ? expected.data : expected) &&
                answer.headers['x-total-count'] === String(expected.total);

            if (!same) {
                throw new Error(`${target} does not serve the same ${name} as localgate: ${answer.status} ${answer.body.slice(0, 300)}\nlocalgate: ${answers[0][1].body.slice(0, 300)}`);
            }
        }
    }

    internals.log(`${Object.keys(targets).join(', ')} serve identical records`);
};


// The PostgreSQL part: a database of its own on BENCH_PG_URL's server, migrated by localgate (started once with
// SEED=none, then stopped), filled with the 10,000 data set, then localgate on it beside its floor (bench/floor-pg.js)
// and the SQLite floor, the reads and writes at 10,000 taking turns as above. Skipped, with the reason, when no
// PostgreSQL answers or dist/ has no PostgreSQL stores. The database is dropped at the end.
internals.postgres = async function (load, dataset, tokens, sqlite, tmp) {

    const missing = internals.checkFloorPg();
    if (missing) {
        internals.log(`PostgreSQL part skipped: ${missing}`);
        return { skipped: missing };
    }

    const admin = new Pg.Client({ connectionString: internals.settings.pgUrl, connectionTimeoutMillis: 3000 });
    try {
        await admin.connect();
    }
    catch (err) {
        const reason = `no PostgreSQL answers at ${internals.describeUrl(internals.settings.pgUrl)} (${err.message || err.code}); set BENCH_PG_URL to measure it`;
        internals.log(`PostgreSQL part skipped: ${reason}`);
        return { skipped: reason };
    }

    const name = `localgate_bench_${randomBytes(6).toString('hex')}`;
    const url = new URL(internals.settings.pgUrl);
    url.pathname = `/${name}`;
    const own = [];
    try {
        const postgres = {};
        for (const setting of ['server_version', 'shared_buffers', 'synchronous_commit', 'fsync', 'max_connections']) {
            postgres[setting] = (await admin.query(`SHOW ${setting}`)).rows[0][setting];
        }

        await admin.query(`CREATE DATABASE ${name}`);
        internals.log(`PostgreSQL ${postgres.server_version}: database ${name} created`);
        const pg = { url: url.href, dataDir: Path.join(tmp, 'postgres') };

        // A first start migrates the schemas (SEED=none: no demo data); the data set goes in while nothing runs.
        let at = Date.now();
        await internals.stop(await internals.start('localgate-pg', { ...dataset, products: 'migrate' }, pg));
        internals.log(`localgate migrated ${name} in ${Date.now() - at} ms`);
        at = Date.now();
        const copied = await DataPg.load(dataset, pg.url);
        internals.log(`data set of ${dataset.products.toLocaleString('en')} products copied to PostgreSQL in ${Date.now() - at} ms (${Object.entries(copied).map(([table, rows]) => `${table} ${rows}`).join(', ')})`);

        const targets = { ...sqlite };
        for (const target of ['localgate-pg', 'floor-pg']) {
            const started = await internals.start(target, dataset, pg);
            own.push(started);
            targets[target] = started;
        }

        const sameAsSqlite = await internals.checkSamePg(targets, tokens);
        const measured = [];
        for (const cell of internals.pg.cells.filter((one) => !internals.settings.pgScenarios || internals.settings.pgScenarios.includes(one.scenario))) {
            const writes = cell.scenario.endsWith('-write');
            const job = (server, seconds) => ({
                url: server.url,
                style: 'localgate',
                scenario: cell.scenario,
                connections: internals.settings.connections,
                token: writes ? tokens.writer : tokens.reader,
                reader: Data.reader,
                writer: Data.writer,
                ids: dataset,
                seconds,
                run: internals.nextRun++
            });

            const names = internals.pg.targets;
            const rounds = Object.fromEntries(names.map((target) => [target, []]));
            for (const target of names) {
                await internals.measure(load, targets[target], job(targets[target], internals.settings.warmup), { database: { admin, name } });
            }

            for (let i = 0; i < internals.settings.rounds; ++i) {
                const order = names.map((target, index) => names[(index + i) % names.length]);
                for (const target of order) {
                    const result = await internals.measure(load, targets[target], job(targets[target], internals.settings.seconds), { database: { admin, name } });
                    rounds[target].push(result);
                    internals.log(`postgres ${cell.scenario} ${cell.size} round ${i + 1} ${target}: ${Math.round(result.rps)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, server CPU ${Math.round(result.serverCpu * 100)}%, PostgreSQL CPU ${Math.round(result.dbCpu * 100)}%, load CPU ${Math.round(result.loadCpu * 100)}%, other CPU ${Math.round(result.otherCpu * 100)}%${result.failed ? `, ${result.failed} failed` : ''}`);
                }
            }

            measured.push({ ...cell, rounds });
        }

        const localgate = targets['localgate-pg'];
        await internals.stop(localgate);
        return { server: postgres, database: name, copied, sameAsSqlite, measured, log: { lines: await internals.countLines(localgate.log), requests: localgate.requests } };
    }
    finally {
        for (const server of own) {
            await internals.stop(server);
        }

        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch((err) => internals.log(`could not drop ${name}: ${err.message}`));
        await admin.end();
    }
};


// The PostgreSQL floor runs the stores' statements from dist/: refuse to measure when one it runs is missing.
internals.checkFloorPg = function () {

    let queries;
    try {
        queries = FloorPg.queries();
    }
    catch (err) {
        return `dist/namespaces/<namespace>/postgres.js has no stores to read the SQL from (${err.message.split('\n')[0]}; npm run build)`;
    }

    for (const [namespace, names] of Object.entries(FloorPg.uses)) {
        for (const name of names) {
            const query = queries[namespace]?.[name];
            if (typeof query?.text !== 'string' || typeof query.name !== 'string') {
                return `lib/namespaces/${namespace}/postgres.ts exports no statement ${name} (the queries bench/floor-pg.js runs; npm run build, or update the floor)`;
            }
        }
    }

    return null;
};


// localgate on PostgreSQL and its floor must answer the same product and bookings pages, byte for byte once parsed,
// with the same totals; the SQLite targets' answers are compared too (the same data set), and a difference is reported.
internals.checkSamePg = async function (targets, tokens) {

    const localgate = targets['localgate-pg'];
    const business = JSON.parse((await internals.request(`${localgate.url}/v1/commerce/products?limit=1&offset=200`)).body).data[0].business_id;
    const checks = [
        ['products', `/v1/commerce/products?business_id=${business}&limit=20`],
        ['bookings', '/v1/logistics/bookings?limit=20']
    ];

    let sameAsSqlite = true;
    for (const [name, path] of checks) {
        const answers = {};
        for (const target of Object.keys(targets)) {
            answers[target] = await internals.request(`${targets[target].url}${path}`, { headers: { authorization: `Bearer ${tokens.reader}` } });
        }

        const expected = answers['localgate-pg'];
        const same = (answer) => {

            return answer.status === 200 && JSON.parse(answer.body).data.length === 20 &&
                Util.isDeepStrictEqual(JSON.parse(answer.body), JSON.parse(expected.body)) &&
                answer.headers['x-total-count'] === expected.headers['x-total-count'];
        };

        if (!same(expected) || !same(answers['floor-pg'])) {
            throw new Error(`floor-pg does not serve the same ${name} as localgate-pg: ${answers['floor-pg'].status} ${answers['floor-pg'].body.slice(0, 300)}\nlocalgate-pg: ${expected.status} ${expected.body.slice(0, 300)}`);
        }

        for (const target of ['localgate', 'floor']) {
            if (!same(answers[target])) {
                sameAsSqlite = false;
                internals.log(`${target} on SQLite serves other ${name} than localgate-pg: ${answers[target].body.slice(0, 300)}\nlocalgate-pg: ${expected.body.slice(0, 300)}`);
            }
        }
    }

    internals.log(`localgate-pg and floor-pg serve identical records${sameAsSqlite ? ', the same as localgate and the floor on SQLite' : ''}`);
    return sameAsSqlite;
};


internals.describeUrl = function (text) {

    const url = new URL(text);
    url.password = '';
    return url.href;
};


// The PostgreSQL section of results.md: always its last section, so that BENCH_ONLY=postgres can replace it alone.
internals.pgReport = function (postgres, { seconds } = {}) {

    const lines = ['## PostgreSQL', ''];
    if (postgres.skipped) {
        lines.push(`Not measured in this run: ${postgres.skipped}.`);
        return lines.join('\n') + '\n';
    }

    const machine = internals.machine();
    const { settings } = internals;
    const { server } = postgres;
    lines.push(
        seconds === undefined ?
            'Measured by the same run, after the SQLite cells above, beside their localgate and floor on the 10,000 data set (which their writes had grown).' :
            `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC by \`BENCH_ONLY=postgres node bench/run.js\` in ${Math.round(seconds)} s (the rest of this file is from the last full run).`,
        '',
        `- Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memory} memory; ${machine.os}; Node ${machine.node}; the PostgreSQL server on the same machine, over TCP on loopback`,
        `- PostgreSQL ${server.server_version}: shared_buffers ${server.shared_buffers}, synchronous_commit ${server.synchronous_commit}, fsync ${server.fsync}, max_connections ${server.max_connections}; pg ${require('pg/package.json').version}`,
        `- A database of its own (dropped after the run), migrated by localgate's first start with SEED=none, then filled with the data set of the SQLite cells (bench/data.js: the same ids and timestamps, copied by batched INSERTs, the counters kept by the schemas' triggers), then VACUUM ANALYZE`,
        `- localgate-pg: \`node bin/localgate.js start\` with DATABASE_URL, DB_POOL_MAX=${settings.poolMax}, LOG_LEVEL=info to a file (pay stays on SQLite); floor-pg: bench/floor-pg.js, node:http and a \`pg\` Pool of ${settings.poolMax} per schema running the stores' own statements (imported from dist/), in the same transactions; beside them as references, localgate (SQLite, as in the cells above) and its floor bench/floor.js, on the SQLite files of the same data set`,
        `- Load as above: ${settings.connections} connections, ${settings.rounds} rounds of ${settings.seconds} s per target after a ${settings.warmup} s warm-up, the four targets taking turns. PostgreSQL CPU: the share of one core used by the server processes of the benchmark's database (its connections' backends, from /proc; not the WAL writer or checkpointer) during the target's rounds`,
        '- CPU µs per request: CPU time per 2xx response, median of the rounds, of the server process and of the database\'s backends: what a request costs, less bent than req/s by a machine that lends the targets less than whole cores',
        '',
        '| scenario | target | req/s (min–max) | p50 ms | p99 ms | server CPU (of one core) | server CPU µs per request | PostgreSQL CPU | PostgreSQL CPU µs per request | vs floor-pg | vs SQLite floor |',
        '|---|---|---|---|---|---|---|---|---|---|---|');

    const verdicts = [];
    for (const cell of postgres.measured) {
        const cost = (rounds, field) => internals.median(rounds.map((round) => 1e6 * round[field] / round.rps));
        const summary = Object.fromEntries(Object.entries(cell.rounds).map(([target, rounds]) => [target, {
            ...internals.summary(rounds),
            dbCpu: internals.median(rounds.map((round) => round.dbCpu)),
            serverCost: cost(rounds, 'serverCpu'),
            dbCost: cost(rounds, 'dbCpu')
        }]));

        for (const target of Object.keys(summary)) {
            const own = summary[target];
            const flag = own.failed ? ` (${own.failed} failed)` : '';
            lines.push(`| ${target === 'localgate-pg' ? `${cell.group}: ${cell.title}` : ''} | ${{ floor: 'SQLite floor (reference)', localgate: 'localgate on SQLite (reference)' }[target] ?? target}${flag} | ${internals.number(own.rps)} (${internals.number(own.min)}–${internals.number(own.max)}) | ${own.p50.toFixed(2)} | ${own.p99.toFixed(2)} | ${Math.round(own.serverCpu * 100)}% | ${internals.number(own.serverCost)} | ${Math.round(own.dbCpu * 100)}% | ${internals.number(own.dbCost)} | ${Math.round(100 * own.rps / summary['floor-pg'].rps)}% | ${Math.round(100 * own.rps / summary.floor.rps)}% |`);
        }

        const share = summary['localgate-pg'].rps / summary['floor-pg'].rps;
        const paired = cell.rounds['localgate-pg'].map((round, i) => Math.round(100 * round.rps / cell.rounds['floor-pg'][i].rps));
        verdicts.push(`- ${cell.scenario}: localgate-pg at ${Math.round(share * 100)}% of floor-pg's req/s (target ${Math.round(internals.pg.target * 100)}%): ${share >= internals.pg.target ? 'met' : '**missed**'}; round by round ${paired.map((ratio) => `${ratio}%`).join(', ')}; server CPU per request ${Math.round(100 * summary['localgate-pg'].serverCost / summary['floor-pg'].serverCost)}% of floor-pg's; floor-pg at ${Math.round(100 * summary['floor-pg'].rps / summary.floor.rps)}% of the SQLite floor's req/s; on SQLite in the same rounds, localgate at ${Math.round(100 * summary.localgate.rps / summary.floor.rps)}% of its floor's req/s, ${Math.round(100 * summary.localgate.serverCost / summary.floor.serverCost)}% of its CPU per request`);
    }

    const others = postgres.measured.flatMap((cell) => Object.values(cell.rounds).flat().map((round) => round.otherCpu));
    lines.push('', '### Targets on PostgreSQL', '', ...verdicts, '', '### Checks on PostgreSQL', '',
        `- Before measuring, localgate-pg and floor-pg answered the same product page of a business and the same bookings page with identical records and totals; localgate and the floor on SQLite ${postgres.sameAsSqlite ? 'answered the same records too' : '**answered other records** (see the run\'s log)'}.`,
        `- Other processes on the machine used a median ${Math.round(internals.median(others) * 100)}% of a core during these rounds (most: ${Math.round(Math.max(...others) * 100)}%).`,
        `- localgate-pg wrote ${internals.number(postgres.log.lines)} log lines for the ${internals.number(postgres.log.requests)} requests of the load generator.`);

    return lines.join('\n') + '\n';
};


// BENCH_ONLY=postgres: replaces the PostgreSQL section of results.md (its last), keeping the rest of the file.
internals.writeSection = function (section) {

    const file = Path.join(__dirname, 'results.md');
    const existing = Fs.existsSync(file) ? Fs.readFileSync(file, 'utf8') : '# localgate benchmark results\n';
    const at = existing.indexOf('\n## PostgreSQL\n');
    const kept = at === -1 ? existing.replace(/\n*$/, '\n') : existing.slice(0, at + 1);
    Fs.writeFileSync(file, `${kept}\n${section}`);
};

// Instances over HTTP, against `node bin/localgate.js start` on a fresh data directory (created and seeded
// with the demo data, as a first start does): the time of POST /_instances, sequential requests from this process;
// then the same read in the default instance and in a demo-seeded instance of that server, and in the default instance
// of a server in memory (DATA_DIR=:memory:) as a reference, taking turns round by round like the other cells.
internals.instances = async function (load, tmp, servers, tokens) {

    const own = [];
    try {
        const shipped = await internals.start('localgate', { dir: Path.join(tmp, 'demo'), products: 'demo' });
        own.push(shipped);
        const memory = await internals.start('localgate', { dir: ':memory:', products: 'memory' });
        own.push(memory);
        servers.push(...own);

        const admin = { authorization: `Bearer ${tokens.admin}` };
        const http = await internals.httpCreates(shipped, admin);
        internals.log(`POST /_instances: median ${internals.median(http.create).toFixed(2)} ms over ${http.create.length} sequential requests`);

        const created = await internals.request(`${shipped.url}/_instances`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: '{"seed":"demo"}' });
        internals.expect(created, 201, 'POST /_instances');
        const prefix = JSON.parse(created.body).base_path;
        const targets = [
            { name: 'default', server: shipped, prefix: '' },
            { name: 'instance', server: shipped, prefix },
            { name: 'memory', server: memory, prefix: '' }
        ];

        await internals.checkSamePage(targets);
        const job = (target, seconds) => ({ url: target.server.url, style: 'localgate', scenario: 'products-page', prefix: target.prefix, connections: internals.settings.connections, ids: {}, seconds, run: 0 });
        const rounds = Object.fromEntries(targets.map((target) => [target.name, []]));
        for (const target of targets) {
            await internals.measure(load, target.server, job(target, internals.settings.warmup));
        }

        for (let i = 0; i < internals.settings.instanceRounds; ++i) {
            const order = targets.map((target, index) => targets[(index + i) % targets.length]);
            for (const target of order) {
                const result = await internals.measure(load, target.server, job(target, internals.settings.seconds));
                rounds[target.name].push(result);
                internals.log(`instances products-page round ${i + 1} ${target.name}: ${Math.round(result.rps)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, server CPU ${Math.round(result.serverCpu * 100)}%, load CPU ${Math.round(result.loadCpu * 100)}%, other CPU ${Math.round(result.otherCpu * 100)}%${result.failed ? `, ${result.failed} failed` : ''}`);
            }
        }

        return { http, reads: rounds };
    }
    finally {
        for (const server of own) {
            await internals.stop(server);
            servers.splice(servers.indexOf(server), 1);
        }
    }
};


// Sequential requests on one kept-alive connection, taking turns: a product page (the reference), POST /_instances
// (a demo-seeded instance), DELETE of that instance, and POST /_instances on a new connection (as a client without
// keep-alive makes it), deleted untimed. The first rounds warm up and are left out.
internals.httpCreates = async function (server, admin) {

    const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 });
    const post = { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: '{"seed":"demo"}' };
    const times = { read: [], create: [], delete: [], createNewConnection: [] };
    const timed = async (name, keep, url, options, status) => {

        const started = process.hrtime.bigint();
        const res = await internals.request(url, options);
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        internals.expect(res, status, `${options.method ?? 'GET'} ${url}`);
        if (keep) {
            times[name].push(ms);
        }

        return res;
    };

    try {
        for (let i = 0; i < internals.instanceWarmup + internals.settings.instanceOps; ++i) {
            const keep = i >= internals.instanceWarmup;
            await timed('read', keep, `${server.url}/v1/commerce/products?limit=20`, { agent }, 200);
            const { id } = JSON.parse((await timed('create', keep, `${server.url}/_instances`, { ...post, agent }, 201)).body);
            await timed('delete', keep, `${server.url}/_instances/${id}`, { method: 'DELETE', headers: admin, agent }, 204);
            const other = JSON.parse((await timed('createNewConnection', keep, `${server.url}/_instances`, post, 201)).body);
            internals.expect(await internals.request(`${server.url}/_instances/${other.id}`, { method: 'DELETE', headers: admin, agent }), 204, 'DELETE /_instances/{id}');
        }
    }
    finally {
        agent.destroy();
    }

    return times;
};


internals.expect = function (res, status, what) {

    if (res.status !== status) {
        throw new Error(`${what}: ${res.status} ${res.body.slice(0, 300)}`);
    }
};


// The read compared must be the same: identical first pages and totals in the default instance, the instance and the
// server in memory.
internals.checkSamePage = async function (targets) {

    const answers = await Promise.all(targets.map((target) => internals.request(`${target.server.url}${target.prefix}/v1/commerce/products?limit=20`)));
    const expected = answers[0];
    for (const [index, answer] of answers.entries()) {
        const same = answer.status === 200 && JSON.parse(answer.body).data.length === 20 &&
            Util.isDeepStrictEqual(JSON.parse(answer.body), JSON.parse(expected.body)) &&
            answer.headers['x-total-count'] === expected.headers['x-total-count'];

        if (!same) {
            throw new Error(`${targets[index].name} does not serve the same product page as the default instance: ${answer.status} ${answer.body.slice(0, 300)}\ndefault: ${expected.body.slice(0, 300)}`);
        }
    }

    internals.log(`${targets.map((target) => target.name).join(', ')} serve identical product pages`);
};


internals.countLines = async function (file) {

    let lines = 0;
    for await (const chunk of Fs.createReadStream(file)) {
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) {
            ++lines;
        }
    }

    return lines;
};


// Wall time from spawning the command to the first 200 on /health, the variants taking turns. Beside localgate: a bare
// node:http server (bench/bare.js), alone and through `npm start` of a package whose start script runs it, which is
// what npm itself adds to a start.
internals.startup = async function (tmp) {

    const bare = Path.join(tmp, 'bare-package');
    Fs.mkdirSync(bare, { recursive: true });
    Fs.writeFileSync(Path.join(bare, 'package.json'), JSON.stringify({ name: 'bare', version: '1.0.0', private: true, scripts: { start: `node ${JSON.stringify(Path.join(__dirname, 'bare.js'))}` } }));

    const variants = [
        { name: 'npm start', when: 'first start, creating, migrating and seeding the databases', command: 'npm', args: ['start'], fresh: true },
        { name: 'npm start', when: 'existing data directory', command: 'npm', args: ['start'], fresh: false },
        { name: 'node bin/localgate.js start', when: 'existing data directory', command: process.execPath, args: ['bin/localgate.js', 'start'], fresh: false },
        { name: 'node bench/bare.js', when: 'a bare node:http server (reference)', command: process.execPath, args: [Path.join(__dirname, 'bare.js')], bare: true },
        { name: 'npm start', when: 'of a package whose start script runs bench/bare.js: npm\'s own share (reference)', command: 'npm', args: ['start'], bare: true, cwd: bare }
    ];

    const times = variants.map(() => []);
    const existing = Path.join(tmp, 'startup-existing');
    for (let i = 0; i < internals.settings.starts + 1; ++i) {
        for (const [index, variant] of variants.entries()) {
            const dataDir = variant.fresh ? Path.join(tmp, `startup-fresh-${i}`) : existing;
            const ms = await internals.coldStart(variant.command, variant.args, dataDir, variant.cwd);
            // The first round only creates the existing data directory and warms the file cache.
            if (i > 0) {
                times[index].push(ms);
            }
        }
    }

    const at = Date.now();
    const instance = JSON.parse(ChildProcess.execFileSync(process.execPath, [Path.join(__dirname, 'instance.js'), String(internals.settings.instances)], { encoding: 'utf8' }));
    internals.log(`${internals.settings.instances + 1} in-process instances in ${Date.now() - at} ms`);
    return { cold: variants.map((variant, index) => ({ name: variant.name, when: variant.when, bare: Boolean(variant.bare), times: times[index] })), instance };
};


internals.coldStart = async function (command, args, dataDir, cwd = internals.root) {

    const port = await Ports.freePort();
    const started = process.hrtime.bigint();
    // Its own process group, so that npm and the server it starts are stopped together.
    const child = ChildProcess.spawn(command, args, {
        cwd,
        env: internals.env({ PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info' }),
        stdio: 'ignore',
        detached: true
    });

    try {
        await internals.ready(`http://127.0.0.1:${port}/health`, child, 20_000);
        return Number(process.hrtime.bigint() - started) / 1e6;
    }
    finally {
        await new Promise((resolve) => {

            child.once('exit', resolve);
            process.kill(-child.pid, 'SIGTERM');
        });
    }
};


// Instances in process, each part in a fresh process: the registry's operations (bench/instance-ops.js)
// and the memory of live instances (bench/instance-memory.js).
internals.inProcess = function () {

    const run = (args) => JSON.parse(ChildProcess.execFileSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 }));

    let at = Date.now();
    const ops = run([Path.join(__dirname, 'instance-ops.js'), String(internals.settings.instanceOps), String(internals.instanceWarmup)]);
    internals.log(`${internals.settings.instanceOps + internals.instanceWarmup} rounds of instance operations in ${Date.now() - at} ms`);
    at = Date.now();
    const memory = run(['--expose-gc', Path.join(__dirname, 'instance-memory.js'), String(internals.settings.liveInstances)]);
    internals.log(`${memory.count} live instances in ${Date.now() - at} ms: RSS ${(memory.readBoth.rss / 2 ** 20).toFixed(0)} MiB`);
    return { ops, memory };
};


internals.median = function (values) {

    const sorted = [...values].sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};


internals.summary = function (rounds) {

    const rps = rounds.map((round) => round.rps);
    return {
        rps: internals.median(rps),
        min: Math.min(...rps),
        max: Math.max(...rps),
        p50: internals.median(rounds.map((round) => round.p50)),
        p99: internals.median(rounds.map((round) => round.p99)),
        serverCpu: internals.median(rounds.map((round) => round.serverCpu)),
        // The server's CPU time per answered request (µs), median of the rounds: what a request costs the server,
        // which moves less than req/s when the machine lends the server less than a whole core.
        cpuPerRequest: internals.median(rounds.map((round) => round.serverCpu / round.rps * 1e6)),
        failed: rounds.reduce((sum, round) => sum + round.failed, 0)
    };
};


internals.machine = function () {

    const release = Fs.existsSync('/etc/os-release') ? /PRETTY_NAME="?([^"\n]*)/.exec(Fs.readFileSync('/etc/os-release', 'utf8'))?.[1] : undefined;
    const version = (name) => require(`${name}/package.json`).version;
    return {
        cpu: Os.cpus()[0].model,
        cores: Os.cpus().length,
        memory: `${Math.round(Os.totalmem() / 2 ** 30)} GiB`,
        node: process.version,
        os: `${release ?? Os.type()} (${Os.type()} ${Os.release()}, ${Os.arch()})`,
        packages: ['@hapi/hapi', 'joi', 'better-sqlite3', 'hapi-pino', 'json-server', 'autocannon'].map((name) => `${name} ${version(name)}`).join(', ')
    };
};


internals.number = function (value, digits = 0) {

    return value.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });
};


internals.percentile = function (values, p) {

    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
};


// The Instances section: each figure with its target and PASS or MISS. Returns the lines and the verdicts.
internals.instancesReport = function ({ instances, startup }) {

    const { ops, memory, http, reads } = instances;
    const verdict = (met) => (met ? 'PASS' : '**MISS**');
    const verdicts = [];
    const row = (what, times, target) => {

        const median = internals.median(times);
        const cells = [what, median.toFixed(2), internals.percentile(times, 0.9).toFixed(2)];
        if (target === undefined) {
            return `| ${cells.join(' | ')} | | |`;
        }

        verdicts.push(median <= target);
        return `| ${cells.join(' | ')} | ≤ ${target} ms | ${verdict(median <= target)} |`;
    };

    const oldWay = internals.median(startup.instance.times);
    const create = internals.median(ops.times.create);
    const lines = [
        '', '## Instances', '',
        `In process (bench/instance-ops.js, a fresh process): one server made by createServer({ dataDir: ':memory:' }), then ${ops.rounds} rounds after ${ops.warmup} of warm-up, each timing on its own: a new demo-seeded instance (registry.create), its first and second product page (server.inject), a snapshot, a restore of it and a reset (each after a product write), a delete.`,
        '',
        '| operation | median ms | p90 ms | target | |',
        '|---|---|---|---|---|',
        row('new demo-seeded instance: `instances.create({ seed: \'demo\' })`', ops.times.create, 1),
        row('reset', ops.times.reset, 1),
        row('snapshot', ops.times.snapshot, 1),
        row('restore', ops.times.restore, 1),
        row('delete', ops.times.delete),
        row('first product page in a new instance (server.inject; prepares the instance\'s statements)', ops.times.firstRead),
        row('next product page in that instance (server.inject)', ops.times.nextRead),
        row(`the old way, a whole \`createServer({ dataDir: ':memory:' })\` then \`stop()\` per test (bench/instance.js, Start-up above)`, startup.instance.times),
        '',
        `A new instance is ${internals.number(oldWay / create)}× faster than a whole server per test (medians ${create.toFixed(2)} ms and ${oldWay.toFixed(1)} ms, measured one after the other in two fresh processes of this run); with its first request, ${internals.number(oldWay / (create + internals.median(ops.times.firstRead)), 1)}×.`
    ];

    lines.push('', `Over HTTP on loopback, against \`node bin/localgate.js start\` on a fresh demo-seeded data directory (LOG_LEVEL=info to a file): ${http.create.length} sequential rounds from the orchestrator's process after ${internals.instanceWarmup} of warm-up, each instance deleted at once.`,
        '', '| request | median ms | p90 ms | target | |', '|---|---|---|---|---|',
        row('`POST /_instances` `{"seed":"demo"}` (admin token, kept-alive connection)', http.create, 3),
        row('`POST /_instances` on a new connection each (a client without keep-alive)', http.createNewConnection),
        row('`DELETE /_instances/{id}`', http.delete),
        row('`GET /v1/commerce/products?limit=20` on the same connection (reference)', http.read));

    const mib = (bytes) => bytes / 2 ** 20;
    const peak = Math.max(memory.created.rss, memory.read.rss, memory.readBoth.rss);
    verdicts.push(peak <= 2 ** 30);
    lines.push('', `Memory (bench/instance-memory.js, a fresh process, after a garbage collection at each step): ${internals.number(memory.count)} live demo-seeded instances in one server, made in ${internals.number(memory.createMs)} ms. The target is judged on the larger figure.`,
        '', '| state | RSS MiB | V8 heap MiB | outside the heap MiB | target | |', '|---|---|---|---|---|---|',
        `| the server alone | ${internals.number(mib(memory.baseline.rss))} | ${internals.number(mib(memory.baseline.heapUsed))} | ${internals.number(mib(memory.baseline.external))} | | |`,
        `| ${internals.number(memory.count)} live instances, just made | ${internals.number(mib(memory.created.rss))} | ${internals.number(mib(memory.created.heapUsed))} | ${internals.number(mib(memory.created.external))} | ≤ 1,024 | ${verdict(memory.created.rss <= 2 ** 30)} |`,
        `| the same after one product page in each | ${internals.number(mib(memory.read.rss))} | ${internals.number(mib(memory.read.heapUsed))} | ${internals.number(mib(memory.read.external))} | ≤ 1,024 | ${verdict(memory.read.rss <= 2 ** 30)} |`,
        `| the same after one vehicle page in each too (both databases the API reads in use) | ${internals.number(mib(memory.readBoth.rss))} | ${internals.number(mib(memory.readBoth.heapUsed))} | ${internals.number(mib(memory.readBoth.external))} | ≤ 1,024 | ${verdict(memory.readBoth.rss <= 2 ** 30)} |`,
        '',
        `Per instance: ${[memory.created, memory.read, memory.readBoth].map((state) => internals.number((state.rss - memory.baseline.rss) / 1024 / memory.count)).join(', ')} KiB in those three states.`);

    const summaries = Object.fromEntries(Object.entries(reads).map(([name, rounds]) => [name, internals.summary(rounds)]));
    const share = summaries.instance.rps / summaries.default.rps;
    // Each round's instance against the same round's default instance, measured moments apart.
    const paired = reads.instance.map((round, i) => round.rps / reads.default[i].rps);
    verdicts.push(share >= 0.95);
    const names = {
        default: 'the default instance: `GET /v1/commerce/products?limit=20`',
        instance: 'a demo-seeded instance of the same server: `GET /i/<id>/v1/commerce/products?limit=20`',
        memory: 'the default instance of a server in memory (DATA_DIR=:memory:, reference)'
    };

    lines.push('', `Requests inside an instance: the same read (the demo catalogue's first page of 20, without a token; identical bodies checked first), load as in the table above but ${internals.settings.instanceRounds} rounds (of ${internals.settings.seconds} s per target after a ${internals.settings.warmup} s warm-up, targets taking turns, the first rotating). The default instance and the instance are served by one process, the reference by another. The target is judged on the ratio of median req/s, as everywhere in this file.`,
        '', '| target | req/s (min–max) | p50 ms | p99 ms | server CPU (of one core) | server CPU µs per request | vs the default instance | target | |', '|---|---|---|---|---|---|---|---|---|');
    // CPU per request, median of the rounds: what a request costs the server, less bent by a machine that lends it less
    // than a whole core than requests per second are.
    const cost = (name) => internals.median(reads[name].map((round) => 1e6 * round.serverCpu / round.rps));
    for (const [name, own] of Object.entries(summaries)) {
        const flag = own.failed ? ` (${own.failed} failed)` : '';
        const judged = name === 'instance' ? `≥ 95% | ${verdict(share >= 0.95)}` : ' | ';
        lines.push(`| ${names[name]}${flag} | ${internals.number(own.rps)} (${internals.number(own.min)}–${internals.number(own.max)}) | ${own.p50.toFixed(2)} | ${own.p99.toFixed(2)} | ${Math.round(own.serverCpu * 100)}% | ${internals.number(cost(name))} | ${Math.round(100 * own.rps / summaries.default.rps)}% | ${judged} |`);
    }

    lines.push('', `Round by round, the instance reached ${paired.map((ratio) => `${Math.round(100 * ratio)}%`).join(', ')} of the same round's default instance (median ${Math.round(100 * internals.median(paired))}%). Server CPU per request in the instance: ${Math.round(100 * cost('instance') / cost('default'))}% of the default instance's (lower is cheaper).`);

    return { lines, verdicts };
};


internals.report = function ({ measured, startup, logs, instances, seconds }) {

    const machine = internals.machine();
    const { settings } = internals;
    const lines = [
        '# localgate benchmark results',
        '',
        `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC by \`npm run bench\` (bench/run.js) in ${Math.round(seconds)} s.`,
        '',
        `- Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memory} memory; ${machine.os}; Node ${machine.node}`,
        `- Packages: ${machine.packages}`,
        `- Load: autocannon in a separate process, ${settings.connections} connections, ${settings.rounds} rounds of ${settings.seconds} s per target after a ${settings.warmup} s warm-up, targets taking turns within each round (the first target rotates)`,
        '- localgate: `node bin/localgate.js start` (what `npm start` runs) on a data directory, LOG_LEVEL=info with the log to a file; the floor: bench/floor.js; json-server 0.17 with `--quiet`',
        '- req/s: median of the rounds (lowest–highest); p50 and p99: medians of the rounds\' own percentiles; server CPU: share of one core the server process used; vs floor and vs json-server: ratio of median req/s',
        '- The machine\'s cores are shared with other work (Checks gives the CPU other processes used during the rounds): absolute figures move with it; ratios of targets measured side by side, taking turns, move less',
        '',
        '| scenario | target | req/s (min–max) | p50 ms | p99 ms | server CPU (of one core) | CPU µs per request | vs floor | vs json-server |',
        '|---|---|---|---|---|---|---|---|---|'
    ];

    const summaries = measured.map((cell) => ({ ...cell, summary: Object.fromEntries(Object.keys(cell.rounds).map((target) => [target, internals.summary(cell.rounds[target])])) }));
    for (const cell of summaries) {
        for (const target of Object.keys(cell.summary)) {
            const own = cell.summary[target];
            const flag = own.failed ? ` (${own.failed} failed)` : '';
            lines.push(`| ${target === 'localgate' ? `${cell.group}: ${cell.title}` : ''} | ${target === internals.reference ? 'hapi alone (reference)' : target}${flag} | ${internals.number(own.rps)} (${internals.number(own.min)}–${internals.number(own.max)}) | ${own.p50.toFixed(2)} | ${own.p99.toFixed(2)} | ${Math.round(own.serverCpu * 100)}% | ${Math.round(own.cpuPerRequest)} | ${Math.round(100 * own.rps / cell.summary.floor.rps)}% | ${internals.number(own.rps / cell.summary['json-server'].rps, 1)}× |`);
        }
    }

    const cold = startup.cold.map((variant) => ({ ...variant, median: internals.median(variant.times) }));
    const instance = { median: internals.median(startup.instance.times), min: Math.min(...startup.instance.times), max: Math.max(...startup.instance.times) };
    lines.push('', '## Start-up', '', '| what | median ms | lowest–highest ms |', '|---|---|---|');
    for (const variant of cold) {
        lines.push(`| wall time from spawning \`${variant.name}\` to the first 200 on /health: ${variant.when} (${variant.times.length} starts) | ${variant.median.toFixed(0)} | ${Math.min(...variant.times).toFixed(0)}–${Math.max(...variant.times).toFixed(0)} |`);
    }

    lines.push(`| in process: createServer({ dataDir: ':memory:', logLevel: 'silent' }) then stop (${startup.instance.times.length} instances after the process's first, which took ${startup.instance.first.toFixed(0)} ms) | ${instance.median.toFixed(1)} | ${instance.min.toFixed(1)}–${instance.max.toFixed(1)} |`);

    const instancesSection = internals.instancesReport({ instances, startup });
    lines.push(...instancesSection.lines);

    const at = (scenario, size) => summaries.find((cell) => cell.scenario === scenario && cell.size === size).summary;
    const ratio = (scenario, of, to) => at(scenario, 10_000)[of].rps / at(scenario, 10_000)[to].rps;
    const cpuRatio = (scenario, of, to) => at(scenario, 10_000)[to].cpuPerRequest / at(scenario, 10_000)[of].cpuPerRequest;
    const scale = at('products-read', 100_000).localgate.p50 / at('products-read', 1_000).localgate.p50;
    const check = (met) => (met ? 'met' : '**missed**');
    const percent = (value) => `${Math.round(value * 100)}%`;
    // The targets: reads within 95% of hapi alone and 80% of the floor; writes within 90% and 70%.
    const hot = { 'products-read': [0.95, 0.8], 'bookings-read': [0.95, 0.8], 'bookings-write': [0.9, 0.7], 'products-write': [0.9, 0.7] };
    const [npmFirst, npmExisting, nodeExisting, bareNode, bareNpm] = cold;
    const startGap = nodeExisting.median - bareNode.median;
    const npmShare = npmExisting.median - nodeExisting.median;
    const bareNpmShare = bareNpm.median - bareNode.median;
    const targets = [
        ...Object.entries(hot).map(([scenario, [ofHapi, ofFloor]]) => {

            const hapi = ratio(scenario, 'localgate', internals.reference);
            const floor = ratio(scenario, 'localgate', 'floor');
            return `- ${scenario}: ${percent(hapi)} of hapi alone's req/s (target ${percent(ofHapi)}): ${check(hapi >= ofHapi)}; ${percent(floor)} of the floor's (target ${percent(ofFloor)}): ${check(floor >= ofFloor)}. By CPU time per request: ${percent(cpuRatio(scenario, 'localgate', internals.reference))} of hapi alone's speed, ${percent(cpuRatio(scenario, 'localgate', 'floor'))} of the floor's; hapi alone reaches ${percent(ratio(scenario, internals.reference, 'floor'))} of the floor`;
        }),
        ...['products-read', 'bookings-read'].map((scenario) => {

            const times = ratio(scenario, 'localgate', 'json-server');
            return `- ${scenario}: ${internals.number(times, 1)}× json-server (target 25×): ${check(times >= 25)}`;
        }),
        ...['bookings-write', 'products-write'].map((scenario) => {

            const times = ratio(scenario, 'localgate', 'json-server');
            return `- ${scenario}: ${internals.number(times, 1)}× json-server (target 100×): ${check(times >= 100)}`;
        }),
        `- product list p50 at 100,000 products: ${scale.toFixed(2)}× the p50 at 1,000 (target 1.3×; p50 at 1,000, 10,000, 100,000: ${[1_000, 10_000, 100_000].map((size) => at('products-read', size).localgate.p50.toFixed(2)).join(', ')} ms; p99: ${[1_000, 10_000, 100_000].map((size) => at('products-read', size).localgate.p99.toFixed(2)).join(', ')} ms): ${check(scale <= 1.3)}`,
        `- cold start, \`node bin/localgate.js start\` on an existing data directory to the first 200: median ${nodeExisting.median.toFixed(0)} ms, ${startGap.toFixed(0)} ms more than a bare node:http server's ${bareNode.median.toFixed(0)} ms in the same rounds (target within 250 ms): ${check(startGap <= 250)}`,
        `- \`npm start\` adds ${npmShare.toFixed(0)} ms to that start; npm adds ${bareNpmShare.toFixed(0)} ms to the bare server's (target: no more than npm's own share, give or take 30 ms of noise between medians): ${check(npmShare <= bareNpmShare + 30)}`,
        `- in-process instance: median ${instance.median.toFixed(1)} ms (target under 10 ms): ${check(instance.median < 10)}`,
        `- cold \`npm start\` to the first 200: median ${npmFirst.median.toFixed(0)} ms on a first start, ${npmExisting.median.toFixed(0)} ms on an existing data directory (target under 600 ms): ${check(npmFirst.median < 600 && npmExisting.median < 600)}`,
        `- instances: ${instancesSection.verdicts.filter(Boolean).length} of ${instancesSection.verdicts.length} targets met (PASS or MISS in the Instances section)`
    ];

    const others = [...measured, { rounds: instances.reads }].flatMap((cell) => Object.values(cell.rounds).flat().map((round) => round.otherCpu));
    lines.push('', '## Targets', '', ...targets, '', '## Checks', '');
    lines.push(`- Other processes on the machine used a median ${Math.round(internals.median(others) * 100)}% of a core during the measured rounds (most: ${Math.round(Math.max(...others) * 100)}%); the rounds are in bench/results/raw-*.json with their own figures.`);
    lines.push('- Before measuring, every target answered the same product page and the same bookings page with identical records and totals; the default instance, the instance and the server in memory answered the same demo product page.');
    for (const log of logs) {
        lines.push(`- localgate (${internals.number(log.size)} products) wrote ${internals.number(log.lines)} log lines for the ${internals.number(log.requests)} requests of the load generator (one per request, plus start-up and readiness probes).`);
    }

    return lines.join('\n') + '\n';
};


internals.log = function (line) {

    process.stderr.write(`bench: ${line}\n`);
};


internals.main().catch((err) => {

    process.stderr.write(`bench: ${err.stack}\n`);
    process.exitCode = 1;
});
