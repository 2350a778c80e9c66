import Boom from '@hapi/boom';
import Code from '@hapi/code';
import Hapi, { type Request, type Server, type ServerRoute } from '@hapi/hapi';
import Jwt from '@hapi/jwt';
import Lab from '@hapi/lab';

import { verifyClaims } from '../lib/auth';
import { body, testServer } from './helpers/server';


// What lib/bearer-scheme.ts relies on in hapi and @hapi/jwt beyond their documented API: each test fails when a
// library changes under it.

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


const secret = 'a-secret-of-at-least-thirty-two-bytes-for-hs256';

const nowSec = () => Math.floor(Date.now() / 1000);

// A token signed with the secret: HS256 unless told, claims as given.
function token(payload: Record<string, unknown>, algorithm: 'HS256' | 'HS512' = 'HS256'): string {

    return Jwt.token.generate(payload, { key: secret, algorithm }, { iat: false });
}

// A token that names no algorithm, with no signature.
function unsignedToken(payload: Record<string, unknown>): string {

    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    return `${part({ alg: 'none', typ: 'JWT' })}.${part(payload)}.`;
}


describe('what the bearer scheme relies on', () => {

    let server: Server;

    before(async () => {

        // @hapi/jwt's strategy as lib/auth.ts sets it up, on a bare hapi server.
        server = Hapi.server();
        await server.register(Jwt);
        server.auth.strategy('jwt', 'jwt', {
            keys: { key: secret, algorithms: ['HS256'] },
            verify: verifyClaims,
            validate: (artifacts: { decoded: { payload: { sub: string } } }) => ({ isValid: true, credentials: { sub: artifacts.decoded.payload.sub } })
        });
        server.route({
            method: 'GET',
            path: '/test',
            options: {
                auth: false,
                async handler(request) {

                    try {
                        const { credentials, artifacts } = await request.server.auth.test('jwt', request);
                        return { credentials, payload: (artifacts as { decoded: { payload: unknown } }).decoded.payload };
                    }
                    catch (err) {
                        return { message: (err as Error).message, isMissing: (err as { isMissing?: boolean }).isMissing ?? null };
                    }
                }
            }
        });
        await server.initialize();
    });

    after(() => server.stop());

    const tested = async (authorization: string) => body(await server.inject({ url: '/test', headers: { authorization } }));

    it('hapi\'s server.auth.test answers the jwt strategy\'s credentials, and artifacts that hold the decoded token', async () => {

        const exp = nowSec() + 60;
        expect(await tested(`Bearer ${token({ sub: 'alice', exp })}`)).to.equal({ credentials: { sub: 'alice' }, payload: { sub: 'alice', exp } });
    });

    it('@hapi/jwt reports a token of another algorithm, an unsigned one and another scheme as missing', async () => {

        const claims = { sub: 'alice', exp: nowSec() + 60 };
        const missing = { message: 'Unauthorized', isMissing: true };
        expect(await tested(`Bearer ${token(claims, 'HS512')}`)).to.equal(missing);
        expect(await tested(`Bearer ${unsignedToken(claims)}`)).to.equal(missing);
        expect(await tested(`Basic ${token(claims)}`)).to.equal(missing);
    });

    it('@hapi/jwt checks exp and nbf, within the skew, when the verify options leave them out', async () => {

        expect(await tested(`Bearer ${token({ sub: 'alice', exp: nowSec() - 60 })}`)).to.equal({ message: 'Token expired', isMissing: null });
        expect(await tested(`Bearer ${token({ sub: 'alice', exp: nowSec() + 60, nbf: nowSec() + 60 })}`)).to.equal({ message: 'Token not yet active', isMissing: null });
        expect((await tested(`Bearer ${token({ sub: 'alice', exp: nowSec() - 10, nbf: nowSec() + 10 })}`)).credentials).to.equal({ sub: 'alice' });
    });

    it('Jwt.token.verifyPayload checks a remembered token\'s exp and nbf with the same options', () => {

        const check = (payload: Record<string, unknown>) => {

            return () => Jwt.token.verifyPayload(Jwt.token.decode(token(payload)), verifyClaims);
        };

        expect(check({ sub: 'alice', exp: nowSec() - 60 })).to.throw('Token expired');
        expect(check({ sub: 'alice', exp: nowSec() + 60, nbf: nowSec() + 60 })).to.throw('Token not yet active');
        expect(check({ sub: 'alice', exp: nowSec() - 10, nbf: nowSec() + 10 })).to.not.throw();
    });

    it('hapi leaves an anonymous request to an optional route as the scheme leaves it', async () => {

        const seen = (request: Request) => ({ isAuthenticated: request.auth.isAuthenticated, credentials: request.auth.credentials, strategy: request.auth.strategy, mode: request.auth.mode });
        const route: ServerRoute = { method: 'GET', path: '/anonymous', options: { auth: { mode: 'optional' }, handler: seen } };

        // hapi's own: a scheme that authenticates nobody.
        const bare = Hapi.server();
        bare.auth.scheme('nobody', () => ({ authenticate: (_request, h) => h.unauthenticated(Boom.unauthorized(null, 'Bearer')) }));
        bare.auth.strategy('nobody', 'nobody');
        bare.auth.default('nobody');
        bare.route(route);

        const localgate = await testServer();
        localgate.route(route);

        const hapis = body(await bare.inject('/anonymous'));
        expect(hapis).to.equal({ isAuthenticated: false, credentials: null, strategy: null, mode: 'optional' });
        expect(body(await localgate.inject('/anonymous'))).to.equal(hapis);
        await localgate.stop();
    });
});
