'use strict';

// Builds one benchmark data set: a localgate data directory (created, migrated and demo-seeded by createServer
// itself, then filled with bulk inserts in the stores' column layout) and the same records as a json-server file.

const { randomUUID } = require('node:crypto');
const Fs = require('node:fs');
const Path = require('node:path');

const Localgate = require('../dist');
const LifecycleSql = require('../dist/storage/lifecycle-sql');
const Money = require('../dist/namespaces/commerce/money');


const internals = {
    businesses: 100,
    readerVehicles: 20,
    writerVehicles: 50,
    readerBookings: 1000,
    day: 24 * 3600 * 1000
};


exports.reader = 'bench-reader';

exports.writer = 'bench-writer';


/** Creates dir/{commerce,logistics,weather}.db holding `products` products, and dir/db.json for json-server. */
exports.build = async function (dir, { products, secret }) {

    Fs.mkdirSync(dir, { recursive: true });
    const server = await Localgate.createServer({ dataDir: dir, logLevel: 'silent', jwtSecret: secret });
    // The SQLite engine's default data set hands out its namespace databases (and their connections) for tools like this one.
    const { data } = server.app.localgate;
    const [commerce, logistics] = [data.database('commerce').db, data.database('logistics').db];

    let manifest;
    try {
        manifest = {
            dir,
            products,
            ...internals.fillCommerce(commerce, products),
            ...internals.fillLogistics(logistics)
        };

        const records = {
            businesses: commerce.prepare('SELECT id, name, description, category, city, phone, created_at, scam_report_count FROM businesses ORDER BY created_at, id').all(),
            products: commerce.prepare('SELECT id, name, description, price_minor, currency, business_id, created_by, created_at, scam_report_count FROM products ORDER BY created_at, id').all().map(internals.product),
            locations: logistics.prepare('SELECT id, name, address, city, latitude, longitude, created_at FROM locations ORDER BY created_at, id').all(),
            vehicles: logistics.prepare('SELECT id, make, model, year, seats, daily_rate, currency, is_available, created_at FROM vehicles ORDER BY created_at, id').all()
                .map((vehicle) => ({ ...vehicle, is_available: vehicle.is_available === 1 })),
            // Their status as localgate reads it now (the bookings lie in the past), their metadata parsed.
            bookings: logistics.prepare(`SELECT id, vehicle_id, pickup_location_id, dropoff_location_id, pickup_at, return_at, notes, customer_id, ${LifecycleSql.bookingStatusColumn('@now')}, created_at, metadata FROM bookings ORDER BY created_at, id`).all({ now: new Date().toISOString() })
                .map((booking) => ({ ...booking, metadata: JSON.parse(booking.metadata) }))
        };

        // As json-server itself writes it back after every change.
        manifest.jsonFile = Path.join(dir, 'db.json');
        Fs.writeFileSync(manifest.jsonFile, JSON.stringify(records, null, 2));
    }
    finally {
        await server.stop();
    }

    return manifest;
};


internals.fillCommerce = function (db, products) {

    const existing = db.prepare('SELECT count(*) FROM products').pluck().get();
    if (existing > products) {
        throw new Error(`The demo data already holds ${existing} products, more than the ${products} asked for`);
    }

    const insertBusiness = db.prepare(`INSERT INTO businesses (id, name, description, category, city, phone, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?)`);
    const insertProduct = db.prepare(`INSERT INTO products (id, business_id, name, description, price_minor, currency, created_by, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);

    const businessIds = [];
    const epoch = Date.parse('2024-01-01T00:00:00.000Z');
    db.transaction(() => {

        for (let i = 0; i < internals.businesses; ++i) {
            const id = randomUUID();
            businessIds.push(id);
            insertBusiness.run(id, `Bench shop ${i}`, 'A business made by the benchmark.', 'Bench', 'Benchton', `+1 555 01${String(i).padStart(2, '0')}`, new Date(epoch + i * 1000).toISOString());
        }

        // Products spread round robin over the businesses, each one second after the last: one business holds 1%.
        for (let i = 0; i < products - existing; ++i) {
            insertProduct.run(randomUUID(), businessIds[i % businessIds.length], `Bench product ${i}`, `Product ${i} of the benchmark catalogue, described in one short sentence.`,
                100 + (i * 7919) % 100_000, 'USD', 'bench-seller', new Date(epoch + internals.day + i * 1000).toISOString());
        }
    }).immediate();

    return { businessIds };
};


internals.fillLogistics = function (db) {

    const locationIds = db.prepare('SELECT id FROM locations ORDER BY created_at, id LIMIT 2').pluck().all();
    const insertVehicle = db.prepare(`INSERT INTO vehicles (id, make, model, year, seats, daily_rate, currency, is_available, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?)`);
    const insertBooking = db.prepare(`INSERT INTO bookings (id, vehicle_id, pickup_location_id, dropoff_location_id, pickup_at, return_at, notes, customer_id, status, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'confirmed', ?)`);

    const vehicle = (i) => {

        const id = randomUUID();
        insertVehicle.run(id, 'Benchmark', `Van ${i}`, 2024, 3, 50, 'EUR', new Date(Date.parse('2024-01-01T00:00:00.000Z') + i * 1000).toISOString());
        return id;
    };

    const readerVehicleIds = [];
    const writerVehicleIds = [];
    const epoch = Date.parse('2024-03-01T00:00:00.000Z');
    db.transaction(() => {

        for (let i = 0; i < internals.readerVehicles; ++i) {
            readerVehicleIds.push(vehicle(i));
        }

        // The writes book these, apart from the reader's vehicles, so that every write checks the same amount of history.
        for (let i = 0; i < internals.writerVehicles; ++i) {
            writerVehicleIds.push(vehicle(internals.readerVehicles + i));
        }

        // One day each, back to back on each vehicle: never overlapping.
        for (let i = 0; i < internals.readerBookings; ++i) {
            const slot = Math.floor(i / readerVehicleIds.length);
            const pickup = epoch + slot * internals.day;
            insertBooking.run(randomUUID(), readerVehicleIds[i % readerVehicleIds.length], locationIds[0], locationIds[1],
                new Date(pickup).toISOString(), new Date(pickup + internals.day).toISOString(), '', exports.reader, new Date(epoch - internals.day + i * 1000).toISOString());
        }
    }).immediate();

    return { locationIds, writerVehicleIds };
};


internals.product = function (row) {

    const { price_minor: minor, ...rest } = row;
    return {
        id: rest.id,
        name: rest.name,
        description: rest.description,
        price: Money.fromMinorUnits(minor, rest.currency),
        currency: rest.currency,
        business_id: rest.business_id,
        created_by: rest.created_by,
        created_at: rest.created_at,
        scam_report_count: rest.scam_report_count
    };
};
