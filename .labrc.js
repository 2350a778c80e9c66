'use strict';

// Globals that playwright-core leaves behind on purpose; it drives the docs page in test/openapi-browser.ts.
module.exports = {
    globals: [
        '__zod_globalConfig',
        '__zod_globalRegistry',
        'Symbol(signal-exit emitter)'
    ].join(',')
};
