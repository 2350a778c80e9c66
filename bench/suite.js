'use strict';

// THE SUITE BENCHMARK: what one integration test costs with a fresh, isolated world per test, on localgate
// and on what suites use instead. Every target runs the same test (bench/suite/job.js): a fresh world holding the demo
// data, a product page, a vehicle page, the caller's bookings, a product and a booking written, the bookings read
// again and the new one looked for, the world thrown away. Warm-up first, then BENCH_SUITE_TESTS tests (300) per
// target or BENCH_SUITE_BUDGET seconds of them, the targets taking turns BENCH_SUITE_BATCH tests (10) at a time (the
// first target rotates), so that the machine's load favours none.
//
// Run by bench/run.js (BENCH_ONLY=suite npm run bench for this part alone). Bench-only packages (PGlite, Mockoon CLI,
// WireMock) are installed by this file into bench/.cache, never into package.json.

const ChildProcess = require('node:child_process');
const { randomBytes } = require('node:crypto');
const Fs = require('node:fs');
const Http = require('node:http');
const Os = require('node:os');
const Path = require('node:path');

const Ports = require('./ports');
const Localgate = require('./suite/localgate');
const Mocks = require('./suite/mocks');
const Postgres = require('./suite/postgres');
const ResultsFile = require('./results-file');


const internals = {
    root: Path.resolve(__dirname, '..'),
    cache: Path.join(__dirname, '.cache'),
    results: Path.join(__dirname, 'results'),
    // Exact versions, so that a run reproduces the last one.
    packages: ['@electric-sql/pglite@0.3.16', '@mockoon/cli@9.9.0', 'wiremock@3.13.2'],
    settings: {
        tests: Number(process.env.BENCH_SUITE_TESTS ?? 300),
        warmup: Number(process.env.BENCH_SUITE_WARMUP ?? 20),
        // Seconds of measured tests per target: a target that slow (PGlite, a cluster on disk) stops there, and the
        // table gives how many tests it ran. Its warm-up stops at a fifth of it.
        budget: Number(process.env.BENCH_SUITE_BUDGET ?? 20),
        // Tests a target runs in a row at its turn. A suite runs its tests back to back; one test per turn would
        // have every short test start with the caches and branch predictors the eight other targets left behind.
        batch: Number(process.env.BENCH_SUITE_BATCH ?? 10),
        // Comma-separated keys (kit, http-node, http-python, pg-memory, pg-default, pglite, json-server, wiremock,
        // mockoon) to run only those; all by default.
        only: process.env.BENCH_SUITE_TARGETS ? process.env.BENCH_SUITE_TARGETS.split(',') : null,
        pgUrl: process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/test'
    },
    secret: randomBytes(32).toString('hex'),
    // The database-per-test targets: localgate's ratios are taken against the fastest of them.
    databases: ['pg-memory', 'pg-default', 'pglite']
};


