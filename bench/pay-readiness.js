'use strict';

// npm run build && node bench/pay-readiness.js: what the pay gate's readiness read costs on a provisioned SQLite pay
// file. The cached read (a stat and PRAGMA data_version; the database is read again only after a change), beside what
// every request paid before readiness was cached (a stat and the recorded keys; the migrations once seen complete were
// not read again) and what a read after a change costs (a stat, the recorded keys and the applied migrations). In
// process, one core; the best of BENCH_ROUNDS (5) runs of BENCH_READS (20,000) reads each.

const Fs = require('node:fs');
const Os = require('node:os');
const Path = require('node:path');

const { provisionPay } = require('../dist');
const { payNamespace } = require('../dist/namespaces/pay');
const { closeDatabase } = require('../dist/storage/sqlite/open');
const { recordedPayKeys } = require('../dist/storage/sqlite/pay-credentials');
const { openPayDatabase, payContents } = require('../dist/storage/sqlite/pay-database');
const { openSqliteProvisioned } = require('../dist/storage/sqlite/provisioned');


const internals = {
    rounds: Number(process.env.BENCH_ROUNDS ?? 5),
    reads: Number(process.env.BENCH_READS ?? 20_000)
};


internals.best = async function (read) {

    let best = Infinity;
    for (let i = 0; i < internals.rounds; ++i) {
        const start = process.hrtime.bigint();
        for (let j = 0; j < internals.reads; ++j) {
            await read();
        }

        best = Math.min(best, Number(process.hrtime.bigint() - start) / internals.reads / 1e3);
    }

    return best;
};


internals.main = async function () {

    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'localgate-pay-readiness-'));
    try {
        const credentials = await provisionPay(Path.join(dir, 'pay.db'));
        const file = credentials.PAY_DB_URL;
        const pay = openSqliteProvisioned(payNamespace, {
            storage: 'file',
            pay: { url: file, publishableKey: credentials.PAY_DB_PUBLISHABLE_KEY, secretKey: credentials.PAY_DB_SECRET_KEY },
            payLocation: { engine: 'sqlite', file }
        });

        const cached = await internals.best(() => pay.readiness());
        await pay.close();

        const db = openPayDatabase(file, true);
        const keys = await internals.best(() => {

            Fs.statSync(file);
            return recordedPayKeys(db);
        });

        const full = await internals.best(() => {

            Fs.statSync(file);
            return payContents(db);
        });

        closeDatabase(db);
        console.log(`pay readiness, cached (stat + data_version): ${cached.toFixed(2)} µs a read`);
        console.log(`pay readiness, read per request before the cache (stat + recorded keys): ${keys.toFixed(2)} µs a read`);
        console.log(`pay readiness, read after a change (stat + recorded keys + applied migrations): ${full.toFixed(2)} µs a read`);
    }
    finally {
        Fs.rmSync(dir, { recursive: true, force: true });
    }
};


internals.main().catch((err) => {

    console.error(err);
    process.exit(1);
});
