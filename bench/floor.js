'use strict';

// THE FLOOR of the benchmark, not part of the service: the least a Node server can do to answer the benchmarked
// requests from the same SQLite files. node:http and better-sqlite3 only; the stores' SQL copied verbatim (bench/run.js
// refuses to run when it no longer matches lib/), the same pragmas, the same transactions, the same JSON bodies.
// Left out on purpose, because they are what localgate is measured for: routing, joi validation, signature checks
// (the bearer token's subject is read without verifying it), logging, error mapping.
//
// Usage: node bench/floor.js <data dir> <port>

const { randomUUID } = require('node:crypto');
const Http = require('node:http');
const Path = require('node:path');

const Sqlite = require('better-sqlite3');


const internals = {
    productColumns: 'id, name, description, price_minor, currency, business_id, created_by, created_at, scam_report_count',
    vehicleColumns: 'id, make, model, year, seats, daily_rate, currency, is_available, created_at',
    digits: new Map()
};


// Copied from lib/namespaces/<namespace>/sqlite.ts, under the same names as there.
exports.sql = {
    commerce: {
        listProducts: `SELECT ${internals.productColumns} FROM products ORDER BY created_at, id LIMIT +@limit OFFSET +@offset`,
        listProductsOfBusiness: `SELECT ${internals.productColumns} FROM products WHERE business_id = @business_id ORDER BY created_at, id LIMIT +@limit OFFSET +@offset`,
        countProducts: 'SELECT products AS total FROM catalogue_totals WHERE id = 1',
        countProductsOfBusiness: 'SELECT coalesce((SELECT product_count FROM businesses WHERE id = ?), 0) AS total',
        latestProduct: 'SELECT max(created_at) AS latest FROM products',
        product: `SELECT ${internals.productColumns} FROM products WHERE id = ?`,
        insertProduct: `INSERT INTO products (id, name, description, price_minor, currency, business_id, created_by, created_at)
        VALUES (@id, @name, @description, @price_minor, @currency, @business_id, @created_by, @created_at)`,
        businessExists: 'SELECT 1 AS found FROM businesses WHERE id = ?'
    },
    logistics: {
        vehicleById: `SELECT ${internals.vehicleColumns} FROM vehicles WHERE id = @id`,
        locationExists: 'SELECT 1 FROM locations WHERE id = @id',
        listBookings: `SELECT id, vehicle_id, pickup_location_id, dropoff_location_id, pickup_at, return_at, notes, customer_id, CASE
        WHEN status IN ('cancelled', 'completed') THEN status
        WHEN return_at <= @now THEN 'completed'
        WHEN status = 'active' OR pickup_at <= @now THEN 'active'
        ELSE 'confirmed'
    END AS status, created_at, metadata FROM bookings WHERE customer_id = @customer_id ORDER BY created_at, id LIMIT +@limit OFFSET +@offset`,
        bookingById: `SELECT id, vehicle_id, pickup_location_id, dropoff_location_id, pickup_at, return_at, notes, customer_id, CASE
        WHEN status IN ('cancelled', 'completed') THEN status
        WHEN return_at <= @now THEN 'completed'
        WHEN status = 'active' OR pickup_at <= @now THEN 'active'
        ELSE 'confirmed'
    END AS status, created_at, metadata FROM bookings WHERE id = @id AND customer_id = @customer_id`,
        countBookings: 'SELECT bookings FROM customer_booking_counts WHERE customer_id = @customer_id',
        latestBookingOfCustomer: 'SELECT created_at FROM bookings WHERE customer_id = @customer_id ORDER BY created_at DESC, id DESC LIMIT 1',
        latestBookingBefore: `SELECT return_at FROM bookings
        WHERE vehicle_id = @vehicle_id AND status <> 'cancelled' AND pickup_at < @return_at
        ORDER BY pickup_at DESC LIMIT 1`,
        insertBooking: `INSERT INTO bookings (id, vehicle_id, pickup_location_id, dropoff_location_id, pickup_at, return_at, notes, customer_id, status, created_at, metadata)
        VALUES (@id, @vehicle_id, @pickup_location_id, @dropoff_location_id, @pickup_at, @return_at, @notes, @customer_id, @status, @created_at, @metadata)`
    }
};


