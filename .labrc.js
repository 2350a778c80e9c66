'use strict';

const PostgresLane = require('./test/helpers/postgres-lane');


// Without a PostgreSQL server its lane is skipped, so the code only that lane runs leaves the coverage path
// (relative to lib/): the engine's folder, and the files that compose it with SQLite or load it lazily.
const postgresOnly = ['storage/postgres', 'storage/composed.ts', 'storage/index.ts'];

if (PostgresLane.skipped) {
    console.error(PostgresLane.skipLine);
}

module.exports = {
    // Globals that playwright-core leaves behind on purpose; it drives the docs page in test/openapi-browser.ts.
    globals: [
        '__zod_globalConfig',
        '__zod_globalRegistry',
        'Symbol(signal-exit emitter)'
    ].join(','),
    'coverage-exclude': PostgresLane.skipped ? postgresOnly : []
};
