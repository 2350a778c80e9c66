'use strict';

// A REFERENCE for the start-up measurement, not part of the service: the least a Node HTTP server does before it can
// answer, to set localgate's start beside. node:http only, answering 200 to anything.
//
// Usage: PORT=<port> node bench/bare.js

const Http = require('node:http');


Http.createServer((req, res) => {

    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"status":"ok"}');
}).listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1');
