'use strict';

// npm run build && node bench/silent-move.js: how long a move of the clock takes with one receiver that accepts the
// connection and never answers, over HTTP, with the default WEBHOOK_TIMEOUT_MS and CLOCK_MOVE_DEADLINE_MS (10 s each).
// An instance with pay on a frozen clock, BENCH_SILENT_DEPOSITS (5) bank-transfer deposits pending, an endpoint for
// pay.transaction.completed at the silent receiver, then PUT /_instances/{id}/clock {"advance": "3d"} timed from the
// request to its answer, BENCH_SILENT_ROUNDS (3) times, each on a fresh instance. Prints one line per round and the
// longest; the server stops after, ending the attempts its walks were still making.

const Http = require('node:http');
const Path = require('node:path');


const deposits = Number(process.env.BENCH_SILENT_DEPOSITS ?? 5);
const rounds = Number(process.env.BENCH_SILENT_ROUNDS ?? 3);


const internals = {};


internals.listen = async function (server) {

    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    return server.address().port;
};


internals.call = async function (port, method, path, token, body, headers = {}) {

    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
        body: body ? JSON.stringify(body) : undefined
    });
    const text = await res.text();
    if (res.status >= 300) {
        throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
    }

    return text ? JSON.parse(text) : null;
};


internals.main = async function () {

    const Localgate = require(Path.join(__dirname, '..', 'dist'));

    // Keeps every connection and never answers.
    const silent = Http.createServer(() => undefined);
    const receiverPort = await internals.listen(silent);
    const secret = 'b'.repeat(32);
    const server = await Localgate.createServer({ storage: 'memory', logLevel: 'silent', jwtSecret: secret, port: 0, host: '127.0.0.1' });
    await server.start();
    const { port } = server.info;
    const admin = Localgate.mintToken(secret, 'bench-admin', 3600, { admin: true });
    const payer = Localgate.mintToken(secret, 'bench-payer', 3600);
    const settings = server.app.localgate.settings;
    console.log(`WEBHOOK_TIMEOUT_MS ${settings.webhookTimeoutMs}, CLOCK_MOVE_DEADLINE_MS ${settings.clockMoveDeadlineMs}, ${deposits} deposits pending, ${rounds} rounds`);

    const times = [];
    try {
        for (let i = 0; i < rounds; ++i) {
            const instance = await internals.call(port, 'POST', '/_instances', admin, { seed: 'none', pay: true, clock: '2030-01-01T00:00:00Z' });
            await internals.call(port, 'PUT', `/_instances/${instance.id}/webhooks`, admin, { endpoints: [{ url: `http://127.0.0.1:${receiverPort}/hook`, types: ['pay.transaction.completed'] }] });
            for (let j = 0; j < deposits; ++j) {
                await internals.call(port, 'POST', `${instance.base_path}/v1/pay/gateway/deposit`, payer, { provider_id: 'bank-transfer', asset: 'USD', amount: 1000 + j }, { 'idempotency-key': `deposit-${i}-${j}` });
            }

            const started = process.hrtime.bigint();
            const moved = await internals.call(port, 'PUT', `/_instances/${instance.id}/clock`, admin, { advance: '3d' });
            const ms = Number(process.hrtime.bigint() - started) / 1e6;
            times.push(ms);
            console.log(`round ${i + 1}: ${ms.toFixed(0)} ms, applied ${JSON.stringify(moved.applied)}, attempted ${moved.attempted}, remaining ${moved.remaining}`);
        }
    }
    finally {
        await server.stop({ timeout: 1000 });
        silent.closeAllConnections();
        silent.close();
    }

    console.log(`longest clock move with one silent receiver: ${Math.max(...times).toFixed(0)} ms`);
};


internals.main().catch((err) => {

    console.error(err);
    process.exitCode = 1;
});
