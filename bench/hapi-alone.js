'use strict';

// A REFERENCE for the benchmark, not part of the service: the floor's operations (bench/floor.js: same SQL, same
// transactions, same JSON) behind a bare hapi server: four routes, no plugins, no validation, no authentication, no
// logging. Its distance from the floor is what hapi itself costs; its distance from localgate is what localgate adds.
//
// Usage: node bench/hapi-alone.js <data dir> <port>

const Hapi = require('@hapi/hapi');

const Floor = require('./floor');


const internals = {};


internals.list = function (h, result) {

    return h.response({ data: result.data, count: result.data.length, total: result.total }).header('X-Total-Count', String(result.total));
};


/** Serves the four benchmarked endpoints with hapi and nothing else. */
exports.start = async function (dataDir, port) {

    const stores = Floor.stores(dataDir);
    const server = Hapi.server({ port, host: '127.0.0.1' });
    server.route([
        {
            method: 'GET',
            path: '/v1/commerce/products',
            handler: (request, h) => internals.list(h, stores.commerce.list(request.query))
        },
        {
            method: 'GET',
            path: '/v1/logistics/bookings',
            handler: (request, h) => internals.list(h, stores.logistics.list(request.query, Floor.caller(request.headers.authorization)))
        },
        {
            method: 'POST',
            path: '/v1/commerce/products',
            handler: (request, h) => {

                const product = stores.commerce.create(request.payload, Floor.caller(request.headers.authorization));
                return h.response(product).code(201).location(`${request.path}/${product.id}`);
            }
        },
        {
            method: 'POST',
            path: '/v1/logistics/bookings',
            handler: (request, h) => {

                const booking = stores.logistics.create(request.payload, Floor.caller(request.headers.authorization));
                return h.response(booking).code(201).location(`${request.path}/${booking.id}`);
            }
        }
    ]);

    await server.start();
    return server;
};


if (require.main === module) {
    exports.start(process.argv[2], Number(process.argv[3])).then((server) => {

        process.on('SIGTERM', () => server.stop().then(() => process.exit(0)));
    });
}
