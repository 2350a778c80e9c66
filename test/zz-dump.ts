import Fs from 'node:fs';
import { testServer } from './helpers/server';
(async () => {
    const server = await testServer();
    const res = await server.inject('/openapi.json');
    Fs.writeFileSync(process.argv[2] ?? '/tmp/p5/doc.json', JSON.stringify(JSON.parse(res.payload), null, 2));
    await server.stop();
})();
