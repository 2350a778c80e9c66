'use strict';

// localgate's three targets of the suite benchmark: the kit in process, and one `localgate start` driven over HTTP
// from Node (a keep-alive agent) and from Python (urllib, the standard library), an instance per test.

const ChildProcess = require('node:child_process');
const Http = require('node:http');
const Path = require('node:path');
const Readline = require('node:readline');

const Job = require('./job');


const internals = {};


/** The kit as a TypeScript suite uses it: one server for the suite, createTestKit().instance() per test. */
exports.kit = function () {

    let kit;
    return {
        name: 'localgate kit, in process (inject)',
        async setup() {

            kit = await require('../../dist/testing').createTestKit();
        },
        async test() {

            const t = await kit.instance();
            const auth = t.auth(Job.caller);
            try {
                return await Job.localgate(async (method, url, payload, authed) => {

                    const res = await t.inject({ method, url, payload, headers: authed ? auth : {} });
                    return { status: res.statusCode, body: res.payload };
                });
            }
            finally {
                await t.close();
            }
        },
        teardown() {

            return kit?.close();
        }
    };
};


/** One `localgate start` (a server started by the orchestrator), driven over HTTP from Node with a keep-alive agent. */
exports.http = function (server) {

    let agent;
    return {
        name: 'localgate over HTTP from Node (keep-alive)',
        setup() { },
        async test() {

            // Kept alive within the test, as for every HTTP target: a connection left idle between tests may be closed.
            agent?.destroy();
            agent = new Http.Agent({ keepAlive: true, maxSockets: 1 });
            const created = Job.expect(await internals.send(agent, server.url, 'POST', '/_instances', { seed: 'demo' }, server.admin), 201);
            try {
                return await Job.localgate((method, path, body, authed) => internals.send(agent, server.url, method, `${created.base_path}${path}`, body, authed ? server.caller : undefined));
            }
            finally {
                Job.expect(await internals.send(agent, server.url, 'DELETE', `/_instances/${created.id}`, undefined, server.admin), 204);
            }
        },
        teardown() {

            agent?.destroy();
        }
    };
};


/** The same server driven by bench/suite/suite.py: Python's standard library, a new connection per request. */
exports.python = function (server) {

    const env = { ...process.env, SUITE_JOB: JSON.stringify({ product: Job.product, booking: Job.booking, limit: Job.limit }) };
    const spawn = () => ChildProcess.spawn('python3', [Path.join(__dirname, 'suite.py'), server.url, server.secret, Job.caller], { stdio: ['pipe', 'pipe', 'inherit'], env });

    return internals.child('localgate over HTTP from Python (urllib)', 'suite.py', spawn);
};


/** A Node target of this file (kit, http) run in a process of its own by bench/suite/child.js. */
exports.inProcessOfItsOwn = function (name, factory, argument) {

    const spawn = () => ChildProcess.spawn(process.execPath, [Path.join(__dirname, 'child.js'), factory, JSON.stringify(argument ?? null)], { stdio: ['pipe', 'pipe', 'inherit'] });

    return internals.child(name, factory, spawn);
};


// A target in a child process that answers "run" lines with {"ms", "found"}: it times its own test, so that the
// pipe to it is not counted.
internals.child = function (name, what, spawn) {

    let child;
    let lines;
    return {
        name,
        async setup() {

            child = spawn();
            lines = Readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
            const ready = await lines.next();
            if (ready.done || ready.value !== 'ready') {
                throw new Error(`${what} did not start: ${ready.value}`);
            }
        },
        async test() {

            child.stdin.write('run\n');
            const line = await lines.next();
            if (line.done) {
                throw new Error(`${what} exited`);
            }

            const result = JSON.parse(line.value);
            if (result.error) {
                throw new Error(`${what}: ${result.error}`);
            }

            return result;
        },
        teardown() {

            child?.stdin.end();
            return child && child.exitCode === null ? new Promise((resolve) => child.once('exit', resolve)) : undefined;
        }
    };
};


/** Python's version, to report beside the targets. */
exports.pythonVersion = function () {

    return ChildProcess.execFileSync('python3', ['--version']).toString().trim();
};


internals.send = function (agent, base, method, path, body, token) {

    return new Promise((resolve, reject) => {

        const headers = {};
        if (token) {
            headers.authorization = `Bearer ${token}`;
        }

        let payload;
        if (body !== undefined) {
            payload = JSON.stringify(body);
            headers['content-type'] = 'application/json';
            headers['content-length'] = Buffer.byteLength(payload);
        }

        const req = Http.request(`${base}${path}`, { method, headers, agent }, (res) => {

            const chunks = [];
            res.on('data', (chunk) => chunks.push(chunk));
            res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
        });

        req.once('error', reject);
        req.end(payload);
    });
};

exports.send = internals.send;
