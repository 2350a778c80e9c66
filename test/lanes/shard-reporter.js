'use strict';

const Fs = require('node:fs');

const Console = require('@hapi/lab/lib/reporters/console');


// The reporter of one shard of the in-process lane (test/lanes/in-process.js): lab's console report of the shard's
// tests, and instead of the shard's own coverage (a part of the whole, which would list most of lib/ as missed) the
// counts its instrumented code gathered, written as JSON to LOCALGATE_COVERAGE_SHARD for the lane to add up.

module.exports = class extends Console {

    end(notebook) {

        // A statement by its id, which is unique in its file: lab's analysis copies a statement it found partly hit to
        // the lines it spans, so the line it stands on differs from one run to the next.
        const files = {};
        for (const [filename, data] of Object.entries(global.__$$labCov.files)) {
            const statements = {};
            for (const ids of Object.values(data.statements)) {
                for (const [id, statement] of Object.entries(ids)) {
                    statements[id] = { true: statements[id]?.true || statement.hit.true, false: statements[id]?.false || statement.hit.false };
                }
            }

            files[filename] = { lines: data.lines, statements };
        }

        Fs.writeFileSync(process.env.LOCALGATE_COVERAGE_SHARD, JSON.stringify(files));
        return super.end({ ...notebook, coverage: undefined });
    }
};
