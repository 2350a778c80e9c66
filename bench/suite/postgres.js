'use strict';

// The database-per-test targets of the suite benchmark: PostgreSQL with `CREATE DATABASE … TEMPLATE` (as IntegreSQL
// and pgtestdb do), on the machine's cluster and on a throw-away cluster in /dev/shm, and PGlite cloned per test from
// a prepared data directory. Each runs the test's reads and writes with the PostgreSQL stores' own statements,
// imported from dist/ so that they cannot drift, in the stores' transactions.

const ChildProcess = require('node:child_process');
const { randomBytes, randomUUID } = require('node:crypto');
const Fs = require('node:fs');
const Path = require('node:path');

const Pg = require('pg');

const Job = require('./job');


const internals = {
    bin: '/usr/lib/postgresql/15/bin',
    searchPath: '-c search_path=commerce,logistics,public',
    digits: { JPY: 0, KWD: 3 }
};


/** Starts a cluster in memory (initdb under /dev/shm, fsync off), as the postgres user; resolves to { url, stop }. */
exports.memoryCluster = function (port) {

    const dir = Fs.mkdtempSync('/dev/shm/localgate-suite-');
    Fs.chownSync(dir, ...internals.postgresIds());
    const as = (command, args) => ChildProcess.execFileSync('runuser', ['-u', 'postgres', '--', Path.join(internals.bin, command), ...args], { stdio: 'pipe' });
    const stop = () => {

        try {
            as('pg_ctl', ['-D', Path.join(dir, 'data'), '-m', 'immediate', 'stop']);
        }
        catch { }

        Fs.rmSync(dir, { recursive: true, force: true });
    };

    try {
        as('initdb', ['-D', Path.join(dir, 'data'), '-U', 'postgres', '--auth=trust', '--no-sync']);
        // pgtestdb's advice for tests: nothing waits on the disk.
        const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
        as('pg_ctl', ['-D', Path.join(dir, 'data'), '-o', options, '-l', Path.join(dir, 'log'), '-w', 'start']);
    }
    catch (err) {
        stop();
        throw new Error(`the in-memory cluster did not start: ${err.stderr?.toString() || err.message}`);
    }

    return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, dir, stop };
};


internals.postgresIds = function () {

    const line = Fs.readFileSync('/etc/passwd', 'utf8').split('\n').find((entry) => entry.startsWith('postgres:'));
    if (!line) {
        throw new Error('no postgres user on this machine');
    }

    const [, , uid, gid] = line.split(':');
    return [Number(uid), Number(gid)];
};


/** The settings that shape the figures, read from a server. */
exports.describe = async function (url) {

    const client = new Pg.Client({ connectionString: url });
    await client.connect();
    try {
        const settings = {};
        for (const name of ['server_version', 'fsync', 'synchronous_commit', 'full_page_writes', 'shared_buffers', 'data_directory']) {
            settings[name] = (await client.query(`SHOW ${name}`)).rows[0][name];
        }

        return settings;
    }
    finally {
        await client.end();
    }
};


/**
 * Makes a template database on a server: created, then migrated and demo-seeded by a start of localgate itself
 * (start(url) resolves once it answered and was stopped). Resolves to { name, url, drop }.
 */
exports.template = async function (serverUrl, start) {

    const name = `localgate_suite_${randomBytes(5).toString('hex')}`;
    const admin = new Pg.Client({ connectionString: serverUrl });
    admin.on('error', () => undefined);
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = internals.database(serverUrl, name);
    const drop = async () => {

        // A template cannot be dropped until it is one no more.
        await admin.query(`ALTER DATABASE ${name} WITH IS_TEMPLATE false`).catch(() => undefined);
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
        await admin.end();
    };

    try {
        await start(url);
        await admin.query(`ALTER DATABASE ${name} WITH IS_TEMPLATE true`);
    }
    catch (err) {
        await drop();
        throw err;
    }

    return { name, url, admin, drop };
};


internals.database = function (serverUrl, name) {

    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    return url.href;
};


