'use strict';

const Net = require('node:net');


// A port free on loopback now: the bench's servers and clusters each take one.
exports.freePort = function () {

    return new Promise((resolve, reject) => {

        const server = Net.createServer();
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => {

            const { port } = server.address();
            server.close(() => resolve(port));
        });
    });
};
