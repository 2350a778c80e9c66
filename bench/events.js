'use strict';

// BENCH_ONLY=events npm run bench: what events and webhooks cost and that they hold what they promise (issue 32).
// Every receiver is a node:http server in this process on loopback, answering 204 unless said otherwise.
// - deliveries a second: an instance with a frozen clock and an endpoint whose first attempts an outbound fault drops
//   before sending them, 1,000 product writes, then the clock moved one second: the move sends the 1,000 retries
//   before it answers, and is timed. Beside it, end to end: 1,000 writes with the endpoint and no fault, timed until
//   the receiver holds all 1,000, against the same writes with no endpoint.
// - advance: 1,000 pending bank-transfer deposits (their `created` events delivered first), then a move of three days
//   that applies the 1,000 transitions and sends their 1,000 deliveries before answering; BENCH_EVENTS_ADVANCES (7)
//   rounds after one of warm-up, each on a fresh instance.
// - isolation: 8 instances of one listening server, each with its own receiver and its own stream (SSE, over HTTP),
//   1,000 product writes each, all at once; what each saw of the others, and whether each got all of its own.
// - throughput with no endpoint and no subscriber: the build of commit ff3710d (the last before events) and the current
//   dist/, servers in memory in processes of their own taking turns under autocannon (product writes on the default
//   data set, sandbox deposits on an instance with pay), then the same requests in this process through server.inject.
// - duplicates: 300 deposits under an outbound `drop: "after"` fault on every first attempt, then the retries.
// - determinism: bench/time-scenario.json played twice with sequential ids and an endpoint signing on the instance's
//   clock, the deliveries compared as the receiver got them (method, path, headers, body).
// Settings: BENCH_EVENTS_ROUNDS (5), BENCH_EVENTS_ADVANCES (7), BENCH_EVENTS_BASELINE (ff3710d), BENCH_EVENTS_INSTANCES
// (8), BENCH_TIME_ROUNDS (6) and BENCH_SECONDS (2) for the throughput rounds, BENCH_TIME_INJECTS (1,000) a turn in process;
// BENCH_EVENTS_PARTS, a comma list of duplicates, determinism, rates, advance, isolation, throughput, in-process, runs
// only those (the others say "not run").

const { createHmac, randomBytes, randomUUID } = require('node:crypto');
const Fs = require('node:fs');
const Http = require('node:http');
const Os = require('node:os');
const Path = require('node:path');

const Autocannon = require('autocannon');
const ResultsFile = require('./results-file');
const Time = require('./time');


const internals = {
    root: Path.resolve(__dirname, '..'),
    baseline: process.env.BENCH_EVENTS_BASELINE || 'ff3710d',
    rounds: Number(process.env.BENCH_EVENTS_ROUNDS ?? 5),
    advanceRounds: Number(process.env.BENCH_EVENTS_ADVANCES ?? 7),
    instances: Number(process.env.BENCH_EVENTS_INSTANCES ?? 8),
    throughputRounds: Number(process.env.BENCH_TIME_ROUNDS ?? 6),
    seconds: Number(process.env.BENCH_SECONDS ?? 2),
    connections: Number(process.env.BENCH_CONNECTIONS ?? 10),
    injects: Number(process.env.BENCH_TIME_INJECTS ?? 1000),
    writes: 1000,
    deposits: 300,
    clock: '2030-01-01T00:00:00.000Z',
    bakery: 'd851fadb-03ca-5a24-ba16-c15cce19933b',
    scenario: Path.join(__dirname, 'time-scenario.json'),
    // A fixed secret, so that two runs sign alike.
    secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
    parts: process.env.BENCH_EVENTS_PARTS ? process.env.BENCH_EVENTS_PARTS.split(',').map((part) => part.trim()) : undefined
};


// A loopback receiver: every request it gets, as it got it (method, path, raw headers in order, body), answered with
// its status (204 unless set).
internals.receiver = async function (status = 204) {

    const waiters = [];
    const receiver = {
        status,
        received: [],
        url: '',
        reset() {

            receiver.received.length = 0;
        },
        // Resolves once it holds at least count requests; rejects after timeoutMs.
        waitFor(count, timeoutMs = 60_000) {

            if (receiver.received.length >= count) {
                return Promise.resolve();
            }

            return new Promise((resolve, reject) => {

                const timer = setTimeout(() => reject(new Error(`the receiver got ${receiver.received.length} of ${count} in ${timeoutMs} ms`)), timeoutMs);
                waiters.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
            });
        },
        close() {

            server.closeAllConnections();
            return new Promise((resolve) => server.close(resolve));
        }
    };

    const server = Http.createServer((req, res) => {

        const chunks = [];
        req.on('data', (chunk) => chunks.push(chunk));
        req.on('end', () => {

            receiver.received.push({ method: req.method, url: req.url, headers: req.rawHeaders, body: Buffer.concat(chunks).toString() });
            res.writeHead(receiver.status).end();
            for (const waiter of waiters.splice(0)) {
                if (receiver.received.length >= waiter.count) {
                    waiter.resolve();
                }
                else {
                    waiters.push(waiter);
                }
            }
        });
    });

    server.keepAliveTimeout = 60_000;
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiver.url = `http://127.0.0.1:${server.address().port}/hooks`;
    return receiver;
};