internals.open = function (file) {

    // lib/storage/sqlite/open.ts: the same pragmas in the same order.
    const db = new Sqlite(file, { fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma('trusted_schema = OFF');
    return db;
};


// A booking row as the API answers it: its metadata parsed.
internals.booking = function (row) {

    return { ...row, metadata: JSON.parse(row.metadata) };
};


internals.prepare = function (db, queries) {

    const statements = {};
    for (const [name, sql] of Object.entries(queries)) {
        statements[name] = db.prepare(sql);
    }

    return statements;
};


exports.Failure = class extends Error {

    constructor(status, code) {

        super(code);
        this.status = status;
    }
};


internals.commerce = function (db) {

    const sql = internals.prepare(db, exports.sql.commerce);
    // As the store reads product rows: arrays in column order.
    for (const name of ['listProducts', 'listProductsOfBusiness', 'product']) {
        sql[name].raw();
    }

    const readProducts = db.transaction((businessId, page) => {

        const rows = businessId === undefined ? sql.listProducts.all(page) : sql.listProductsOfBusiness.all({ ...page, business_id: businessId });
        const { total } = businessId === undefined ? sql.countProducts.get() : sql.countProductsOfBusiness.get(businessId);
        return { data: rows.map(internals.product), total };
    });

    const insertProduct = db.transaction((input, createdBy) => {

        if (!sql.businessExists.get(input.business_id)) {
            throw new exports.Failure(422, 'business_not_found');
        }

        const id = randomUUID();
        const latest = sql.latestProduct.get().latest;
        sql.insertProduct.run({
            id,
            name: input.name,
            description: input.description ?? '',
            price_minor: Math.round(input.price * 10 ** exports.currencyDigits(input.currency)) + 0,
            currency: input.currency,
            business_id: input.business_id,
            created_by: createdBy,
            created_at: new Date(latest ? Math.max(Date.now(), Date.parse(latest) + 1) : Date.now()).toISOString()
        });

        return sql.product.get(id);
    });

    return {
        list(query) {

            return readProducts.deferred(query.business_id, exports.page(query));
        },
        create(input, caller) {

            return internals.product(insertProduct.immediate(input, caller));
        }
    };
};


internals.logistics = function (db) {

    const sql = internals.prepare(db, exports.sql.logistics);
    const readBookings = db.transaction((customerId, page) => ({
        // A booking's metadata is stored as the JSON text of an object, and answered as the object.
        data: sql.listBookings.all({ ...page, customer_id: customerId, now: new Date().toISOString() }).map(internals.booking),
        total: sql.countBookings.pluck().get({ customer_id: customerId }) ?? 0
    }));

    const book = db.transaction((customerId, input) => {

        const vehicle = sql.vehicleById.get({ id: input.vehicle_id });
        if (!vehicle) {
            throw new exports.Failure(422, 'reference_not_found');
        }

        for (const field of ['pickup_location_id', 'dropoff_location_id']) {
            if (!sql.locationExists.get({ id: input[field] })) {
                throw new exports.Failure(422, 'reference_not_found');
            }
        }

        if (!vehicle.is_available) {
            throw new exports.Failure(409, 'vehicle_unavailable');
        }

        const booking = { notes: '', ...input };
        const latestReturn = sql.latestBookingBefore.pluck().get(booking);
        if (latestReturn !== undefined && latestReturn > booking.pickup_at) {
            throw new exports.Failure(409, 'booking_overlap');
        }

        const latest = sql.latestBookingOfCustomer.pluck().get({ customer_id: customerId });
        const id = randomUUID();
        sql.insertBooking.run({
            id,
            ...booking,
            customer_id: customerId,
            status: 'confirmed',
            created_at: new Date(latest ? Math.max(Date.now(), Date.parse(latest) + 1) : Date.now()).toISOString(),
            metadata: '{}'
        });

        return internals.booking(sql.bookingById.get({ id, customer_id: customerId, now: new Date().toISOString() }));
    });

    return {
        list(query, caller) {

            return readBookings.deferred(caller, exports.page(query));
        },
        create(input, caller) {

            return book.immediate(caller, input);
        }
    };
};


exports.page = function (query) {

    return { limit: Number(query.limit ?? 20), offset: Number(query.offset ?? 0) };
};


internals.product = function ([id, name, description, priceMinor, currency, businessId, createdBy, createdAt, scamReportCount]) {

    return {
        id,
        name,
        description,
        price: priceMinor / 10 ** exports.currencyDigits(currency),
        currency,
        business_id: businessId,
        created_by: createdBy,
        created_at: createdAt,
        scam_report_count: scamReportCount
    };
};


exports.currencyDigits = function (currency) {

    let digits = internals.digits.get(currency);
    if (digits === undefined) {
        digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits;
        internals.digits.set(currency, digits);
    }

    return digits;
};


/** The subject of a bearer token, trusted as it is: the floor does not check signatures. */
exports.caller = function (authorization = '') {

    const token = authorization.slice('Bearer '.length);
    return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString() || '{}').sub;
};


/** The benchmarked operations over the data directory's databases, with the stores' SQL and transactions. */
exports.stores = function (dataDir) {

    return {
        commerce: internals.commerce(internals.open(Path.join(dataDir, 'commerce.db'))),
        logistics: internals.logistics(internals.open(Path.join(dataDir, 'logistics.db')))
    };
};


exports.send = function (res, status, body, headers = {}) {

    const payload = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(payload), ...headers });
    res.end(payload);
};


