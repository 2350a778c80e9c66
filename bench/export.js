'use strict';

// node bench/export.js (after npm run build): how long an export of an instance takes, and its load back, in process
// through the test kit and over HTTP (GET /_instances/{id}/export, POST /_instances with the file). Two worlds: a demo
// instance with pay, and an empty one given a fixture of 1,000 records (400 products, 300 bookings, 100 wallets with
// 200 transactions). Settings: BENCH_EXPORTS (50), after 5 of warm-up.

const { createTestKit } = require('../dist/testing');


const internals = {
    exports: Number(process.env.BENCH_EXPORTS ?? 50),
    warmUp: 5,
    bakery: 'd851fadb-03ca-5a24-ba16-c15cce19933b',
    quay: '8a5c2440-7943-4c0d-bdf4-9777cd05095e'
};


// 1,000 records over every kind the export holds, on the demo's businesses, vehicles and locations.
internals.world = function () {

    const vehicles = ['67f7b2a9-5639-460c-a9f5-d114637c1b43', '1a1aec40-05e3-4128-a86c-6981ec6a3eb5', 'ffc619e8-15d4-45e7-b413-80963e315b7d'];
    const at = (day) => new Date(Date.UTC(2030, 0, 1) + day * 86_400_000).toISOString();
    const products = Array.from({ length: 400 }, (_, i) => ({ id: `p-${i}`, name: `Loaf ${i}`, price: 2 + (i % 10), currency: 'USD', business_id: internals.bakery }));
    const bookings = Array.from({ length: 300 }, (_, i) => ({
        id: `b-${i}`, vehicle_id: vehicles[i % 3], pickup_location_id: internals.quay, dropoff_location_id: internals.quay,
        pickup_at: at(i), return_at: at(i + 1), customer_id: `c-${i % 20}`, status: i % 7 ? 'confirmed' : 'cancelled'
    }));
    const wallets = Array.from({ length: 100 }, (_, i) => ({ id: `w-${i}`, owner_id: `c-${i}` }));
    const transactions = wallets.flatMap((wallet) => [
        { id: `t-${wallet.id}-in`, wallet_id: wallet.id, type: 'deposit', asset: 'USD', amount: 5000, provider_id: 'sandbox' },
        { id: `t-${wallet.id}-out`, wallet_id: wallet.id, type: 'withdrawal', asset: 'USD', amount: 1200, provider_id: 'sandbox' }
    ]);
    return { commerce: { products }, logistics: { bookings }, pay: { wallets, transactions } };
};


internals.time = async function (what, work) {

    const times = [];
    for (let i = 0; i < internals.exports + internals.warmUp; ++i) {
        const started = process.hrtime.bigint();
        await work();
        times.push(Number(process.hrtime.bigint() - started) / 1e6);
    }

    const timed = times.slice(internals.warmUp).sort((a, b) => a - b);
    const at = (share) => timed[Math.min(timed.length - 1, Math.floor(share * timed.length))].toFixed(2);
    console.log(`${what}: median ${at(0.5)} ms, p95 ${at(0.95)} ms over ${timed.length}`);
};


internals.main = async function () {

    const kit = await createTestKit();
    const uri = await kit.listen();
    const admin = { authorization: `Bearer ${(await kit.instance()).token('bench', { admin: true })}`, 'content-type': 'application/json' };
    const worlds = [['demo instance', await kit.instance({ pay: true })], ['1,000-record world', await kit.instance({ pay: true, fixture: internals.world() })]];
    for (const [name, source] of worlds) {
        const file = await source.export();
        const bytes = Buffer.byteLength(JSON.stringify(file));
        console.log(`${name}: ${Object.values(file).slice(1).flatMap((namespace) => Object.values(namespace)).reduce((sum, records) => sum + records.length, 0)} records, ${(bytes / 1024).toFixed(0)} KiB`);
        await internals.time(`  export in process`, () => source.export());
        await internals.time(`  export over HTTP`, async () => {

            const res = await fetch(`${uri}/_instances/${source.id}/export`, { headers: admin });
            await res.arrayBuffer();
        });

        await internals.time(`  load back over HTTP (POST /_instances, then DELETE)`, async () => {

            const res = await fetch(`${uri}/_instances`, { method: 'POST', headers: admin, body: JSON.stringify({ seed: 'none', pay: true, fixture: file }) });
            const made = await res.json();
            await fetch(`${uri}/_instances/${made.id}`, { method: 'DELETE', headers: admin });
        });
    }

    await kit.close();
};


internals.main().catch((err) => {

    console.error(err);
    process.exit(1);
});
