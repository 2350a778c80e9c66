'use strict';

// THE POSTGRESQL FLOOR of the benchmark, not part of the service: the least a Node server can do to answer the
// benchmarked requests from the same PostgreSQL database as localgate. node:http and a `pg` Pool per schema only
// (the pool size, the search_path and the timeouts localgate gives its own), running the stores' own statements:
// the SQL texts and statement names are imported from dist/namespaces/{commerce,logistics}/postgres.js, so this floor
// cannot drift from lib/, and it runs them in the same order, in the same transactions, with the same JSON bodies.
// Left out on purpose, because they are what localgate is measured for: routing, joi validation, signature checks
// (the bearer token's subject is read without verifying it), logging, error mapping, retries.
//
// Usage: node bench/floor-pg.js <postgres url> <port>     (DB_POOL_MAX: connections per schema, 10 by default)

const { randomUUID } = require('node:crypto');
const Http = require('node:http');

const Pg = require('pg');

const Floor = require('./floor');


const internals = {
    digits: new Map(),
    // lib/config.ts's defaults; DB_POOL_MAX as localgate reads it.
    settings: {
        poolMax: Number(process.env.DB_POOL_MAX ?? 10),
        connectTimeoutMs: 5000,
        statementTimeoutMs: 10_000
    }
};


/** The stores' statements, as shipped in dist/ (npm run build): { name, text } under the stores' own keys. */
exports.queries = function () {

    return {
        commerce: require('../dist/namespaces/commerce/postgres').queries,
        logistics: require('../dist/namespaces/logistics/postgres').queries
    };
};


/** The statements the floor runs, by namespace: checked present by bench/run.js before it measures. */
exports.uses = {
    commerce: ['listProductsOfBusiness', 'lockCatalogue', 'productFacts', 'insertProduct'],
    logistics: ['listBookings', 'lockVehicle', 'bookingFacts', 'insertBooking']
};


// lib/storage/postgres/database.ts: one pool per namespace's schema, with the same options.
internals.pool = function (url, schema) {

    const { poolMax, connectTimeoutMs, statementTimeoutMs } = internals.settings;
    const pool = new Pg.Pool({
        connectionString: url,
        max: poolMax,
        connectionTimeoutMillis: connectTimeoutMs,
        statement_timeout: statementTimeoutMs,
        query_timeout: statementTimeoutMs + connectTimeoutMs,
        idle_in_transaction_session_timeout: statementTimeoutMs,
        application_name: `localgate bench floor ${schema}`,
        options: `-c search_path=${schema},public`
    });

    pool.on('error', () => undefined);
    return pool;
};


internals.run = async function (runner, query, ...values) {

    // An insert of a named row orders its own values, as PgDatabase does.
    return (await runner.query({ name: query.name, text: query.text, values: query.values ? query.values(values) : values })).rows;
};


// As PgDatabase.transaction, without the retries (the benchmark's writes never conflict).
internals.transaction = async function (pool, work) {

    const client = await pool.connect();
    try {
        await client.query('BEGIN');
        const result = await work(client);
        await client.query('COMMIT');
        return result;
    }
    catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
    }
    finally {
        client.release();
    }
};


// lib/storage/postgres/pages.ts: the total rides on every row; a page past the end has one row of nulls.
internals.pageOf = function (rows, toRecord = (row) => row) {

    const data = [];
    let total = 0;
    for (const { total: pageTotal, ...row } of rows) {
        total = pageTotal;
        if (row.id !== null) {
            data.push(toRecord(row));
        }
    }

    return { data, total };
};


internals.nextCreatedAt = function (latest, now) {

    const time = now.getTime();
    return new Date(latest ? Math.max(time, Date.parse(latest) + 1) : time).toISOString();
};


internals.commerce = function (pool, sql) {

    return {
        async list(query) {

            const page = Floor.page(query);
            return internals.pageOf(await internals.run(pool, sql.listProductsOfBusiness, page.limit, page.offset, query.business_id), internals.product);
        },
        create(input, createdBy) {

            return internals.transaction(pool, async (client) => {

                await internals.run(client, sql.lockCatalogue);
                const [facts] = await internals.run(client, sql.productFacts, input.business_id);
                if (!facts.business) {
                    throw new Floor.Failure(422, 'business_not_found');
                }

                const [row] = await internals.run(client, sql.insertProduct, {
                    id: randomUUID(), name: input.name, description: input.description ?? '',
                    price_minor: Math.round(input.price * 10 ** Floor.currencyDigits(input.currency)) + 0, currency: input.currency,
                    business_id: input.business_id, created_by: createdBy, created_at: internals.nextCreatedAt(facts.latest, new Date(facts.now))
                });

                return internals.product(row);
            });
        }
    };
};


