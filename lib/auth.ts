import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Boom from '@hapi/boom';
import type { Plugin, Request } from '@hapi/hapi';
import Jwt from '@hapi/jwt';

import { minSecretBytes, SettingError } from './config';
import { memory } from './db';


export const strategy = 'bearer';

const secretFile = '.jwt-secret';

// Tolerated difference between the clocks of the token's minter and this server.
const clockSkewSec = 30;


/** The HS256 secret: the configured one, else one generated once and kept in the data directory (or in memory). */
export function resolveSecret(configured: string | undefined, dataDir: string): string {

    if (configured) {
        return configured;
    }

    const generated = Crypto.randomBytes(48).toString('base64url');
    if (dataDir === memory) {
        return generated;
    }

    const file = Path.join(dataDir, secretFile);
    try {
        Fs.writeFileSync(file, generated + '\n', { mode: 0o600, flag: 'wx' });
    }
    catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
            throw err;
        }
    }

    const secret = Fs.readFileSync(file, 'utf8').trim();
    if (Buffer.byteLength(secret, 'utf8') < minSecretBytes) {
        throw new SettingError('AUTH_JWT_SECRET', `is unset and ${file} holds a secret shorter than ${minSecretBytes} bytes: delete the file to generate a new one`);
    }

    return secret;
}


/** Signs a token for a subject that expires after ttlSec seconds. */
export function mintToken(secret: string, subject: string, ttlSec = 3600): string {

    return Jwt.token.generate({ sub: subject }, { key: secret, algorithm: 'HS256' }, { ttlSec });
}


/** The verified identity of the caller; only call on routes whose auth guarantees a token. */
export function callerId(request: Request): string {

    return request.auth.credentials.sub as string;
}


export const authPlugin: Plugin<{ secret: string }> = {
    name: 'localgate-auth',
    async register(server, options) {

        await server.register(Jwt);

        server.auth.strategy(strategy, 'jwt', {
            keys: { key: options.secret, algorithms: ['HS256'] },
            verify: { aud: false, iss: false, sub: false, nbf: true, exp: true, timeSkewSec: clockSkewSec },
            httpAuthScheme: 'Bearer',
            validate(artifacts: { decoded: { payload: Record<string, unknown> } }) {

                const { sub, exp } = artifacts.decoded.payload;
                if (typeof exp !== 'number') {
                    throw new Error('Token has no expiry (exp claim)');
                }

                if (typeof sub !== 'string' || !sub.trim()) {
                    throw new Error('Token has no subject (sub claim)');
                }

                return { isValid: true, credentials: { sub } };
            }
        });

        // Secure by default: a route is public or optional only when it says so.
        server.auth.default({ strategy, mode: 'required' });

        // @hapi/jwt reports a token of a refused algorithm (alg none, HS512) as missing, which an optional route would
        // accept anonymously: a credential that is present but not accepted is a 401, never a silent downgrade.
        server.ext('onPostAuth', (request, h) => {

            if (request.auth.mode === 'optional' && !request.auth.isAuthenticated && request.headers.authorization !== undefined) {
                throw Boom.unauthorized('Invalid token', 'Bearer');
            }

            return h.continue;
        });
    }
};
