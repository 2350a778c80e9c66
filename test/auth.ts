import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import type { Server } from '@hapi/hapi';
import Jwt from '@hapi/jwt';
import Lab from '@hapi/lab';

import { callerId, existingSecret, mintToken, resolveSecret } from '../lib/auth';
import { SettingError } from '../lib/setting-error';
import { bearer, body, tempDir, testServer } from './helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


// Signs a JWT with node's own HMAC, independently of the library the server uses.
function sign(header: object, payload: object, secret: string): string {

    const encode = (part: object) => Buffer.from(JSON.stringify(part)).toString('base64url');
    const content = `${encode(header)}.${encode(payload)}`;
    const algorithm = (header as { alg: string }).alg === 'HS512' ? 'sha512' : 'sha256';
    return `${content}.${Crypto.createHmac(algorithm, secret).update(content).digest('base64url')}`;
}


describe('bearer tokens', () => {

    let server: Server;
    let secret: string;
    const now = () => Math.floor(Date.now() / 1000);

    before(async () => {

        server = await testServer();
        secret = server.app.localgate.secret;
        server.route([
            { method: 'GET', path: '/test/required', handler: (request) => ({ sub: callerId(request) }) },
            { method: 'GET', path: '/test/optional', options: { auth: { mode: 'optional' }, handler: (request) => ({ authenticated: request.auth.isAuthenticated }) } }
        ]);
    });

    after(async () => {

        await server.stop();
    });

    const get = (path: string, token?: string) => server.inject({ url: path, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });

    it('accepts a minted token and takes the identity from sub', async () => {

        const res = await server.inject({ url: '/test/required', headers: bearer(server, 'alice') });
        expect(res.statusCode).to.equal(200);
        expect(body(res)).to.equal({ sub: 'alice' });
    });

    it('accepts a token signed by another HS256 implementation with the same secret', async () => {

        const token = sign({ alg: 'HS256', typ: 'JWT' }, { sub: 'bob', exp: now() + 60 }, secret);
        const res = await get('/test/required', token);
        expect(res.statusCode).to.equal(200);
        expect(body(res)).to.equal({ sub: 'bob' });
    });

    it('tolerates a small clock skew on exp', async () => {

        const token = sign({ alg: 'HS256', typ: 'JWT' }, { sub: 'carol', exp: now() - 5 }, secret);
        expect((await get('/test/required', token)).statusCode).to.equal(200);
    });

    it('refuses a token it accepted before once the token has expired', async () => {

        const token = sign({ alg: 'HS256', typ: 'JWT' }, { sub: 'dave', exp: now() + 60 }, secret);
        expect((await get('/test/required', token)).statusCode).to.equal(200);
        expect((await get('/test/required', token)).statusCode).to.equal(200);

        const realNow = Date.now;
        Date.now = () => realNow() + 3600 * 1000;
        try {
            const res = await get('/test/required', token);
            expect(res.statusCode).to.equal(401);
            expect(body(res).message).to.equal('Token expired');
        }
        finally {
            Date.now = realNow;
        }
    });

    it('keeps accepting tokens after more distinct tokens than it remembers', { timeout: 20_000 }, async () => {

        const tokens = Array.from({ length: 1001 }, (_, index) => sign({ alg: 'HS256', typ: 'JWT' }, { sub: `caller-${index}`, exp: now() + 60 }, secret));
        for (const token of tokens) {
            expect((await get('/test/required', token)).statusCode).to.equal(200);
        }

        expect(body(await get('/test/required', tokens[0]))).to.equal({ sub: 'caller-0' });
    });

    it('answers 401 with WWW-Authenticate: Bearer when the token is missing', async () => {

        const res = await get('/test/required');
        expect(res.statusCode).to.equal(401);
        expect(res.headers['www-authenticate']).to.equal('Bearer');
        expect(body(res)).to.equal({ statusCode: 401, error: 'Unauthorized', message: 'Missing authentication', code: 'unauthorized' });
    });

    const refused: [string, () => string, RegExp][] = [
        ['a wrong secret', () => sign({ alg: 'HS256', typ: 'JWT' }, { sub: 'eve', exp: now() + 60 }, 'another secret that is long enough!!'), /Invalid token signature/],
        ['an expired token', () => sign({ alg: 'HS256', typ: 'JWT' }, { sub: 'eve', exp: now() - 3600 }, secret), /Token expired/],
        ['a token without exp', () => sign({ alg: 'HS256', typ: 'JWT' }, { sub: 'eve' }, secret), /Token has no expiry \(exp claim\)/],
        ['a token without sub', () => sign({ alg: 'HS256', typ: 'JWT' }, { exp: now() + 60 }, secret), /Token has no subject \(sub claim\)/],
        ['a token with a blank sub', () => sign({ alg: 'HS256', typ: 'JWT' }, { sub: '  ', exp: now() + 60 }, secret), /Token has no subject/],
        ['a token not yet valid', () => sign({ alg: 'HS256', typ: 'JWT' }, { sub: 'eve', exp: now() + 7200, nbf: now() + 3600 }, secret), /Token not yet active/],
        ['alg none', () => `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub: 'eve', exp: now() + 60 })).toString('base64url')}.`, /./],
        ['another algorithm with the same secret', () => sign({ alg: 'HS512', typ: 'JWT' }, { sub: 'eve', exp: now() + 60 }, secret), /./],
        ['a correctly signed token whose header names critical extensions', () => sign({ alg: 'HS256', typ: 'JWT', crit: ['x-unknown'], 'x-unknown': true }, { sub: 'eve', exp: now() + 60 }, secret), /critical extensions \(crit\)/],
        ['a correctly signed token with an empty crit list', () => sign({ alg: 'HS256', typ: 'JWT', crit: [] }, { sub: 'eve', exp: now() + 60 }, secret), /critical extensions/],
        ['garbage', () => 'not.a.token', /Invalid token/]
    ];

    for (const [what, token, message] of refused) {
        it(`refuses ${what} with 401`, async () => {

            const res = await get('/test/required', token());
            expect(res.statusCode).to.equal(401);
            expect(res.headers['www-authenticate'] as string).to.startWith('Bearer');
            expect(body(res)).to.include({ code: 'unauthorized' });
            expect(body(res).message).to.match(message);
        });
    }

    it('refuses a non-bearer authorization header, saying which scheme to use', async () => {

        for (const url of ['/test/required', '/test/optional']) {
            const res = await server.inject({ url, headers: { authorization: 'Basic YWxpY2U6c2VjcmV0' } });
            expect(res.statusCode).to.equal(401);
            expect(body(res)).to.equal({ statusCode: 401, error: 'Unauthorized', message: 'The Authorization header names a scheme other than Bearer: send Authorization: Bearer <token>', code: 'unauthorized' });
        }
    });

    it('reports a token sent without Bearer as a missing scheme, not a missing token', async () => {

        const token = mintToken(secret, 'alice');
        for (const url of ['/test/required', '/test/optional']) {
            const res = await server.inject({ url, headers: { authorization: token } });
            expect(res.statusCode).to.equal(401);
            expect(res.headers['www-authenticate']).to.equal('Bearer error="The Authorization header is missing the scheme: send Authorization: Bearer <token>"');
            expect(body(res)).to.equal({ statusCode: 401, error: 'Unauthorized', message: 'The Authorization header is missing the scheme: send Authorization: Bearer <token>', code: 'unauthorized' });
        }

        expect(body(await server.inject({ url: '/test/required', headers: { authorization: 'bearer  ' + token } }))).to.equal({ sub: 'alice' });
    });

    it('serves optional routes with or without a token, but never with a bad one', async () => {

        expect(body(await get('/test/optional'))).to.equal({ authenticated: false });
        expect(body(await server.inject({ url: '/test/optional', headers: bearer(server, 'alice') }))).to.equal({ authenticated: true });
        expect((await get('/test/optional', 'not.a.token')).statusCode).to.equal(401);
        const expired = sign({ alg: 'HS256', typ: 'JWT' }, { sub: 'eve', exp: now() - 3600 }, secret);
        expect((await get('/test/optional', expired)).statusCode).to.equal(401);
        for (const [what, token] of refused) {
            const res = await get('/test/optional', token());
            expect(res.statusCode, what).to.equal(401);
            expect(res.headers['www-authenticate'] as string).to.startWith('Bearer');
        }
    });

    it('mints tokens that expire after the ttl, an hour by default', () => {

        const decoded = Jwt.token.decode(mintToken(secret, 'dave')).decoded;
        expect(decoded.header.alg).to.equal('HS256');
        expect(decoded.payload.sub).to.equal('dave');
        expect(decoded.payload.exp - decoded.payload.iat).to.equal(3600);
        expect(Jwt.token.decode(mintToken(secret, 'dave', 60)).decoded.payload.exp - now()).to.be.within(58, 60);
    });

    it('mints a token that expired when the ttl is negative, and refuses a ttl of 0 or a fraction', async () => {

        const expired = Jwt.token.decode(mintToken(secret, 'dave', -3600)).decoded.payload;
        expect(expired.exp - expired.iat).to.equal(-3600);
        expect((await get('/test/required', mintToken(secret, 'dave', -3600))).statusCode).to.equal(401);
        expect(() => mintToken(secret, 'dave', 0)).to.throw(RangeError, 'ttlSec must be a whole number of seconds other than 0 (negative for a token that has expired), not 0');
        expect(() => mintToken(secret, 'dave', 1.5)).to.throw(RangeError, /not 1\.5$/);
    });
});


