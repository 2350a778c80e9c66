import Code from '@hapi/code';
import type { Server } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { expectError } from './helpers/errors';
import { bearer, testServer } from './helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


// About 10 KB: far under every size limit, far over any depth a real body has.
const deepBody = '['.repeat(5000) + ']'.repeat(5000);

const json = { 'content-type': 'application/json' };


describe('a body nested too deep', () => {

    let server: Server;

    before(async () => {

        server = await testServer();
    });

    after(async () => {

        await server.stop();
    });

    it('is refused with a 400 and leaves the server answering', async () => {

        const res = await server.inject({ method: 'POST', url: '/v1/commerce/products', headers: { ...bearer(server, 'ann'), ...json }, payload: deepBody });
        expect(expectError(res, 400, 'body_too_deep').message).to.contain('64 levels');
        expect((await server.inject('/health')).statusCode).to.equal(200);
    });
});