/** A database per test: CREATE DATABASE … TEMPLATE, one connection, the test, DROP DATABASE. */
exports.perTest = function (label, template, serverUrl) {

    let count = 0;
    const admin = new Pg.Client({ connectionString: serverUrl });
    admin.on('error', () => undefined);
    let ended = false;
    return {
        name: label,
        setup() {

            return admin.connect();
        },
        async test() {

            const name = `${template.name}_t${count++}`;
            await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template.name}`);
            const client = new Pg.Client({ connectionString: internals.database(serverUrl, name), options: internals.searchPath });
            try {
                await client.connect();
                return await exports.job((query, values) => client.query({ name: query.name, text: query.text, values }));
            }
            finally {
                await client.end();
                await admin.query(`DROP DATABASE ${name}`);
            }
        },
        teardown() {

            if (!ended) {
                ended = true;
                return admin.end().catch(() => undefined);
            }
        }
    };
};


/** Loads PGlite and its btree_gist extension from the bench's package cache. */
exports.pglite = async function (cache) {

    const { PGlite } = await import(require.resolve('@electric-sql/pglite', { paths: [cache] }));
    const { btree_gist: btreeGist } = await import(require.resolve('@electric-sql/pglite/contrib/btree_gist', { paths: [cache] }));
    return { PGlite, extensions: { btree_gist: btreeGist }, version: require(Path.join(cache, 'node_modules/@electric-sql/pglite/package.json')).version };
};


/** PGlite: a data directory prepared once from a dump of the template, then a new PGlite loading it per test. */
exports.pgliteTarget = function (lib, template) {

    let image;
    return {
        name: 'PGlite, cloned per test from a data directory',
        async setup() {

            // psql's meta-commands (\restrict) are for psql; PGlite runs the SQL only.
            const dump = ChildProcess.execFileSync(Path.join(internals.bin, 'pg_dump'), ['--no-owner', '--no-privileges', '--inserts', '--dbname', template.url], { maxBuffer: 64 * 2 ** 20 }).toString().replace(/^\\.*$/gm, '');
            const db = await lib.PGlite.create({ extensions: lib.extensions });
            await db.exec(dump);
            image = await db.dumpDataDir('none');
            await db.close();
        },
        async test() {

            const db = await lib.PGlite.create({ loadDataDir: image, extensions: lib.extensions });
            try {
                await db.exec('SET search_path = commerce, logistics, public');
                return await exports.job((query, values) => db.query(query.text, values));
            }
            finally {
                await db.close();
            }
        },
        teardown() { }
    };
};


/**
 * The test's steps on one database through run(query, values) -> { rows }, with the stores' statements and
 * transactions (floor-pg's order: lock, facts, insert). Resolves to whether the new booking is on the second page.
 */
exports.job = async function (run) {

    const sql = internals.queries();
    // A query of the stores takes its values as they are, or one row object that its values() puts in order.
    const rows = async (query, ...values) => (await run(query, query.values ? query.values(values) : values)).rows;
    const vehicle = Job.booking.vehicle_id;
    await rows(sql.commerce.listProducts, Job.limit, 0);
    await rows(sql.logistics.listVehicles, Job.limit, 0);
    const before = await rows(sql.logistics.listBookings, Job.limit, 0, Job.caller, new Date().toISOString());

    await run({ text: 'BEGIN' }, []);
    await rows(sql.commerce.lockCatalogue);
    const [productFacts] = await rows(sql.commerce.productFacts, Job.product.business_id);
    if (!productFacts.business) {
        throw new Error('the template lacks the demo businesses');
    }

    await rows(sql.commerce.insertProduct, {
        id: randomUUID(),
        name: Job.product.name,
        description: Job.product.description,
        price_minor: Math.round(Job.product.price * 10 ** (internals.digits[Job.product.currency] ?? 2)),
        currency: Job.product.currency,
        business_id: Job.product.business_id,
        created_by: Job.caller,
        created_at: productFacts.now
    });
    await run({ text: 'COMMIT' }, []);

    await run({ text: 'BEGIN' }, []);
    const [locked] = await rows(sql.logistics.lockVehicle, vehicle);
    const [facts] = await rows(sql.logistics.bookingFacts, Job.booking.pickup_location_id, Job.booking.dropoff_location_id, locked.id, Job.booking.return_at, Job.caller);
    if (!facts.pickup || facts.latest_return !== null && facts.latest_return > Job.booking.pickup_at) {
        throw new Error('the booking was refused');
    }

    const id = randomUUID();
    await rows(sql.logistics.insertBooking, { id, vehicle_id: vehicle, ...Job.booking, notes: '', customer_id: Job.caller, status: 'confirmed', created_at: facts.now, metadata: '{}' });
    await run({ text: 'COMMIT' }, []);

    const after = await rows(sql.logistics.listBookings, Job.limit, 0, Job.caller, new Date().toISOString());
    return after[0].total === before[0].total + 1 && after.some((row) => row.id === id);
};


internals.queries = function () {

    internals.sql ??= {
        commerce: require('../../dist/namespaces/commerce/postgres').queries,
        logistics: require('../../dist/namespaces/logistics/postgres').queries
    };

    return internals.sql;
};