/** Runs the suite benchmark; resolves to its results.md section (markdown) and writes the raw figures to bench/results/. */
exports.run = async function ({ log }) {

    const started = Date.now();
    const tmp = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'localgate-suite-'));
    Fs.mkdirSync(internals.results, { recursive: true });
    const cleanups = [];
    const targets = [];
    const unavailable = [];
    const loadBefore = Os.loadavg();

    const attempt = async (key, make) => {

        if (internals.settings.only && !internals.settings.only.includes(key)) {
            return;
        }

        try {
            const target = await make();
            const at = Date.now();
            await target.setup();
            log(`suite: ${target.name} ready in ${Date.now() - at} ms`);
            targets.push({ key, ...target, first: null, warm: 0, times: [], spent: 0, found: new Set() });
        }
        catch (err) {
            log(`suite: ${key} cannot run here: ${err.message.split('\n')[0]}`);
            unavailable.push({ key, error: err.message.split('\n').slice(0, 3).join(' ').slice(0, 400) });
        }
    };

    try {
        const installed = internals.install(log);
        const server = await internals.localgate(tmp, cleanups);
        const versions = { node: process.version, python: Localgate.pythonVersion(), localgate: require('../package.json').version };

        // Each Node target in a process of its own, as a suite runs: not beside PGlite and the other clients.
        await attempt('kit', () => Localgate.inProcessOfItsOwn('localgate kit, in process (inject)', 'kit'));
        await attempt('http-node', () => Localgate.inProcessOfItsOwn('localgate over HTTP from Node (keep-alive)', 'http', server));
        await attempt('http-python', () => Localgate.python(server));

        // PostgreSQL: the machine's cluster and one in memory, each with a template made by localgate's own start.
        const clusters = [];
        await attempt('pg-memory', async () => {

            if (installed.error) {
                throw new Error(installed.error);
            }

            const cluster = await Postgres.memoryCluster(await Ports.freePort());
            cleanups.push(() => cluster.stop());
            return internals.pgTarget('pg-memory', 'PostgreSQL in memory (/dev/shm, fsync off): a database per test from a template', cluster.url, tmp, cleanups, clusters);
        });
        await attempt('pg-default', () => internals.pgTarget('pg-default', 'PostgreSQL, the machine\'s cluster: a database per test from a template', internals.settings.pgUrl, tmp, cleanups, clusters));
        await attempt('pglite', async () => {

            if (installed.error) {
                throw new Error(installed.error);
            }

            const template = clusters[0]?.template;
            if (!template) {
                throw new Error('no PostgreSQL template to dump the data directory from');
            }

            const lib = await Postgres.pglite(internals.cache);
            versions.pglite = lib.version;
            return Postgres.pgliteTarget(lib, template);
        });

        const ready = (url, child, limit = 30_000) => internals.ready(url, child, limit);
        await attempt('json-server', async () => ({ ...Mocks.jsonServer({ port: await Ports.freePort(), dir: Path.join(tmp, 'json-server'), ready }), version: () => require('json-server/package.json').version }));
        for (const [key, make] of [['wiremock', Mocks.wiremock], ['mockoon', Mocks.mockoon]]) {
            await attempt(key, async () => {

                if (installed.error) {
                    throw new Error(installed.error);
                }

                const target = make({ port: await Ports.freePort(), dir: Path.join(tmp, key), cache: internals.cache, ready });
                cleanups.push(() => target.teardown());
                return target;
            });
        }

        for (const target of targets) {
            versions[target.key] ??= target.version?.();
        }

        for (const { key, settings } of clusters) {
            versions[key] = `PostgreSQL ${settings.server_version} (fsync ${settings.fsync}, synchronous_commit ${settings.synchronous_commit}, full_page_writes ${settings.full_page_writes}, shared_buffers ${settings.shared_buffers}, data in ${settings.data_directory})`;
        }

        // The cold test: each target's first after its setup, taken in turn, then the warm-up, then the measured tests.
        // A target whose test fails leaves the rounds with its error reported; the others go on.
        const failing = async (target, work) => {

            try {
                return await work();
            }
            catch (err) {
                log(`suite: ${err.message}`);
                targets.splice(targets.indexOf(target), 1);
                unavailable.push({ key: target.key, error: `failed after ${target.times.length} measured tests: ${err.message}`.slice(0, 400) });
                await Promise.resolve(target.teardown()).catch(() => undefined);
            }
        };

        for (const target of [...targets]) {
            await failing(target, async () => {

                target.first = await internals.one(target);
            });
        }

        const { warmup, tests, budget, batch } = internals.settings;
        for (let i = 0; i < warmup; ++i) {
            for (const target of targets.filter((item) => item.warm < budget * 200)) {
                await failing(target, async () => {

                    target.warm += (await internals.one(target)).ms;
                });
            }
        }

        log(`suite: ${targets.length} targets warmed up; ${tests} tests each or ${budget} s of tests, taking turns`);
        const measuring = Date.now();
        const sampled = { min: Os.loadavg()[0], max: Os.loadavg()[0] };
        const sampler = setInterval(() => {

            sampled.min = Math.min(sampled.min, Os.loadavg()[0]);
            sampled.max = Math.max(sampled.max, Os.loadavg()[0]);
        }, 5000);
        for (let i = 0; ; ++i) {
            const active = targets.filter((target) => target.times.length < tests && target.spent < budget * 1000);
            if (!active.length) {
                break;
            }

            for (const target of active.map((item, j) => active[(i + j) % active.length])) {
                await failing(target, async () => {

                    for (let j = 0; j < batch && target.times.length < tests && target.spent < budget * 1000; ++j) {
                        const { ms, found } = await internals.one(target);
                        target.times.push(ms);
                        target.spent += ms;
                        target.found.add(found);
                    }
                });
            }
        }

        clearInterval(sampler);
        const measured = { seconds: (Date.now() - measuring) / 1000, load: [loadBefore, Os.loadavg()], sampled };

        const results = targets.map(({ key, name, first, times, found }) => ({ key, name, first: first.ms, found: [...found], ...internals.stats(times) }));
        Fs.writeFileSync(Path.join(internals.results, `suite-${new Date().toISOString().replace(/[:.]/g, '-')}.json`), JSON.stringify({ settings: internals.settings, versions, measured, results, unavailable }, null, 2));
        return internals.report({ results, unavailable, versions, measured, seconds: (Date.now() - started) / 1000 });
    }
    finally {
        for (const target of targets) {
            await target.teardown();
        }

        for (const cleanup of cleanups.reverse()) {
            await cleanup();
        }

        Fs.rmSync(tmp, { recursive: true, force: true });
    }
};


