import Code from '@hapi/code';
import type { Server } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { engineServer, engines } from './helpers/postgres';
import { body } from './helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


for (const engine of engines) {
    describe(`weather (${engine})`, () => {

        let server: Server;

        before(async () => {

            server = await engineServer(engine);
        });

        after(async () => {

            await server.stop();
        });

        it('reports the namespace as not configured', async () => {

            const res = await server.inject('/v1/weather/status');
            expect(res.statusCode).to.equal(200);
            expect(body(res)).to.equal({
                configured: false,
                namespace: '/v1/weather',
                detail: 'No weather backend is provisioned for this environment: forecasts, alerts and seasonal outlooks are not available yet'
            });
        });

        it('answers 501 for forecasts with a body that says why', async () => {

            const res = await server.inject('/v1/weather/forecast');
            expect(res.statusCode).to.equal(501);
            expect(body(res)).to.include({ statusCode: 501, code: 'weather_not_provisioned', configured: false });
            expect(body(res).message).to.contain('not available');
        });
    });
}