internals.logistics = function (pool, sql) {

    return {
        async list(query, caller) {

            const page = Floor.page(query);
            // Each booking's status as it reads at now, and its metadata (JSON text) parsed, as localgate answers them.
            return internals.pageOf(await internals.run(pool, sql.listBookings, page.limit, page.offset, caller, new Date().toISOString()), internals.booking);
        },
        create(input, customerId) {

            return internals.transaction(pool, async (client) => {

                const [vehicle] = await internals.run(client, sql.lockVehicle, input.vehicle_id);
                if (!vehicle) {
                    throw new Floor.Failure(422, 'reference_not_found');
                }

                const [facts] = await internals.run(client, sql.bookingFacts, input.pickup_location_id, input.dropoff_location_id, vehicle.id, input.return_at, customerId);
                if (!facts.pickup || !facts.dropoff) {
                    throw new Floor.Failure(422, 'reference_not_found');
                }

                if (!vehicle.is_available) {
                    throw new Floor.Failure(409, 'vehicle_unavailable');
                }

                if (facts.latest_return !== null && facts.latest_return > input.pickup_at) {
                    throw new Floor.Failure(409, 'booking_overlap');
                }

                const [row] = await internals.run(client, sql.insertBooking, {
                    id: randomUUID(), vehicle_id: vehicle.id, pickup_location_id: input.pickup_location_id, dropoff_location_id: input.dropoff_location_id,
                    pickup_at: input.pickup_at, return_at: input.return_at, notes: input.notes ?? '', customer_id: customerId, status: 'confirmed',
                    created_at: internals.nextCreatedAt(facts.latest_created, new Date(facts.now)), metadata: '{}'
                });

                return internals.booking(row);
            });
        }
    };
};


internals.booking = function (row) {

    return { ...row, metadata: JSON.parse(row.metadata) };
};


internals.product = function (row) {

    return {
        id: row.id,
        name: row.name,
        description: row.description,
        price: row.price_minor / 10 ** Floor.currencyDigits(row.currency),
        currency: row.currency,
        business_id: row.business_id,
        created_by: row.created_by,
        created_at: row.created_at,
        scam_report_count: row.scam_report_count
    };
};


internals.handle = async function (stores, req, res, body) {

    const [path, search = ''] = req.url.split('?');
    const query = Object.fromEntries(new URLSearchParams(search));
    const route = `${req.method} ${path}`;
    switch (route) {
        case 'GET /v1/commerce/products': return Floor.list(res, await stores.commerce.list(query));
        case 'GET /v1/logistics/bookings': return Floor.list(res, await stores.logistics.list(query, Floor.caller(req.headers.authorization)));
        case 'POST /v1/commerce/products': {
            const product = await stores.commerce.create(JSON.parse(body), Floor.caller(req.headers.authorization));
            return Floor.send(res, 201, product, { location: `${path}/${product.id}` });
        }

        case 'POST /v1/logistics/bookings': {
            const booking = await stores.logistics.create(JSON.parse(body), Floor.caller(req.headers.authorization));
            return Floor.send(res, 201, booking, { location: `${path}/${booking.id}` });
        }

        default: return Floor.send(res, 404, { statusCode: 404, error: 'Not Found' });
    }
};


/** Serves the four benchmarked endpoints with node:http alone. Products are read for one business (the benchmark's read). */
exports.start = function (url, port) {

    const queries = exports.queries();
    const pools = { commerce: internals.pool(url, 'commerce'), logistics: internals.pool(url, 'logistics') };
    const stores = {
        commerce: internals.commerce(pools.commerce, queries.commerce),
        logistics: internals.logistics(pools.logistics, queries.logistics)
    };

    const server = Http.createServer((req, res) => {

        const chunks = [];
        req.on('data', (chunk) => chunks.push(chunk));
        req.on('end', () => {

            internals.handle(stores, req, res, Buffer.concat(chunks).toString()).catch((err) => {

                Floor.send(res, err.status ?? 500, { statusCode: err.status ?? 500, code: err.message });
            });
        });
    });

    server.listen(port, '127.0.0.1');
    server.pools = pools;
    return server;
};


if (require.main === module) {
    const server = exports.start(process.argv[2], Number(process.argv[3]));
    process.on('SIGTERM', () => {

        server.close(async () => {

            await Promise.all(Object.values(server.pools).map((pool) => pool.end()));
            process.exit(0);
        });
    });
}