describe('resolveSecret()', () => {

    it('uses the configured secret', () => {

        expect(resolveSecret('s'.repeat(32), '/nowhere', true)).to.equal('s'.repeat(32));
    });

    it('generates a secret in memory when it is not to be kept', () => {

        const dir = Path.join(tempDir(), 'unused');
        const first = resolveSecret(undefined, dir, false);
        // 48 random bytes in base64url.
        expect(first).to.match(/^[\w-]{64}$/);
        expect(resolveSecret(undefined, dir, false)).to.not.equal(first);
        expect(Fs.existsSync(dir)).to.be.false();
    });

    it('keeps a generated secret in DATA_DIR/.jwt-secret, readable by its owner only', () => {

        const dir = Path.join(tempDir(), 'data');
        const first = resolveSecret(undefined, dir, true);
        const file = Path.join(dir, '.jwt-secret');
        expect(Fs.statSync(file).mode & 0o777).to.equal(0o600);
        expect(resolveSecret(undefined, dir, true)).to.equal(first);
        expect(first).to.match(/^[\w-]{64}$/);
    });

    it('refuses a kept secret shorter than 32 bytes, naming the file', () => {

        const dir = tempDir();
        Fs.writeFileSync(Path.join(dir, '.jwt-secret'), 'short\n');
        expect(() => resolveSecret(undefined, dir, true)).to.throw(`AUTH_JWT_SECRET is unset and ${Path.join(dir, '.jwt-secret')} holds a secret shorter than 32 bytes: delete the file to generate a new one`);
        expect(Fs.readdirSync(dir)).to.equal(['.jwt-secret']);
    });

    it('reports a data directory it cannot write to', () => {

        const file = Path.join(tempDir(), 'plain-file');
        Fs.writeFileSync(file, '');
        expect(() => resolveSecret(undefined, file, true)).to.throw(SettingError, `DATA_DIR is not a readable and writable directory: ${file} (EEXIST)`);
        expect(() => resolveSecret(undefined, Path.join(file, 'data'), true)).to.throw(SettingError, /^DATA_DIR .* \(ENOTDIR\)$/);
        // A directory that exists but takes no new file: Linux's /proc.
        expect(() => resolveSecret(undefined, '/proc', true)).to.throw(SettingError, 'DATA_DIR is not a readable and writable directory: /proc (ENOENT)');
    });

    it('blames the token secret\'s folder, not DATA_DIR, when the databases are in memory', () => {

        const file = Path.join(tempDir(), 'plain-file');
        Fs.writeFileSync(file, '');
        const advice = '--memory keeps the databases in memory and the generated token secret there, so that `npx localgate token` in another shell works; run where ./data can be written, name a writable folder with --data-dir, or set AUTH_JWT_SECRET';
        expect(() => resolveSecret(undefined, Path.join(file, 'data'), true, true)).to.throw(`the token secret's folder ${file}/data cannot be created or written (ENOTDIR): ${advice}`);
        expect(() => resolveSecret(undefined, '/proc', true, true)).to.throw(`the token secret's folder /proc cannot be created or written (ENOENT): ${advice}`);
    });
});


describe('existingSecret()', () => {

    it('uses the configured secret, else the one a server kept in the data directory', () => {

        expect(existingSecret('s'.repeat(32), '/nowhere')).to.equal('s'.repeat(32));
        const dir = tempDir();
        const kept = resolveSecret(undefined, dir, true);
        expect(existingSecret(undefined, dir)).to.equal(kept);
    });

    it('never creates a secret: where none is kept it says where it looked and what to do', () => {

        const dir = Path.join(tempDir(), 'elsewhere');
        expect(() => existingSecret(undefined, dir)).to.throw(`found no token secret at ${Path.join(dir, '.jwt-secret')} (ENOENT): start the server with this DATA_DIR first (it keeps its secret there), or set AUTH_JWT_SECRET`);
        expect(Fs.existsSync(dir)).to.be.false();
    });

    it('refuses a kept secret shorter than 32 bytes', () => {

        const dir = tempDir();
        Fs.writeFileSync(Path.join(dir, '.jwt-secret'), 'short\n');
        expect(() => existingSecret(undefined, dir)).to.throw(SettingError, /^AUTH_JWT_SECRET is unset and .* holds a secret shorter than 32 bytes/);
    });
});
