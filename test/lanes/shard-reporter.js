'use strict';

const Fs = require('node:fs');

const Console = require('@hapi/lab/lib/reporters/console');


// The reporter of one shard of the in-process lane (test/lanes/in-process.js): lab's console report of the shard's
// tests, and instead of the shard's own coverage (a part of the whole, which would list most of lib/ as missed) the
// counts its instrumented code gathered, written as JSON to LOCALGATE_COVERAGE_SHARD for the lane to add up.

module.exports = class extends Console {

    end(notebook) {

        const files = {};
        for (const [filename, data] of Object.entries(global.__$$labCov.files)) {
            const statements = {};
            for (const [line, ids] of Object.entries(data.statements)) {
                statements[line] = Object.fromEntries(Object.entries(ids).map(([id, statement]) => [id, statement.hit]));
            }

            files[filename] = { lines: data.lines, statements };
        }

        Fs.writeFileSync(process.env.LOCALGATE_COVERAGE_SHARD, JSON.stringify(files));
        return super.end({ ...notebook, coverage: undefined });
    }
};
