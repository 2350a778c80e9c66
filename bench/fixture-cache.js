'use strict';

// node bench/fixture-cache.js (after npm run build): how long POST /_instances takes over HTTP with a 1,000-record
// fixture, the first instance from the fixture and the 2nd to 31st, with the cache of fixture images off
// (FIXTURE_CACHE_MIB=0) and on (its default), and on for a hand-written fixture: no id, no created_at, no clock and
// random ids, so the image's records take their ids and times when it is made. One server per setting on loopback, one kept-alive connection; each
// instance is deleted, untimed, before the next. Each round sends a fixture of its own (the catalogue's name differs),
// so its first instance loads every record. Settings: BENCH_FIXTURE_ROUNDS (5).

const { randomBytes } = require('node:crypto');
const Http = require('node:http');

const Localgate = require('../dist');
const { freePort } = require('./ports');


const internals = {
    rounds: Number(process.env.BENCH_FIXTURE_ROUNDS ?? 5),
    again: 30
};


// 1,000 records: a business, 900 products, 50 locations, 30 vehicles, 19 drivers. Products and vehicles take the
// instance's sequential ids and its frozen clock; the rest name theirs.
internals.fixture = function (round) {

    const at = '2029-01-01T00:00:00.000Z';
    return {
        commerce: {
            businesses: [{ id: 'b-1', name: `Harbour Market ${round}`, category: 'Market', city: 'Harbourside', phone: '+1 207 555 0100', created_at: at }],
            products: Array.from({ length: 900 }, (_, i) => ({ name: `Product ${i}`, description: `The ${i}th product of the market`, price: 1 + (i % 50), currency: 'USD', business_id: 'b-1' }))
        },
        logistics: {
            locations: Array.from({ length: 50 }, (_, i) => ({ id: `l-${i}`, name: `Stop ${i}`, address: `${i} Quay Street`, city: 'Harbourside', latitude: 50 + i / 100, longitude: -3 - i / 100, created_at: at })),
            vehicles: Array.from({ length: 30 }, (_, i) => ({ make: 'Toyota', model: `Model ${i}`, year: 2020, seats: 5, daily_rate: 39, currency: 'GBP' })),
            drivers: Array.from({ length: 19 }, (_, i) => ({ id: `d-${i}`, name: `Driver ${i}`, phone: `+44 1632 9601${String(i).padStart(2, '0')}`, license_number: `LIC${i}`, created_at: at }))
        }
    };
};


internals.request = function (agent, port, token, method, path, payload) {

    return new Promise((resolve, reject) => {

        const headers = { authorization: `Bearer ${token}` };
        if (payload) {
            headers['content-type'] = 'application/json';
            headers['content-length'] = Buffer.byteLength(payload);
        }

        const req = Http.request({ agent, host: '127.0.0.1', port, method, path, headers }, (res) => {

            const chunks = [];
            res.on('data', (chunk) => chunks.push(chunk));
            res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
        });

        req.on('error', reject);
        req.end(payload);
    });
};


// The same records as a hand-written fixture has them: businesses and drivers name the ids others refer to, nothing
// names a time.
internals.handWritten = function (round) {

    const fixture = internals.fixture(round);
    for (const collection of [fixture.commerce.businesses, fixture.logistics.locations, fixture.logistics.drivers]) {
        for (const record of collection) {
            delete record.created_at;
        }
    }

    for (const location of fixture.logistics.locations) {
        delete location.id;
    }

    return fixture;
};


internals.measure = async function (fixtureCacheMib, handWritten = false) {

    const secret = randomBytes(32).toString('hex');
    const port = await freePort();
    const server = await Localgate.createServer({ dataDir: ':memory:', logLevel: 'silent', jwtSecret: secret, port, host: '127.0.0.1', fixtureCacheMib, maxFixtureMib: 16 });
    await server.start();
    const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 });
    const token = Localgate.mintToken(secret, 'bench', 3600, { admin: true });
    const firsts = [];
    const next = [];
    try {
        for (let i = 0; i < internals.rounds; ++i) {
            const payload = JSON.stringify(handWritten ? { seed: 'none', fixture: internals.handWritten(i) } : { seed: 'none', ids: 'sequential', clock: '2030-01-01T00:00:00Z', fixture: internals.fixture(i) });
            for (let j = 0; j <= internals.again; ++j) {
                const started = process.hrtime.bigint();
                const res = await internals.request(agent, port, token, 'POST', '/_instances', payload);
                const ms = Number(process.hrtime.bigint() - started) / 1e6;
                if (res.status !== 201) {
                    throw new Error(`POST /_instances answered ${res.status}: ${res.body}`);
                }

                (j === 0 ? firsts : next).push(ms);
                await internals.request(agent, port, token, 'DELETE', `/_instances/${JSON.parse(res.body).id}`);
            }
        }
    }
    finally {
        agent.destroy();
        await server.stop();
    }

    return { firsts, next, bytes: Buffer.byteLength(JSON.stringify(handWritten ? internals.handWritten(0) : internals.fixture(0))) };
};


internals.at = function (times, share) {

    const sorted = [...times].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))].toFixed(2);
};


internals.main = async function () {

    const settings = [
        ['cache off (FIXTURE_CACHE_MIB=0)', 0, false],
        ['cache on (FIXTURE_CACHE_MIB=64)', 64, false],
        ['cache on, hand-written fixture (no ids, no times, random ids, wall clock)', 64, true]
    ];

    for (const [label, mib, handWritten] of settings) {
        const { firsts, next, bytes } = await internals.measure(mib, handWritten);
        console.log(`${label}, a ${(bytes / 1024).toFixed(0)} KiB fixture of 1,000 records over HTTP: 1st instance median ${internals.at(firsts, 0.5)} ms; 2nd-${internals.again + 1}th median ${internals.at(next, 0.5)} ms, p95 ${internals.at(next, 0.95)} ms (${internals.rounds} rounds, ${next.length} instances)`);
    }
};


internals.main().catch((err) => {

    console.error(err);
    process.exit(1);
});