exports.list = function (res, result) {

    exports.send(res, 200, { data: result.data, count: result.data.length, total: result.total }, { 'x-total-count': String(result.total) });
};


internals.handle = function (stores, req, res, body) {

    const [path, search = ''] = req.url.split('?');
    const query = Object.fromEntries(new URLSearchParams(search));
    const route = `${req.method} ${path}`;
    switch (route) {
        case 'GET /v1/commerce/products': return exports.list(res, stores.commerce.list(query));
        case 'GET /v1/logistics/bookings': return exports.list(res, stores.logistics.list(query, exports.caller(req.headers.authorization)));
        case 'POST /v1/commerce/products': {
            const product = stores.commerce.create(JSON.parse(body), exports.caller(req.headers.authorization));
            return exports.send(res, 201, product, { location: `${path}/${product.id}` });
        }

        case 'POST /v1/logistics/bookings': {
            const booking = stores.logistics.create(JSON.parse(body), exports.caller(req.headers.authorization));
            return exports.send(res, 201, booking, { location: `${path}/${booking.id}` });
        }

        default: return exports.send(res, 404, { statusCode: 404, error: 'Not Found' });
    }
};


/** Serves the four benchmarked endpoints with node:http alone. */
exports.start = function (dataDir, port) {

    const stores = exports.stores(dataDir);
    const server = Http.createServer((req, res) => {

        const chunks = [];
        req.on('data', (chunk) => chunks.push(chunk));
        req.on('end', () => {

            try {
                internals.handle(stores, req, res, Buffer.concat(chunks).toString());
            }
            catch (err) {
                exports.send(res, err.status ?? 500, { statusCode: err.status ?? 500, code: err.message });
            }
        });
    });

    server.listen(port, '127.0.0.1');
    return server;
};


if (require.main === module) {
    const server = exports.start(process.argv[2], Number(process.argv[3]));
    process.on('SIGTERM', () => server.close(() => process.exit(0)));
}
