'use strict';

const ChildProcess = require('node:child_process');


// The PostgreSQL lane is decided here, once and synchronously, before lab loads a test file: the test files read the
// decision from LOCALGATE_TEST_PG_LANE, and the coverage path follows it. A shard of the in-process lane (a lab process
// test/lanes/in-process.js started, which alone sets LOCALGATE_COVERAGE_SHARD) inherits the lane's decision; any other
// run decides again, whatever the environment holds.

const pgUrl = process.env.LOCALGATE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const decided = process.env.LOCALGATE_COVERAGE_SHARD !== undefined && ['skipped', 'runs'].includes(process.env.LOCALGATE_TEST_PG_LANE ?? '') &&
    !(process.env.CI === 'true' && process.env.LOCALGATE_TEST_PG_LANE === 'skipped');

const reachable = decided || ChildProcess.spawnSync(process.execPath, ['-e', `
    const client = new (require('pg').Client)({ connectionString: process.argv[1], connectionTimeoutMillis: 3000 });
    client.connect().then(() => client.end()).then(() => process.exit(0), () => process.exit(1));
`, pgUrl], { cwd: __dirname, timeout: 10_000 }).status === 0;

// Under CI a missing server fails the PostgreSQL tests instead of skipping them.
const skipped = decided ? process.env.LOCALGATE_TEST_PG_LANE === 'skipped' : !reachable && process.env.CI !== 'true';
process.env.LOCALGATE_TEST_PG_LANE = skipped ? 'skipped' : 'runs';

if (skipped && !decided) {
    console.error(`PostgreSQL lane skipped: nothing answers at ${pgUrl}; coverage is held at 100% of the code that ran. To run it, start PostgreSQL or set LOCALGATE_TEST_PG_URL, then npm test (CI=true requires it).`);
}

// What only the lane runs, relative to lib/: the engine's folder, and the files that compose it with SQLite or load it lazily.
const postgresOnly = ['storage/postgres', 'namespaces/commerce/postgres.ts', 'namespaces/logistics/postgres.ts', 'namespaces/pay/postgres.ts', 'storage/default.ts', 'storage/index.ts', 'storage/engines.ts'];


module.exports = {
    // Globals that playwright-core leaves behind on purpose; it drives the docs page in test/openapi-browser.ts. And
    // tslib's helper that an old copy of it under @asyncapi/parser (in @stoplight/json-ref-readers) sets on the global
    // object as it loads, in test/event-catalogue.ts.
    globals: [
        '__zod_globalConfig',
        '__zod_globalRegistry',
        'Symbol(signal-exit emitter)',
        '__spreadArray'
    ].join(','),
    'coverage-exclude': skipped ? postgresOnly : []
};