// A header of a received request, by its name in any case.
internals.header = function (delivery, name) {

    for (let i = 0; i < delivery.headers.length; i += 2) {
        if (delivery.headers[i].toLowerCase() === name) {
            return delivery.headers[i + 1];
        }
    }

    return undefined;
};


// Standard Webhooks: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>"> keyed with the secret's bytes after whsec_.
internals.signatureValid = function (delivery, secret) {

    const id = internals.header(delivery, 'webhook-id');
    const timestamp = internals.header(delivery, 'webhook-timestamp');
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const expected = `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${delivery.body}`).digest('base64')}`;
    return (internals.header(delivery, 'webhook-signature') ?? '').split(' ').includes(expected);
};


internals.median = Time.median;
internals.percentile = Time.percentile;


internals.summary = function (values) {

    return { values, p50: internals.median(values), p90: internals.percentile(values, 0.9), min: Math.min(...values), max: Math.max(...values) };
};


internals.ms = (started) => Number(process.hrtime.bigint() - started) / 1e6;


// An admin route of an instance, through the kit's server: its answer's body, or a throw on another status.
internals.admin = async function (kit, instance, method, path, payload, expected = 200) {

    const res = await kit.server.inject({ method, url: `/_instances/${instance.id}${path}`, headers: { authorization: `Bearer ${instance.token('bench-admin', { admin: true })}` }, payload });
    if (res.statusCode !== expected) {
        throw new Error(`${method} /_instances/{id}${path}: ${res.statusCode} ${res.payload}`);
    }

    return res.payload ? JSON.parse(res.payload) : null;
};


internals.endpoint = async function (kit, instance, endpoint) {

    const { endpoints } = await internals.admin(kit, instance, 'PUT', '/webhooks', { endpoints: [endpoint] });
    return endpoints[0];
};


internals.product = async function (instance, name) {

    const res = await instance.inject({ method: 'POST', url: '/v1/commerce/products', headers: instance.auth('bench-writer'), payload: { name, price: 2.5, currency: 'USD', business_id: internals.bakery } });
    if (res.statusCode !== 201) {
        throw new Error(`product ${name}: ${res.statusCode} ${res.payload}`);
    }
};


// A bank-transfer deposit, pending two days; one in ten ends in 99 and is returned as it settles.
internals.deposit = async function (instance, i) {

    const amount = 100 * (i + 1) + (i % 10 === 0 ? 99 : i % 50);
    const res = await instance.inject({
        method: 'POST',
        url: '/v1/pay/gateway/deposit',
        headers: { ...instance.auth(`payer-${i % 20}`), 'idempotency-key': `deposit-${i}` },
        payload: { provider_id: 'bank-transfer', asset: 'USD', amount }
    });

    if (res.statusCode !== 201) {
        throw new Error(`deposit ${i}: ${res.statusCode} ${res.payload}`);
    }
};


// 1,000 first attempts dropped before sending, then the move of the clock that sends their retries, timed.
internals.burst = async function (kit, receiver) {

    const instance = await kit.instance({ clock: internals.clock });
    try {
        await internals.endpoint(kit, instance, { url: receiver.url, types: ['commerce.product.created'], retry_schedule: ['1s'] });
        await internals.admin(kit, instance, 'PUT', '/faults', { rules: [{ direction: 'outbound', event: 'commerce.product.created', drop: 'before', times: internals.writes }] });
        receiver.reset();
        for (let i = 0; i < internals.writes; ++i) {
            await internals.product(instance, `Burst ${i}`);
        }

        await internals.admin(kit, instance, 'POST', '/webhooks/flush');
        if (receiver.received.length !== 0) {
            throw new Error(`the receiver got ${receiver.received.length} first attempts that the fault drops before sending`);
        }

        const started = process.hrtime.bigint();
        const moved = await internals.admin(kit, instance, 'PUT', '/clock', { advance: '1s' });
        await receiver.waitFor(internals.writes);
        const ms = internals.ms(started);
        if (moved.attempted !== internals.writes || receiver.received.length !== internals.writes) {
            throw new Error(`the move attempted ${moved.attempted} and the receiver got ${receiver.received.length}, not ${internals.writes}`);
        }

        return ms;
    }
    finally {
        await instance.close();
    }
};


// 1,000 writes, and with an endpoint until the receiver holds their 1,000 deliveries: timed from the first write.
internals.endToEnd = async function (kit, receiver, withEndpoint) {

    const instance = await kit.instance({ clock: internals.clock });
    try {
        if (withEndpoint) {
            await internals.endpoint(kit, instance, { url: receiver.url, types: ['commerce.product.created'] });
        }

        receiver.reset();
        const started = process.hrtime.bigint();
        for (let i = 0; i < internals.writes; ++i) {
            await internals.product(instance, `Loaf ${i}`);
        }

        if (withEndpoint) {
            await internals.admin(kit, instance, 'POST', '/webhooks/flush');
            await receiver.waitFor(internals.writes);
        }

        return internals.ms(started);
    }
    finally {
        await instance.close();
    }
};


// The floor of one-at-a-time sending on this machine: 1,000 POSTs of an event's size to the same receiver by node:http
// alone (a keep-alive agent, as the sender has), each after the last answered, timed.
internals.floor = async function (receiver) {

    const agent = new Http.Agent({ keepAlive: true });
    const body = JSON.stringify({ id: randomUUID(), type: 'commerce.product.created', created_at: internals.clock, data: { id: randomUUID(), business_id: internals.bakery, name: 'Loaf 1', description: null, price: 2.5, currency: 'USD', created_by: 'bench-writer', created_at: internals.clock } });
    receiver.reset();
    const started = process.hrtime.bigint();
    for (let i = 0; i < internals.writes; ++i) {
        await new Promise((resolve, reject) => {

            const req = Http.request(receiver.url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {

                res.resume();
                res.on('end', resolve);
            });
            req.on('error', reject);
            req.end(body);
        });
    }

    const ms = internals.ms(started);
    agent.destroy();
    return ms;
};


internals.deliveryRates = async function (Testing) {

    const kit = await Testing.createTestKit();
    const receiver = await internals.receiver();
    try {
        const burst = [];
        const floor = [];
        const endToEnd = [];
        const writesAlone = [];
        for (let i = 0; i <= internals.rounds; ++i) {
            const round = [await internals.burst(kit, receiver), await internals.floor(receiver), await internals.endToEnd(kit, receiver, true), await internals.endToEnd(kit, receiver, false)];
            // The first round warms up.
            if (i > 0) {
                burst.push(round[0]);
                floor.push(round[1]);
                endToEnd.push(round[2]);
                writesAlone.push(round[3]);
            }
        }

        return { burst: internals.summary(burst), floor: internals.summary(floor), endToEnd: internals.summary(endToEnd), writesAlone: internals.summary(writesAlone) };
    }
    finally {
        await receiver.close();
        await kit.close();
    }
};


// 1,000 pending deposits whose `created` deliveries are made first, then the advance that settles them and sends the
// 1,000 deliveries of their transitions before it answers.
internals.advance = async function (kit, receiver) {

    const instance = await kit.instance({ pay: true, seed: 'none', clock: internals.clock, ids: 'sequential' });
    try {
        await internals.endpoint(kit, instance, { url: receiver.url, types: ['pay.transaction.*'] });
        receiver.reset();
        for (let i = 0; i < internals.writes; ++i) {
            await internals.deposit(instance, i);
        }

        await internals.admin(kit, instance, 'POST', '/webhooks/flush');
        await receiver.waitFor(internals.writes);
        const started = process.hrtime.bigint();
        const moved = await internals.admin(kit, instance, 'PUT', '/clock', { advance: '3d' });
        const ms = internals.ms(started);
        if (moved.applied['pay.transaction.completed'] !== 900 || moved.applied['pay.transaction.failed'] !== 100) {
            throw new Error(`the advance applied ${JSON.stringify(moved.applied)}, not 900 completed and 100 failed`);
        }

        if (moved.attempted !== internals.writes || receiver.received.length !== 2 * internals.writes) {
            throw new Error(`the advance attempted ${moved.attempted} and the receiver got ${receiver.received.length - internals.writes} deliveries of transitions, not ${internals.writes}`);
        }

        return ms;
    }
    finally {
        await instance.close();
    }
};


internals.advances = async function (Testing) {

    const kit = await Testing.createTestKit();
    const receiver = await internals.receiver();
    try {
        await internals.advance(kit, receiver);
        const times = [];
        for (let i = 0; i < internals.advanceRounds; ++i) {
            times.push(await internals.advance(kit, receiver));
        }

        return internals.summary(times);
    }
    finally {
        await receiver.close();
        await kit.close();
    }
};


// A Server-Sent Events subscriber: every event it reads, parsed.
internals.subscribe = function (url, token) {

    const events = [];
    let buffered = '';
    return new Promise((resolve, reject) => {

        const req = Http.get(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } }, (res) => {

            if (res.statusCode !== 200) {
                reject(new Error(`stream ${url}: ${res.statusCode}`));
                res.resume();
                return;
            }

            res.setEncoding('utf8');
            res.on('data', (chunk) => {

                buffered += chunk;
                let end;
                while ((end = buffered.indexOf('\n\n')) !== -1) {
                    const block = buffered.slice(0, end);
                    buffered = buffered.slice(end + 2);
                    const data = block.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trimStart()).join('\n');
                    if (data) {
                        events.push(JSON.parse(data));
                    }
                }
            });
            resolve({ events, close: () => req.destroy() });
        });

        req.on('error', (err) => {

            if (err.code !== 'ECONNRESET') {
                reject(err);
            }
        });
    });
};


// Every event of an instance's list, page by page.
internals.listEvents = async function (url, instanceId, token) {

    const events = [];
    for (;;) {
        const after = events.length ? `&after=${events[events.length - 1].id}` : '';
        const res = await fetch(`${url}/_instances/${instanceId}/events?limit=1000${after}`, { headers: { authorization: `Bearer ${token}` } });
        if (res.status !== 200) {
            throw new Error(`events of ${instanceId}: ${res.status} ${await res.text()}`);
        }

        const page = await res.json();
        events.push(...page.data);
        if (page.data.length < 1000) {
            return events;
        }
    }
};


// 8 instances written at once over HTTP, each with its own stream and receiver: what each saw that was not its own.
internals.isolation = async function (Testing) {

    const kit = await Testing.createTestKit();
    const url = await kit.listen();
    const worlds = [];
    try {
        for (let i = 0; i < internals.instances; ++i) {
            const instance = await kit.instance();
            const receiver = await internals.receiver();
            const admin = instance.token('bench-admin', { admin: true });
            await internals.endpoint(kit, instance, { url: receiver.url });
            const stream = await internals.subscribe(`${url}/_instances/${instance.id}/events/stream`, admin);
            worlds.push({ k: i, instance, receiver, stream, admin });
        }

        const started = process.hrtime.bigint();
        await Promise.all(worlds.map(async ({ k, instance }) => {

            const headers = { ...instance.auth('bench-writer'), 'content-type': 'application/json' };
            let next = 0;
            // Four writers per instance.
            await Promise.all(Array.from({ length: 4 }, async () => {

                while (next < internals.writes) {
                    const i = next++;
                    const res = await fetch(`${url}${instance.basePath}/v1/commerce/products`, { method: 'POST', headers, body: JSON.stringify({ name: `World ${k} loaf ${i}`, price: 2.5, currency: 'USD', business_id: internals.bakery }) });
                    await res.arrayBuffer();
                    if (res.status !== 201) {
                        throw new Error(`instance ${k} write ${i}: ${res.status}`);
                    }
                }
            }));
        }));

        const writesMs = internals.ms(started);
        const deadline = Date.now() + 120_000;
        while (worlds.some(({ receiver, stream }) => receiver.received.length < internals.writes || stream.events.length < internals.writes) && Date.now() < deadline) {
            await new Promise((resolve) => setTimeout(resolve, 50));
        }

        const allMs = internals.ms(started);
        // Time for anything that would arrive late to arrive.
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const tally = { writesMs, allMs, foreignEvents: 0, foreignDeliveries: 0, completeStreams: 0, completeDeliveries: 0, events: 0, deliveries: 0 };
        for (const { k, instance, receiver, stream, admin } of worlds) {
            const own = new Set((await internals.listEvents(url, instance.id, admin)).map((event) => event.id));
            const mine = (event) => own.has(event.id) && String(event.data?.name).startsWith(`World ${k} `);
            const delivered = receiver.received.map((delivery) => JSON.parse(delivery.body));
            tally.events += stream.events.length;
            tally.deliveries += delivered.length;
            tally.foreignEvents += stream.events.filter((event) => !mine(event)).length;
            tally.foreignDeliveries += delivered.filter((event) => !mine(event)).length;
            const streamed = new Set(stream.events.map((event) => event.id));
            const received = new Set(delivered.map((event) => event.id));
            tally.completeStreams += own.size === internals.writes && [...own].every((id) => streamed.has(id)) ? 1 : 0;
            tally.completeDeliveries += own.size === internals.writes && [...own].every((id) => received.has(id)) ? 1 : 0;
        }

        return tally;
    }
    finally {
        for (const { instance, receiver, stream } of worlds) {
            stream.close();
            await receiver.close();
            await instance.close();
        }

        await kit.close();
    }
};


// The requests of the throughput comparison: a product write on the default data set, a sandbox deposit (completed at
// once: two events where events exist) on an instance with pay, over 100 payers, each with a key of its own.
internals.requests = function (tokens, payInstance) {

    let counter = 0;
    return {
        'products write': () => ({ method: 'POST', path: '/v1/commerce/products', headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.writer}` }, body: JSON.stringify({ name: 'Bench loaf', price: 2.5, currency: 'USD', business_id: internals.bakery }) }),
        'deposits': (server) => {

            const n = counter++;
            return {
                method: 'POST',
                path: `${payInstance(server)}/v1/pay/gateway/deposit`,
                headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.payers[n % tokens.payers.length]}`, 'idempotency-key': `bench-${n}` },
                body: JSON.stringify({ provider_id: 'sandbox', asset: 'USD', amount: 1000 })
            };
        }
    };
};


internals.load = async function (server, request, seconds) {

    const cpu = Time.cpu(server.pid);
    const result = await Autocannon({
        url: server.url,
        connections: internals.connections,
        duration: seconds,
        requests: [{ setupRequest: (base) => ({ ...base, ...request(server) }) }]
    });

    return { rate: result['2xx'] / seconds, failed: result.requests.total - result['2xx'], cpuUs: (Time.cpu(server.pid) - cpu) / (result.requests.total || 1) };
};


internals.throughput = async function (Localgate, dist) {

    const secret = randomBytes(32).toString('hex');
    const servers = {};
    try {
        servers.before = await Time.start('before', Time.buildBaseline(internals.baseline), secret);
        servers.now = await Time.start('now', dist, secret);
        const tokens = {
            writer: Localgate.mintToken(secret, 'bench-writer', 24 * 3600),
            admin: Localgate.mintToken(secret, 'bench-admin', 24 * 3600, { admin: true }),
            payers: Array.from({ length: 100 }, (_, i) => Localgate.mintToken(secret, `payer-${i}`, 24 * 3600))
        };

        const paths = new Map();
        for (const server of Object.values(servers)) {
            const res = await fetch(`${server.url}/_instances`, { method: 'POST', headers: { authorization: `Bearer ${tokens.admin}`, 'content-type': 'application/json' }, body: JSON.stringify({ pay: true, seed: 'none' }) });
            if (res.status !== 201) {
                throw new Error(`${server.name}: POST /_instances ${res.status} ${await res.text()}`);
            }

            paths.set(server.url, (await res.json()).base_path);
        }

        const requests = internals.requests(tokens, (server) => paths.get(server.url));
        const figures = {};
        for (const [name, request] of Object.entries(requests)) {
            for (const server of Object.values(servers)) {
                await internals.load(server, request, 1);
            }

            const rounds = [];
            for (let i = 0; i < internals.throughputRounds; ++i) {
                const round = {};
                for (const target of i % 2 ? ['now', 'before'] : ['before', 'now']) {
                    round[target] = await internals.load(servers[target], request, internals.seconds);
                }

                rounds.push(round);
            }

            figures[name] = {
                before: internals.median(rounds.map((round) => round.before.rate)),
                now: internals.median(rounds.map((round) => round.now.rate)),
                ratios: rounds.map((round) => round.now.rate / round.before.rate),
                ratio: internals.median(rounds.map((round) => round.now.rate / round.before.rate)),
                cpuBefore: internals.median(rounds.map((round) => round.before.cpuUs)),
                cpuNow: internals.median(rounds.map((round) => round.now.cpuUs)),
                failed: rounds.reduce((sum, round) => sum + round.before.failed + round.now.failed, 0)
            };
        }

        return figures;
    }
    finally {
        for (const server of Object.values(servers)) {
            server.stop();
        }
    }
};


// The same requests in this process through server.inject, both builds side by side, taking turns: CPU per request.
internals.inProcess = async function (dist) {

    const builds = { before: require(Time.buildBaseline(internals.baseline)), now: require(dist) };
    const secret = randomBytes(32).toString('hex');
    const servers = {};
    const payPaths = {};
    const count = internals.injects;
    let counter = 0;
    try {
        for (const [name, Localgate] of Object.entries(builds)) {
            servers[name] = await Localgate.createServer({ storage: 'memory', logLevel: 'silent', jwtSecret: secret });
            const made = await servers[name].inject({ method: 'POST', url: '/_instances', headers: { authorization: `Bearer ${Localgate.mintToken(secret, 'bench-admin', 3600, { admin: true })}` }, payload: { pay: true, seed: 'none' } });
            if (made.statusCode !== 201) {
                throw new Error(`${name}: POST /_instances ${made.statusCode} ${made.payload}`);
            }

            payPaths[name] = JSON.parse(made.payload).base_path;
        }

        const tokens = Object.fromEntries(Object.entries(builds).map(([name, Localgate]) => [name, {
            writer: `Bearer ${Localgate.mintToken(secret, 'bench-writer', 24 * 3600)}`,
            payers: Array.from({ length: 100 }, (_, i) => `Bearer ${Localgate.mintToken(secret, `payer-${i}`, 24 * 3600)}`)
        }]));

        const requests = {
            'products write': (name) => ({ method: 'POST', url: '/v1/commerce/products', headers: { authorization: tokens[name].writer }, payload: { name: 'Bench loaf', price: 2.5, currency: 'USD', business_id: internals.bakery } }),
            'deposits': (name) => {

                const n = counter++;
                return { method: 'POST', url: `${payPaths[name]}/v1/pay/gateway/deposit`, headers: { authorization: tokens[name].payers[n % 100], 'idempotency-key': `inject-${n}` }, payload: { provider_id: 'sandbox', asset: 'USD', amount: 1000 } };
            }
        };

        const figures = {};
        for (const [scenario, request] of Object.entries(requests)) {
            const turns = { before: [], now: [] };
            for (let i = 0; i < 21; ++i) {
                for (const name of i % 2 ? ['now', 'before'] : ['before', 'now']) {
                    const made = Array.from({ length: count }, () => request(name));
                    const cpu = process.cpuUsage();
                    for (const options of made) {
                        const res = await servers[name].inject(options);
                        if (res.statusCode >= 300) {
                            throw new Error(`${name} ${scenario}: ${res.statusCode} ${res.payload}`);
                        }
                    }

                    const used = process.cpuUsage(cpu);
                    if (i > 0) {
                        turns[name].push((used.user + used.system) / count);
                    }
                }
            }

            const ratios = turns.before.map((before, i) => before / turns.now[i]);
            figures[scenario] = { before: internals.median(turns.before), now: internals.median(turns.now), ratios, ratio: internals.median(ratios) };
        }

        return figures;
    }
    finally {
        for (const server of Object.values(servers)) {
            await server.stop();
        }
    }
};


// 300 deposits whose first attempts reach the receiver but count failed (drop after), then their retries.
internals.duplicates = async function (Testing, { webhookId, deliveryBody }) {

    const kit = await Testing.createTestKit();
    const receiver = await internals.receiver();
    const instance = await kit.instance({ pay: true, seed: 'none', clock: internals.clock });
    try {
        const endpoint = await internals.endpoint(kit, instance, { url: receiver.url, types: ['pay.transaction.created'], retry_schedule: ['1s'] });
        await internals.admin(kit, instance, 'PUT', '/faults', { rules: [{ direction: 'outbound', event: 'pay.transaction.created', drop: 'after', times: internals.deposits }] });
        for (let i = 0; i < internals.deposits; ++i) {
            await internals.deposit(instance, i);
        }

        const flushed = await internals.admin(kit, instance, 'POST', '/webhooks/flush');
        await receiver.waitFor(internals.deposits);
        const firsts = receiver.received.length;
        const moved = await internals.admin(kit, instance, 'PUT', '/clock', { advance: '1s' });
        await receiver.waitFor(2 * internals.deposits, 10_000).catch(() => null);
        // Anything more would come now.
        await new Promise((resolve) => setTimeout(resolve, 500));

        const perId = new Map();
        const events = new Map();
        for (const delivery of receiver.received) {
            const id = internals.header(delivery, 'webhook-id');
            perId.set(id, (perId.get(id) ?? 0) + 1);
            events.set(id, delivery.body);
        }

        const listed = await internals.admin(kit, instance, 'GET', '/events?limit=1000');
        // A webhook-id hashes the body too: the event as listed, its data as stored.
        const expectedIds = new Set(listed.data.map((event) => webhookId(event.id, endpoint.id, deliveryBody({ ...event, data: JSON.stringify(event.data) }))));
        return {
            attempts: receiver.received.length,
            firsts,
            flushed: flushed.attempted,
            retried: moved.attempted,
            ids: perId.size,
            twice: [...perId.values()].filter((n) => n === 2).length,
            expected: [...expectedIds].filter((id) => perId.get(id) === 2).length,
            listed: listed.data.length,
            consistent: [...events].every(([id, body]) => webhookId(JSON.parse(body).id, endpoint.id, body) === id)
        };
    }
    finally {
        await instance.close();
        await receiver.close();
        await kit.close();
    }
};


// The scenario with an endpoint for every type signing on the instance's clock: what the receiver got, in order.
internals.play = async function (kit, scenario, receiver) {

    const instance = await kit.instance({ pay: true, clock: scenario.clock, ids: 'sequential' });
    try {
        await internals.endpoint(kit, instance, { url: receiver.url, secret: internals.secret, signing_clock: 'instance', retry_schedule: ['1s'] });
        receiver.reset();
        for (const step of scenario.steps) {
            if (step.advance !== undefined || step.now !== undefined) {
                await internals.admin(kit, instance, 'PUT', '/clock', step.advance !== undefined ? { advance: step.advance } : { now: step.now });
                continue;
            }

            const headers = { ...(step.as ? instance.auth(step.as) : {}), ...(step.key ? { 'idempotency-key': step.key } : {}) };
            await instance.inject({ method: step.method, url: step.url, headers, payload: step.payload });
            // The first attempt of what the step wrote, before the next step: the order of deliveries is the scenario's.
            await internals.admin(kit, instance, 'POST', '/webhooks/flush');
        }

        await internals.admin(kit, instance, 'POST', '/webhooks/flush');
        return receiver.received.map((delivery) => JSON.stringify(delivery));
    }
    finally {
        await instance.close();
    }
};


internals.determinism = async function (Testing) {

    const scenario = JSON.parse(Fs.readFileSync(internals.scenario, 'utf8'));
    const kit = await Testing.createTestKit();
    const receiver = await internals.receiver();
    try {
        const first = await internals.play(kit, scenario, receiver);
        const signed = receiver.received.filter((delivery) => internals.signatureValid(delivery, internals.secret)).length;
        const second = await internals.play(kit, scenario, receiver);
        const differing = first.filter((delivery, i) => delivery !== second[i]).length + Math.abs(first.length - second.length);
        return {
            steps: scenario.steps.length,
            deliveries: first.length,
            signed,
            bytes: Buffer.byteLength(first.join('\n')),
            identical: differing === 0 && first.length > 0,
            differing,
            sameSet: JSON.stringify([...first].sort()) === JSON.stringify([...second].sort())
        };
    }
    finally {
        await receiver.close();
        await kit.close();
    }
};


// A part that fails is reported as such, and the others still run.
internals.part = async function (name, measure, log) {

    if (internals.parts && !internals.parts.includes(name)) {
        return { error: 'not run (BENCH_EVENTS_PARTS)' };
    }

    try {
        return await measure();
    }
    catch (err) {
        log(`${name}: not measured: ${err.message}`);
        return { error: err.message };
    }
};


/** Measures the six and answers the section of results.md. */
exports.run = async function ({ log = (line) => console.log(line) } = {}) {

    const started = Date.now();
    const dist = Path.join(internals.root, 'dist');
    const Localgate = require(dist);
    const Testing = require(Path.join(dist, 'testing'));

    const figures = {};

    const { webhookId } = require(Path.join(dist, 'outbox'));
    const { deliveryBody } = require(Path.join(dist, 'data-set', 'dispatcher'));

    figures.duplicates = await internals.part('duplicates', () => internals.duplicates(Testing, { webhookId, deliveryBody }), log);
    figures.determinism = await internals.part('determinism', () => internals.determinism(Testing), log);
    log(`duplicates: ${JSON.stringify(figures.duplicates)}`);
    log(`determinism: ${JSON.stringify(figures.determinism)}`);

    figures.rates = await internals.part('rates', () => internals.deliveryRates(Testing), log);
    if (!figures.rates.error) {
        log(`1,000 retries sent by one move: p50 ${figures.rates.burst.p50.toFixed(1)} ms; node:http alone ${figures.rates.floor.p50.toFixed(1)} ms; end to end ${figures.rates.endToEnd.p50.toFixed(1)} ms, writes alone ${figures.rates.writesAlone.p50.toFixed(1)} ms`);
    }

    figures.advance = await internals.part('advance', () => internals.advances(Testing), log);
    if (!figures.advance.error) {
        log(`advance settling 1,000 deposits with their deliveries: p50 ${figures.advance.p50.toFixed(1)} ms (${figures.advance.values.map((ms) => ms.toFixed(0)).join(' ')})`);
    }

    figures.isolation = await internals.part('isolation', () => internals.isolation(Testing), log);
    log(`isolation: ${JSON.stringify(figures.isolation)}`);

    figures.throughput = await internals.part('throughput', () => internals.throughput(Localgate, dist), log);
    for (const [name, figure] of Object.entries(figures.throughput.error ? {} : figures.throughput)) {
        log(`${name}: ${internals.baseline} ${figure.before.toFixed(0)} req/s, now ${figure.now.toFixed(0)} req/s; per round ${figure.ratios.map((ratio) => `${(ratio * 100).toFixed(0)}%`).join(' ')}; CPU per request ${figure.cpuBefore.toFixed(0)} / ${figure.cpuNow.toFixed(0)} µs`);
    }

    figures.inProcess = await internals.part('in-process', () => internals.inProcess(dist), log);
    for (const [name, figure] of Object.entries(figures.inProcess.error ? {} : figures.inProcess)) {
        log(`${name} in process: ${internals.baseline} ${figure.before.toFixed(1)} µs, now ${figure.now.toFixed(1)} µs of CPU per request`);
    }

    return internals.section({ ...figures, seconds: (Date.now() - started) / 1000 });
};


internals.section = function ({ rates, advance, isolation, throughput, inProcess, duplicates, determinism, seconds }) {

    const verdict = (met) => (met ? 'PASS' : 'MISS');
    const failed = (figure) => `not measured: ${figure.error.replaceAll('|', '\\|').slice(0, 300)}`;
    const percent = (value) => `${(value * 100).toFixed(1)}%`;
    const judge = (ratios, ratio) => {

        const spread = internals.percentile(ratios, 0.75) - internals.percentile(ratios, 0.25);
        return spread > 0.1 ? `inconclusive: the middle half of the rounds spans ${Math.round(spread * 100)} points` : verdict(ratio >= 0.95);
    };

    const rate = (ms) => Math.round(internals.writes / ms * 1000).toLocaleString('en');
    const rows = [];
    if (rates.error) {
        rows.push(`| deliveries a second | ${failed(rates)} | ≥ 2,000/s | |`);
    }
    else {
        rows.push(`| 1,000 deliveries to a loopback receiver, sent by one move of a frozen clock (the retries of first attempts a fault dropped before sending), ${rates.burst.values.length} rounds | ${rate(rates.burst.p50)}/s (p50 ${rates.burst.p50.toFixed(1)} ms, ${rates.burst.min.toFixed(1)}–${rates.burst.max.toFixed(1)}) | ≥ 2,000/s | ${verdict(internals.writes / rates.burst.p50 * 1000 >= 2000)} |`);
        rows.push(`| the floor of sending one at a time on this machine: 1,000 POSTs of an event's size by node:http alone to the same receiver, each after the last answered | ${rate(rates.floor.p50)}/s (p50 ${rates.floor.p50.toFixed(1)} ms) | | |`);
        rows.push(`| end to end: 1,000 product writes through \`server.inject\` and their 1,000 deliveries, timed until the receiver holds all | p50 ${rates.endToEnd.p50.toFixed(1)} ms (${rate(rates.endToEnd.p50)} writes and deliveries a second); the same writes with no endpoint ${rates.writesAlone.p50.toFixed(1)} ms | | |`);
    }

    rows.push(advance.error ?
        `| \`advance\` of 1,000 transitions and their deliveries | ${failed(advance)} | p50 ≤ 500 ms | |` :
        `| \`PUT /_instances/{id}/clock {"advance":"3d"}\` applying 1,000 pending bank transfers and sending their 1,000 deliveries, ${advance.values.length} rounds | p50 ${advance.p50.toFixed(1)} ms, p90 ${advance.p90.toFixed(1)} ms (${advance.min.toFixed(1)}–${advance.max.toFixed(1)}) | p50 ≤ 500 ms | ${verdict(advance.p50 <= 500)} |`);

    const n = internals.instances;
    rows.push(isolation.error ?
        `| ${n} instances in parallel | ${failed(isolation)} | 0 seen by another | |` :
        `| ${n} instances × 1,000 product writes at once over HTTP, each with its own stream and endpoint (${isolation.events.toLocaleString('en')} events streamed, ${isolation.deliveries.toLocaleString('en')} delivered; writes ${(isolation.writesMs / 1000).toFixed(1)} s, all read ${(isolation.allMs / 1000).toFixed(1)} s) | another's events seen: ${isolation.foreignEvents}, deliveries: ${isolation.foreignDeliveries}; all of its own streamed ${isolation.completeStreams}/${n}, delivered ${isolation.completeDeliveries}/${n} | 0, and ${n}/${n} | ${verdict(isolation.foreignEvents === 0 && isolation.foreignDeliveries === 0 && isolation.completeStreams === n && isolation.completeDeliveries === n)} |`);

    const d = internals.deposits;
    rows.push(duplicates.error ?
        `| ${d} deposits under \`drop: "after"\` | ${failed(duplicates)} | 600 attempts | |` :
        `| ${d} deposits under an outbound \`drop: "after"\` fault on every first attempt, then the retries | attempts received ${duplicates.attempts} (${duplicates.firsts} first, ${duplicates.retried} retried); webhook-ids received twice ${duplicates.twice} of ${duplicates.ids}; the listed events' ids twice ${duplicates.expected}/${duplicates.listed}${duplicates.consistent ? '' : '; a webhook-id not its event\'s'} | ${2 * d}, each twice, ${d}/${d} | ${verdict(duplicates.attempts === 2 * d && duplicates.twice === d && duplicates.ids === d && duplicates.expected === d && duplicates.consistent)} |`);

    rows.push(determinism.error ?
        `| the scenario played twice | ${failed(determinism)} | byte-identical | |` :
        `| bench/time-scenario.json (${determinism.steps} steps) played twice, sequential ids, \`signing_clock: "instance"\`, an endpoint for every type | ${determinism.identical ? `${determinism.deliveries} deliveries identical (${determinism.bytes.toLocaleString('en')} bytes of method, path, headers and body)` : `${determinism.differing} of ${determinism.deliveries} differ${determinism.sameSet ? ', the same set in another order' : ''}`}; signatures valid ${determinism.signed}/${determinism.deliveries} | byte-identical | ${verdict(determinism.identical && determinism.signed === determinism.deliveries)} |`);

    const lines = [
        '## Events and webhooks: deliveries, isolation and the cost of events',
        '',
        `\`BENCH_ONLY=events npm run bench\`, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${Math.round(seconds)} s; Node ${process.version}, ${Os.cpus().length} cores, load average ${Os.loadavg().map((value) => value.toFixed(1)).join(' / ')} at the end. Receivers: node:http on loopback answering 204.`,
        '',
        '| what | figure | target | |',
        '|---|---|---|---|',
        ...rows,
        ''
    ];

    if (throughput.error) {
        lines.push(`Writes beside commit ${internals.baseline}: ${failed(throughput)}`, '');
    }
    else {
        lines.push(
            `With no endpoint and no subscriber, beside commit ${internals.baseline} (the code before events), servers in memory in processes of their own, ${internals.throughputRounds} rounds of ${internals.seconds} s taking turns, ${internals.connections} connections; deposits through \`sandbox\` on an instance with pay (made completed at once: two events each now):`,
            '',
            `| request | ${internals.baseline} req/s | now req/s | now / before, median (per round %) | CPU µs per request, before / now | CPU speed, before / now | ≥ 95% |`,
            '|---|---|---|---|---|---|---|',
            ...Object.entries(throughput).map(([name, figure]) => `| ${name} | ${Math.round(figure.before).toLocaleString('en')} | ${Math.round(figure.now).toLocaleString('en')} | ${percent(figure.ratio)} (${figure.ratios.map((ratio) => `${Math.round(ratio * 100)}`).join(', ')}) | ${figure.cpuBefore.toFixed(0)} / ${figure.cpuNow.toFixed(0)} | ${percent(figure.cpuBefore / figure.cpuNow)} | ${judge(figure.ratios, figure.ratio)}${figure.failed ? `, ${figure.failed} not 2xx` : ''} |`),
            ''
        );
    }

    if (inProcess.error) {
        lines.push(`In process: ${failed(inProcess)}`, '');
    }
    else {
        lines.push(
            `The same requests in one process through \`server.inject\`, both builds side by side, 20 turns of ${internals.injects.toLocaleString('en')} each taking turns:`,
            '',
            `| request | ${internals.baseline} CPU µs per request (median) | now | speed now / before, median of the turns' ratios (quartiles) | ≥ 95% |`,
            '|---|---|---|---|---|',
            ...Object.entries(inProcess).map(([name, figure]) => `| ${name} | ${figure.before.toFixed(1)} | ${figure.now.toFixed(1)} | ${percent(figure.ratio)} (${percent(internals.percentile(figure.ratios, 0.25))}–${percent(internals.percentile(figure.ratios, 0.75))}) | ${judge(figure.ratios, figure.ratio)} |`),
            ''
        );
    }

    return lines.join('\n');
};


/** Writes the section into results.md: in place of the last one, or before the PostgreSQL section. */
exports.writeSection = (section) => ResultsFile.replaceSection('## Events and webhooks:', section);


if (require.main === module) {
    exports.run().then((section) => {

        exports.writeSection(section);
        process.stdout.write(`\n${section}`);
    }, (err) => {

        console.error(err);
        process.exit(1);
    });
}
