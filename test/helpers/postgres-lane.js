'use strict';

const ChildProcess = require('node:child_process');


// Plain JavaScript because .labrc.js reads it too, before lab can load TypeScript. Node caches the module, so the
// server is asked once per run and every test file reads the same answer.

const pgUrl = process.env.LOCALGATE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ci = process.env.CI === 'true';

// Asked synchronously, so that the lab settings and every test file can decide at load time.
const reachable = ChildProcess.spawnSync(process.execPath, ['-e', `
    const client = new (require('pg').Client)({ connectionString: process.argv[1], connectionTimeoutMillis: 3000 });
    client.connect().then(() => client.end()).then(() => process.exit(0), () => process.exit(1));
`, pgUrl], { cwd: __dirname, timeout: 10_000 }).status === 0;


module.exports = {
    pgUrl,
    // Under CI a missing server fails the PostgreSQL tests instead of skipping them.
    skipped: !reachable && !ci,
    skipLine: `PostgreSQL lane skipped: nothing answers at ${pgUrl}; coverage is held at 100% of the code that ran. To run it, start PostgreSQL or set LOCALGATE_TEST_PG_URL, then npm test (CI=true requires it).`
};
