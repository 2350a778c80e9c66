'use strict';

// The load generator: a child process of bench/run.js (so it never shares an event loop with a server), driving
// autocannon through its API. It takes one job at a time over IPC and answers with the counts and the latency of
// every response, measured here to the microsecond (autocannon's own histogram keeps whole milliseconds).

const Autocannon = require('autocannon');


const internals = {
    // Bookings are handed out an hour each, backwards in time from here, so none overlaps another.
    horizon: Date.parse('2200-01-01T00:00:00.000Z'),
    hour: 3600 * 1000,
    // Requests one job can make at most; jobs number their slots apart by this much.
    perJob: 1_000_000
};


internals.requests = function (job) {

    const json = job.style === 'json-server';
    // The catalogue is public: only the bookings and the writes carry the caller's token.
    const headers = json || job.scenario === 'products-read' || job.scenario === 'products-page' ? {} : { authorization: `Bearer ${job.token}` };
    const { businessIds, writerVehicleIds: vehicleIds, locationIds } = job.ids;
    let sent = 0;

    const scenarios = {
        'products-read': (n) => {

            const businessId = businessIds[n % businessIds.length];
            return { method: 'GET', path: json ? `/products?business_id=${businessId}&_limit=20` : `/v1/commerce/products?business_id=${businessId}&limit=20` };
        },
        // The catalogue's first page, in the default instance or, with job.prefix (/i/<id>), in an instance.
        'products-page': () => {

            return { method: 'GET', path: `${job.prefix ?? ''}/v1/commerce/products?limit=20` };
        },
        'bookings-read': () => {

            return { method: 'GET', path: json ? `/bookings?customer_id=${job.reader}&_limit=20` : '/v1/logistics/bookings?limit=20' };
        },
        'products-write': (n) => {

            const product = {
                name: `Bench product ${job.run}-${n}`,
                description: 'Written by the benchmark.',
                price: (1000 + n % 9000) / 100,
                currency: 'USD',
                business_id: businessIds[n % businessIds.length]
            };

            // json-server stores what it is sent: send it what localgate would have added.
            const body = json ? { ...product, created_by: job.writer, created_at: new Date().toISOString(), scam_report_count: 0 } : product;
            return { method: 'POST', path: json ? '/products' : '/v1/commerce/products', body };
        },
        'bookings-write': (n) => {

            const slot = job.run * internals.perJob + n;
            const pickup = internals.horizon - (Math.floor(slot / vehicleIds.length) + 1) * internals.hour;
            const booking = {
                vehicle_id: vehicleIds[slot % vehicleIds.length],
                pickup_location_id: locationIds[0],
                dropoff_location_id: locationIds[1],
                pickup_at: new Date(pickup).toISOString(),
                return_at: new Date(pickup + internals.hour).toISOString(),
                notes: 'Booked by the benchmark.'
            };

            const body = json ? { ...booking, customer_id: job.writer, status: 'confirmed', created_at: new Date().toISOString() } : booking;
            return { method: 'POST', path: json ? '/bookings' : '/v1/logistics/bookings', body };
        }
    };

    const scenario = scenarios[job.scenario];
    return [{
        setupRequest: (request) => {

            const next = scenario(sent++);
            if (next.body) {
                return { ...request, ...next, body: JSON.stringify(next.body), headers: { ...request.headers, ...headers, 'content-type': 'application/json' } };
            }

            return { ...request, ...next, headers: { ...request.headers, ...headers } };
        }
    }];
};


internals.percentile = function (sorted, p) {

    return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : null;
};


internals.run = async function (job) {

    let latencies = new Float64Array(1 << 16);
    let count = 0;
    const statuses = {};
    const cpu = process.cpuUsage();
    const started = process.hrtime.bigint();

    const instance = Autocannon({
        url: job.url,
        connections: job.connections,
        duration: job.seconds,
        timeout: 10,
        requests: internals.requests(job)
    });

    instance.on('response', (client, statusCode, bytes, milliseconds) => {

        statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
        if (statusCode >= 300) {
            return;
        }

        if (count === latencies.length) {
            const grown = new Float64Array(latencies.length * 2);
            grown.set(latencies);
            latencies = grown;
        }

        latencies[count++] = milliseconds;
    });

    const result = await instance;
    const wall = Number(process.hrtime.bigint() - started) / 1e9;
    const used = process.cpuUsage(cpu);
    const sorted = latencies.subarray(0, count).sort();

    return {
        ok: count,
        statuses,
        errors: result.errors,
        timeouts: result.timeouts,
        seconds: result.duration,
        rps: count / result.duration,
        p50: internals.percentile(sorted, 0.5),
        p99: internals.percentile(sorted, 0.99),
        max: sorted.length ? sorted[sorted.length - 1] : null,
        loadCpu: (used.user + used.system) / 1e6 / wall
    };
};


process.on('message', async (job) => {

    try {
        process.send({ result: await internals.run(job) });
    }
    catch (err) {
        process.send({ error: err.stack });
    }
});