// Installs the bench-only packages into bench/.cache (ignored by git) unless they are there. Returns { error } when
// the registry cannot be reached, so that the targets needing them are reported, not dropped.
internals.install = function (log) {

    const have = internals.packages.every((spec) => {

        const [, name, version] = /^(@?[^@]+)@(.+)$/.exec(spec);
        const file = Path.join(internals.cache, 'node_modules', name, 'package.json');
        return Fs.existsSync(file) && require(file).version === version;
    });

    if (have) {
        return {};
    }

    Fs.mkdirSync(internals.cache, { recursive: true });
    log(`suite: installing ${internals.packages.join(', ')} into bench/.cache`);
    const result = ChildProcess.spawnSync('npm', ['install', '--prefix', internals.cache, '--no-save', '--no-audit', '--no-fund', '--no-package-lock', ...internals.packages], { encoding: 'utf8' });
    return result.status === 0 ? {} : { error: `npm install into bench/.cache failed: ${(result.stderr || result.error?.message || '').trim().split('\n').slice(-3).join(' ')}` };
};


// One `localgate start` as a suite runs it: a data directory of its own, LOG_LEVEL=info with the log to a file.
internals.localgate = async function (tmp, cleanups) {

    const port = await Ports.freePort();
    const url = `http://127.0.0.1:${port}`;
    const child = internals.spawnLocalgate({ PORT: String(port), DATA_DIR: Path.join(tmp, 'localgate'), LOG_LEVEL: 'info' }, Path.join(internals.results, 'suite-localgate.log'));
    cleanups.push(() => internals.stop(child));
    await internals.ready(`${url}/health`, child, 30_000);
    const { mintToken } = require('../dist');

    return {
        url,
        secret: internals.secret,
        admin: mintToken(internals.secret, 'suite-admin', 24 * 3600, { admin: true }),
        caller: mintToken(internals.secret, require('./suite/job').caller, 24 * 3600)
    };
};


