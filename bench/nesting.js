'use strict';

// npm run build && node bench/nesting.js: what the depth bound of a JSON body costs, beside the parse hapi already
// pays for the same text, and that its cost grows with the body's size alone. In process, one core; the median of
// BENCH_ROUNDS (41) timings per body. Bodies: the widest 64 KiB (an array of zeros, the most values per byte), 64 KiB
// of empty objects (the most containers per byte), a 16 MiB fixture of the same (MAX_FIXTURE_MIB) and a 1 MiB one to
// compare it with, and the 5,000-deep body that the bound refuses at its 65th level.

const { maxJsonDepth, nestsDeeperThan } = require('../dist/nesting');


const internals = {
    rounds: Number(process.env.BENCH_ROUNDS ?? 41)
};


internals.filled = function (bytes, item) {

    const count = Math.floor((bytes - 2) / (item.length + 1));
    return `[${Array(count).fill(item).join(',')}]`;
};


internals.median = function (values) {

    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
};


internals.time = function (work) {

    // Warmed up first, so that the optimizing compiler has run.
    for (let i = 0; i < 3; ++i) {
        work();
    }

    const times = [];
    for (let i = 0; i < internals.rounds; ++i) {
        const start = process.hrtime.bigint();
        work();
        times.push(Number(process.hrtime.bigint() - start) / 1e3);
    }

    return internals.median(times);
};


const bodies = [
    ['64 KiB of zeros', internals.filled(64 * 1024, '0')],
    ['64 KiB of {}', internals.filled(64 * 1024, '{}')],
    ['1 MiB of {}', internals.filled(2 ** 20, '{}')],
    ['16 MiB of {}', internals.filled(16 * 2 ** 20, '{}')],
    ['5,000 deep', '['.repeat(5000) + ']'.repeat(5000)]
];

console.log(`| body | bytes | JSON.parse µs | depth check µs | check / parse | check ns per byte |`);
console.log('|---|---|---|---|---|---|');
for (const [name, text] of bodies) {
    const parsed = JSON.parse(text);
    const parse = internals.time(() => JSON.parse(text));
    let refused;
    const check = internals.time(() => {

        refused = nestsDeeperThan(parsed, maxJsonDepth);
    });
    console.log(`| ${name}${refused ? ' (refused)' : ''} | ${text.length} | ${parse.toFixed(0)} | ${check.toFixed(0)} | ${(check / parse).toFixed(2)} | ${(check * 1e3 / text.length).toFixed(1)} |`);
}
