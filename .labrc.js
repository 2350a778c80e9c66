'use strict';

// Globals that dependencies leave behind on purpose:
// - hapi-swagger requires swagger-ui-dist for its folder, and that package's index also evaluates the
//   docs page's browser bundle (CSS, core-js, react-redux);
// - playwright-core, which drives the docs page in test/openapi-browser.ts (zod, signal-exit).
module.exports = {
    globals: [
        'CSS',
        '__core-js_shared__',
        'Symbol(react-redux-context)',
        '__zod_globalConfig',
        '__zod_globalRegistry',
        'Symbol(signal-exit emitter)'
    ].join(',')
};