internals.spawnLocalgate = function (values, logFile) {

    const env = { ...process.env };
    for (const name of ['VALIDATE_RESPONSES', 'SEED', 'DATABASE_URL', 'COMMERCE_DB_URL', 'LOGISTICS_DB_URL', 'WEATHER_DB_URL', 'PAY_DB_URL', 'DB_POOL_MAX', 'MAX_INSTANCES']) {
        delete env[name];
    }

    const out = Fs.openSync(logFile, 'w');
    const child = ChildProcess.spawn(process.execPath, ['bin/localgate.js', 'start'], { cwd: internals.root, env: { ...env, HOST: '127.0.0.1', AUTH_JWT_SECRET: internals.secret, ...values }, stdio: ['ignore', out, out] });
    Fs.closeSync(out);
    return child;
};


// A database-per-test target on a server: its template made by localgate's start (DATABASE_URL, SEED=demo).
internals.pgTarget = async function (key, label, serverUrl, tmp, cleanups, clusters) {

    const settings = await Postgres.describe(serverUrl);
    const template = await Postgres.template(serverUrl, async (url) => {

        const port = await Ports.freePort();
        const child = internals.spawnLocalgate({ PORT: String(port), DATA_DIR: Path.join(tmp, `${key}-pay`), DATABASE_URL: url, SEED: 'demo', LOG_LEVEL: 'warn' }, Path.join(internals.results, `suite-${key}-template.log`));
        try {
            await internals.ready(`http://127.0.0.1:${port}/health`, child, 60_000);
        }
        finally {
            await internals.stop(child);
        }
    });

    cleanups.push(() => template.drop());
    clusters.push({ key, settings, template });
    return Postgres.perTest(label, template, serverUrl);
};


// One test of a target, timed from here (Python times its own, so that its pipe is not counted).
internals.one = async function (target) {

    const started = process.hrtime.bigint();
    const result = await target.test().catch((err) => {

        throw new Error(`${target.name}: ${err.message}`);
    });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    return typeof result === 'object' && result !== null ? { ms: result.ms, found: result.found } : { ms, found: result };
};


internals.stats = function (times) {

    const sorted = [...times].sort((a, b) => a - b);
    const at = (p) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
    return { median: internals.median(sorted), p95: at(0.95), total: times.reduce((sum, ms) => sum + ms, 0) / 1000, count: times.length };
};


internals.median = function (sorted) {

    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};


