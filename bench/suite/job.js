'use strict';

// The one test every target of the suite benchmark runs: read a product page, a vehicle page and the
// caller's bookings; write a product and a booking; read the bookings again and look for the new one. The records
// come from the demo data set, which every target starts each test from.

const Commerce = require('../../data/demo/commerce.json');
const Logistics = require('../../data/demo/logistics.json');


const vehicle = Logistics.vehicles.find((item) => item.is_available);
const location = Logistics.locations[0];


exports.caller = 'suite-alice';

exports.demo = { commerce: Commerce, logistics: Logistics };

exports.product = {
    name: 'Suite loaf',
    description: 'Written by one test of the suite benchmark',
    price: 4.5,
    currency: 'USD',
    business_id: Commerce.businesses[0].id
};

// Every test books the same slot: each starts from a fresh world, so the slot is always free.
exports.booking = {
    vehicle_id: vehicle.id,
    pickup_location_id: location.id,
    dropoff_location_id: location.id,
    pickup_at: '2030-06-01T10:00:00.000Z',
    return_at: '2030-06-03T10:00:00.000Z'
};

exports.limit = 20;


/**
 * Runs the steps of one test on localgate's API through send(method, path, body, auth) -> { status, body }, inside a
 * world already made. Resolves to whether the second bookings page holds the new booking.
 */
exports.localgate = async function (send) {

    exports.expect(await send('GET', `/v1/commerce/products?limit=${exports.limit}`), 200);
    exports.expect(await send('GET', `/v1/logistics/vehicles?limit=${exports.limit}`), 200);
    const before = exports.expect(await send('GET', `/v1/logistics/bookings?limit=${exports.limit}`, undefined, true), 200);
    exports.expect(await send('POST', '/v1/commerce/products', exports.product, true), 201);
    const booking = exports.expect(await send('POST', '/v1/logistics/bookings', exports.booking, true), 201);
    const after = exports.expect(await send('GET', `/v1/logistics/bookings?limit=${exports.limit}`, undefined, true), 200);
    return after.total === before.total + 1 && after.data.some((item) => item.id === booking.id);
};


/** Returns the parsed body of a response with the expected status; throws with the body otherwise. */
exports.expect = function (res, status) {

    if (res.status !== status) {
        throw new Error(`expected ${status}, got ${res.status}: ${typeof res.body === 'string' ? res.body : JSON.stringify(res.body)}`.slice(0, 500));
    }

    return typeof res.body === 'string' && res.body.length ? JSON.parse(res.body) : res.body;
};
