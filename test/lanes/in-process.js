'use strict';

const ChildProcess = require('node:child_process');
const NodeCrypto = require('node:crypto');
const Fs = require('node:fs');
const Os = require('node:os');
const Path = require('node:path');

const Coverage = require('@hapi/lab/lib/modules/coverage');
const LabTypescript = require('@hapi/lab/lib/modules/typescript');
const Console = require('@hapi/lab/lib/reporters/console');

// The lab settings decide the PostgreSQL lane as they load, into the environment every shard inherits.
const Labrc = require('../../.labrc.js');


// The in-process lane: every test file of test/ (not its folders) in lab, with lint, and coverage over all of lib/ held
// at 100%. One lab process would keep one core busy and leave the other waiting on what the tests wait on (PostgreSQL,
// timers), so the files are dealt to shards that run side by side, each a lab process of its own; each shard writes the
// counts its instrumented code gathered (test/lanes/shard-reporter.js), and this adds them up and judges the coverage
// of the whole with lab's own analysis and report, as a single run would.
//
// Usage: node test/lanes/in-process.js [FILE…], from anywhere (named files are relative to the project);
// LOCALGATE_TEST_SHARDS sets the number of shards, a whole number from 1 (2 when unset, one per core).


const internals = {
    root: Path.join(__dirname, '..', '..'),
    lab: require.resolve('@hapi/lab/bin/lab'),
    // The files lab takes from a folder with --typescript.
    pattern: /^[^.].*\.(js|mjs|cjs|ts|tsx)$(?<!\.d\.ts)/
};


// What a file's tests take, in seconds of a 2-core machine, for dealing the files to shards of about equal length. A
// file not named counts by its size; only the balance depends on these, never what runs.
internals.seconds = {
    'pay.ts': 45, 'logistics.ts': 33, 'metadata.ts': 25, 'postgres-pay.ts': 24, 'export-engines.ts': 23,
    'postgres-events.ts': 19, 'event-catalogue.ts': 11, 'error-bodies.ts': 11, 'postgres-stores.ts': 12,
    'clock-moves.ts': 10, 'events.ts': 9, 'journal.ts': 8, 'namespaces.ts': 8, 'console.ts': 8, 'cli.ts': 8,
    'parity.ts': 8, 'namespace-placement.ts': 7, 'postgres-engine.ts': 8
};

internals.weight = (file) => internals.seconds[Path.basename(file)] ?? Fs.statSync(file).size / 8000;


/** The test files of the lane: those named, else every test file of test/ itself (not of its folders). */
internals.testFiles = function (named) {

    if (named.length) {
        return named;
    }

    const dir = Path.join(internals.root, 'test');
    return Fs.readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isFile() && internals.pattern.test(entry.name)).map((entry) => Path.join('test', entry.name)).sort();
};


/** The number of shards LOCALGATE_TEST_SHARDS asks for. */
internals.shards = function () {

    const text = process.env.LOCALGATE_TEST_SHARDS ?? '2';
    if (!/^[1-9]\d*$/.test(text)) {
        throw new Error(`LOCALGATE_TEST_SHARDS must be a whole number from 1, not "${text}"`);
    }

    return Number(text);
};