internals.report = function ({ results, unavailable, versions, measured, seconds }) {

    const byKey = Object.fromEntries(results.map((result) => [result.key, result]));
    const databases = internals.databases.map((key) => byKey[key]).filter(Boolean).sort((a, b) => a.median - b.median);
    const fastest = databases[0];
    const found = (result) => {

        if (result.found.length === 1 && result.found[0] === true) {
            return 'yes, every test';
        }

        return result.found.includes(null) ? 'not possible (stateless: the stub answers what it was given)' : `no (${result.found.join(', ')})`;
    };

    const ms = (value) => (value < 10 ? value.toFixed(2) : value.toFixed(1));
    const lines = [
        '## Suite: a test with a fresh world, on localgate and on what suites use instead',
        '',
        `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC by \`BENCH_ONLY=suite npm run bench\` (bench/suite.js) in ${Math.round(seconds)} s, of which the measured tests took ${Math.round(measured.seconds)} s. Load average (1 min) ${measured.load[0][0].toFixed(2)} before, ${measured.load[1][0].toFixed(2)} after, ${measured.sampled.min.toFixed(2)}–${measured.sampled.max.toFixed(2)} sampled every 5 s while the tests ran, on ${Os.cpus()[0].model.trim()}, ${Os.cpus().length} cores, ${Math.round(Os.totalmem() / 2 ** 30)} GiB memory, ${Os.type()} ${Os.release()} (the machine is shared with other work: absolute times move with it; the targets took turns, so their ratios move less).`,
        '',
        'One test: a fresh world holding the demo data set; a product page, a vehicle page, the caller\'s bookings; a product and a booking written; the bookings read again and the new one looked for; the world thrown away. ' +
        `Up to ${internals.settings.warmup} tests of warm-up per target (at most ${internals.settings.budget / 5} s of them), then ${internals.settings.tests} measured tests or ${internals.settings.budget} s of them, whichever comes first, taking turns ${internals.settings.batch} tests at a time (the first target rotates; a suite runs its tests back to back): a target that slow stops at its time budget, and "tests" says how many it ran. "first" is each target's first test after its setup (cold); "${internals.settings.tests} tests, s" is the suite's total, taken from the tests' mean where fewer ran.`,
        '',
        `| target | tests | median ms | p95 ms | ${internals.settings.tests} tests, s | first (cold) ms | new booking read back | per test vs ${fastest ? fastest.key : 'the fastest database per test'} |`,
        '|---|---|---|---|---|---|---|---|'
    ];

    for (const result of results) {
        const ratio = fastest ? `${(fastest.median / result.median).toFixed(1)}×` : '';
        const suite = result.count < internals.settings.tests ? `${(result.total / result.count * internals.settings.tests).toFixed(1)} (from the mean)` : result.total.toFixed(1);
        lines.push(`| ${result.name} | ${result.count} | ${ms(result.median)} | ${ms(result.p95)} | ${suite} | ${ms(result.first)} | ${found(result)} | ${ratio} |`);
    }

    for (const { key, error } of unavailable) {
        lines.push(`| ${key}: cannot run here | | | | | | | ${error.replace(/\|/g, '/')} |`);
    }

    lines.push('');
    if (fastest) {
        const verdict = (key, target) => (byKey[key] ? `${(fastest.median / byKey[key].median).toFixed(1)}× (target ${target}×: ${fastest.median / byKey[key].median >= target ? 'PASS' : 'MISS'})` : 'not measured');
        lines.push(`Targets, against the fastest database per test (${fastest.name}, median ${ms(fastest.median)} ms): in process ${verdict('kit', 15)}; over HTTP from Node with keep-alive ${verdict('http-node', 6)}; over HTTP from Python ${byKey['http-python'] ? `${(fastest.median / byKey['http-python'].median).toFixed(1)}×` : 'not measured'} (no target).`, '');
    }

    lines.push('Versions: ' + Object.entries(versions).filter(([, version]) => version).map(([key, version]) => `${key} ${version}`).join('; ') + '.', '');
    return lines.join('\n');
};


internals.stop = function (child) {

    if (child.exitCode !== null || child.signalCode !== null) {
        return;
    }

    return new Promise((resolve) => {

        child.once('exit', resolve);
        child.kill('SIGTERM');
    });
};


// Polls until the URL answers 200, or the child exits, or the limit passes.
internals.ready = async function (url, child, limit) {

    const started = Date.now();
    while (Date.now() - started < limit) {
        if (child.exitCode !== null) {
            throw new Error(`${url}: the server exited (code ${child.exitCode}) before answering${child.output ? `: ${child.output.text.slice(-1500)}` : ''}`);
        }

        const status = await new Promise((resolve) => {

            const req = Http.get(url, { agent: false }, (res) => {

                res.resume();
                resolve(res.statusCode);
            });
            req.once('error', () => resolve(0));
        });

        if (status === 200) {
            return;
        }

        await new Promise((resolve) => setTimeout(resolve, 20));
    }

    throw new Error(`${url} did not answer 200 within ${limit} ms${child.output ? `: ${child.output.text.slice(-1500)}` : ''}`);
};


/** The suite's section of results.md as it stands, or undefined. */
exports.section = function () {

    const file = Path.join(__dirname, 'results.md');
    const existing = Fs.existsSync(file) ? Fs.readFileSync(file, 'utf8') : '';
    const start = existing.indexOf('\n## Suite:');
    if (start === -1) {
        return;
    }

    const end = existing.indexOf('\n## ', start + 1);
    return existing.slice(start + 1, end === -1 ? undefined : end + 1).replace(/\n*$/, '\n');
};


/** Puts the suite's section into results.md: in place of the last one, else before the PostgreSQL section. */
exports.writeSection = (section) => ResultsFile.replaceSection('## Suite:', section);
