'use strict';

// json-server 0.17 run as its README's "Module" section shows (jsonServer.create, defaults, router on db.json), with
// one custom route added before the router, as that section shows too: POST /__reset writes the master copy over
// db.json and reads it back into the router's database (router.db, lowdb's FileSync, so both are synchronous).
// Usage: node json-server.js <db.json> <master.json> <port>. The suite benchmark runs it as its json-server target.

const Fs = require('node:fs');

const JsonServer = require('json-server');


const [file, masterFile, port] = process.argv.slice(2);
const master = Fs.readFileSync(masterFile);
Fs.writeFileSync(file, master);

const server = JsonServer.create();
const router = JsonServer.router(file);
server.use(JsonServer.defaults({ logger: false }));
server.post('/__reset', (req, res) => {

    Fs.writeFileSync(file, master);
    router.db.read();
    res.json({ reset: true });
});

server.use(router);
server.listen(Number(port), '127.0.0.1', () => console.log(`listening on ${port}`));