/** What every file of lib/ holds, to make sure that the code the lane judges is the code the shards ran. */
internals.fingerprint = function () {

    const hash = NodeCrypto.createHash('sha256');
    for (const file of Fs.readdirSync(Path.join(internals.root, 'lib'), { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => Path.join(entry.parentPath ?? entry.path, entry.name)).sort()) {
        hash.update(`${file}\0`).update(Fs.readFileSync(file)).update('\0');
    }

    return hash.digest('hex');
};


/** Deals the files to shards, the longest first to the shortest shard so far. */
internals.deal = function (files, count) {

    const shards = Array.from({ length: Math.min(count, files.length) }, () => ({ files: [], seconds: 0 }));
    for (const file of [...files].sort((a, b) => internals.weight(b) - internals.weight(a) || a.localeCompare(b))) {
        const shortest = shards.reduce((min, shard) => (shard.seconds < min.seconds ? shard : min));
        shortest.files.push(file);
        shortest.seconds += internals.weight(file);
    }

    return shards.map((shard) => shard.files.sort());
};


/** Runs one shard; resolves with its exit code and everything it printed, printed as one block when it ends. */
internals.runShard = function (files, index, dump, lint) {

    const args = [internals.lab, '--typescript', '--flat', '--coverage-all', '--coverage-path', 'lib', '-m', '10000', '-r', './test/lanes/shard-reporter.js', ...(lint ? ['-L'] : []), ...files];
    return new Promise((resolve) => {

        const child = ChildProcess.spawn(process.execPath, args, { cwd: internals.root, env: { ...process.env, LOCALGATE_COVERAGE_SHARD: dump }, stdio: ['ignore', 'pipe', 'pipe'] });
        const output = [];
        child.stdout.on('data', (chunk) => output.push(chunk));
        child.stderr.on('data', (chunk) => output.push(chunk));
        child.on('error', (err) => {

            process.stdout.write(`\nShard ${index + 1} of the in-process lane did not start: ${err.message}\n`);
            resolve({ code: 1, output: '' });
        });
        child.on('close', (code, signal) => {

            const text = Buffer.concat(output).toString();
            process.stdout.write(`\n── shard ${index + 1} of the in-process lane (${files.length} files${lint ? ', lint' : ''}) ──\n${text}`);
            resolve({ code: code ?? 1, signal, output: text });
        });
    });
};


/** The coverage of the whole lane: lab's analysis of lib/, with the counts of every shard added up. */
internals.coverage = async function (dumps) {

    const exts = LabTypescript.extensions.map((transform) => transform.ext.slice(1)).join('|');
    const settings = {
        coverage: true,
        'coverage-all': true,
        coveragePath: Path.join(internals.root, 'lib'),
        coverageExclude: ['node_modules', 'test', 'test_runner', ...Labrc['coverage-exclude']],
        coveragePattern: new RegExp(`\\.(js|mjs|cjs|${exts})$`),
        transform: LabTypescript.extensions,
        sourcemaps: true,
        threshold: 100,
        progress: 1
    };

    await Coverage.instrument(settings);

    // A first analysis instruments every file of lib/ with no hits, as lab's coverage-all does for a file no test loads.
    await Coverage.analyze(settings);
    const files = global.__$$labCov.files;

    for (const dump of dumps) {
        for (const [filename, counts] of Object.entries(JSON.parse(Fs.readFileSync(dump, 'utf8')))) {
            const target = files[filename];
            if (!target) {
                throw new Error(`a shard counted ${filename}, which the lane's analysis does not instrument`);
            }

            for (const [line, hits] of Object.entries(counts.lines)) {
                target.lines[line] = (target.lines[line] ?? 0) + hits;
            }

            const statements = new Map();
            for (const ids of Object.values(target.statements)) {
                for (const [id, statement] of Object.entries(ids)) {
                    statements.set(id, statement);
                }
            }

            for (const [id, hit] of Object.entries(counts.statements)) {
                const statement = statements.get(id);
                if (!statement) {
                    throw new Error(`a shard counted statement ${id} of ${filename}, which the lane's analysis does not instrument`);
                }

                // In place: the copies lab's analysis makes of a statement share its hit record.
                statement.hit.true ||= hit.true;
                statement.hit.false ||= hit.false;
            }
        }
    }

    return { settings, result: await Coverage.analyze(settings) };
};


/** Prints the coverage as lab's console report does, below the shards' reports. */
internals.report = function (settings, result) {

    const reporter = new Console(settings);
    let text = '';
    reporter.report = (chunk) => {

        text += chunk;
    };

    reporter.end({ tests: [], failures: 0, errors: [], ms: 0, coverage: result });
    process.stdout.write(`\n── the in-process lane, all shards ──\n${text.slice(text.indexOf('Coverage: '))}\n`);
};


internals.main = async function () {

    process.chdir(internals.root);
    const started = Date.now();
    const fingerprint = internals.fingerprint();
    const files = internals.testFiles(process.argv.slice(2));
    const shards = internals.deal(files, internals.shards());
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'localgate-coverage-'));
    try {
        const dumps = shards.map((_, index) => Path.join(dir, `shard-${index + 1}.json`));

        // Lint runs in the shard dealt the least, beside its tests.
        const lengths = shards.map((shard) => shard.reduce((sum, file) => sum + internals.weight(file), 0));
        const lightest = lengths.indexOf(Math.min(...lengths));
        const results = await Promise.all(shards.map((shard, index) => internals.runShard(shard, index, dumps[index], index === lightest)));

        const failed = results.filter((result) => result.code !== 0).length;
        if (failed) {
            process.stdout.write(`\n${failed} of ${shards.length} shards of the in-process lane failed; the coverage is not judged.\n`);
            return 1;
        }

        const missing = dumps.findIndex((dump) => !Fs.existsSync(dump));
        if (missing !== -1) {
            process.stdout.write(`\nShard ${missing + 1} of the in-process lane ended without writing its coverage; the coverage is not judged.\n`);
            return 1;
        }

        if (internals.fingerprint() !== fingerprint) {
            process.stdout.write('\nlib/ changed while the shards ran; the coverage is not judged. Run the lane again.\n');
            return 1;
        }

        const merging = Date.now();
        const { settings, result } = await internals.coverage(dumps);
        internals.report(settings, result);
        process.stdout.write(`Shards: ${shards.length}, side by side ${Math.round((merging - started) / 1000)} s; coverage added up and judged in ${Math.round((Date.now() - merging) / 1000)} s\n`);
        return result.percent < settings.threshold ? 1 : 0;
    }
    finally {
        Fs.rmSync(dir, { recursive: true, force: true });
    }
};


internals.main().then((code) => {

    process.exitCode = code;
}, (err) => {

    console.error(err);
    process.exitCode = 1;
});
