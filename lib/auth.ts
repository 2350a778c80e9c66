import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import type { Plugin, Request, ResponseToolkit } from '@hapi/hapi';
import Jwt from '@hapi/jwt';

import { bearerScheme, type VerifyClaims } from './bearer-scheme';
import { errnoCode } from './errno';
import { minSecretBytes, SettingError } from './setting-error';
import { failure } from './errors';


export const strategy = 'bearer';

const secretFile = '.jwt-secret';

// Tolerated difference between the clocks of the token's minter and this server.
const clockSkewSec = 30;


/** The HS256 secret: the configured one, else one generated once and kept in the data directory (or, when not kept, in memory). */
export function resolveSecret(configured: string | undefined, dataDir: string, keep: boolean, inMemory = false): string {

    if (configured) {
        return configured;
    }

    const generated = Crypto.randomBytes(48).toString('base64url');
    if (!keep) {
        return generated;
    }

    try {
        Fs.mkdirSync(dataDir, { recursive: true });
    }
    catch (err) {
        throw unwritableSecretDir(dataDir, err, inMemory);
    }

    const file = Path.join(dataDir, secretFile);
    try {
        Fs.writeFileSync(file, generated + '\n', { mode: 0o600, flag: 'wx' });
    }
    catch (err) {
        if (errnoCode(err) !== 'EEXIST') {
            throw unwritableSecretDir(dataDir, err, inMemory);
        }
    }

    return keptSecret(file, Fs.readFileSync(file, 'utf8'));
}


// One line naming the folder the secret cannot be kept in: DATA_DIR's, or in memory the folder kept for the secret alone.
function unwritableSecretDir(dataDir: string, err: unknown, inMemory: boolean): Error {

    const code = errnoCode(err);
    if (!inMemory) {
        return new SettingError('DATA_DIR', `is not a readable and writable directory: ${dataDir} (${code})`);
    }

    return new Error(`the token secret's folder ${Path.resolve(dataDir)} cannot be created or written (${code}): --memory keeps the databases in memory and the generated token secret there, so that \`npx localgate token\` in another shell works; run where ./data can be written, name a writable folder with --data-dir, or set AUTH_JWT_SECRET`);
}


/** The secret a server started on the data directory signs with: the configured one, else the kept one; never creates one. */
export function existingSecret(configured: string | undefined, dataDir: string): string {

    if (configured) {
        return configured;
    }

    // A new secret here would sign tokens that the server, which keeps its own elsewhere, refuses.
    const file = Path.resolve(dataDir, secretFile);
    let text: string;
    try {
        text = Fs.readFileSync(file, 'utf8');
    }
    catch (err) {
        throw new Error(`found no token secret at ${file} (${errnoCode(err)}): start the server with this DATA_DIR first (it keeps its secret there), or set AUTH_JWT_SECRET`);
    }

    return keptSecret(file, text);
}


function keptSecret(file: string, text: string): string {

    const secret = text.trim();
    if (Buffer.byteLength(secret, 'utf8') < minSecretBytes) {
        throw new SettingError('AUTH_JWT_SECRET', `is unset and ${file} holds a secret shorter than ${minSecretBytes} bytes: delete the file to generate a new one`);
    }

    return secret;
}


/** The role claim of a token that may use the admin routes (/_instances). */
export const adminRole = 'admin';

/**
 * Signs a token for a subject that expires after ttlSec whole seconds, or (negative) expired that long ago; 0 throws.
 * An admin token carries the claim role: "admin".
 */
export function mintToken(secret: string, subject: string, ttlSec = 3600, options: { admin?: boolean } = {}): string {

    // @hapi/jwt leaves exp out for a ttl of 0, and the server refuses every token without exp.
    if (!Number.isSafeInteger(ttlSec) || ttlSec === 0) {
        throw new RangeError(`ttlSec must be a whole number of seconds other than 0 (negative for a token that has expired), not ${ttlSec}`);
    }

    return Jwt.token.generate(options.admin ? { sub: subject, role: adminRole } : { sub: subject }, { key: secret, algorithm: 'HS256' }, { ttlSec });
}


export const adminMessage = `This route needs a token whose role claim is "${adminRole}": mint one with npx localgate token --admin`;


/** The admin routes' step right after authentication, before anything of the request is validated: a token whose role claim is admin, else a 403 admin_required. */
export function requireAdmin(request: Pick<Request, 'auth'>, h: Pick<ResponseToolkit, 'continue'>): symbol {

    if (request.auth.credentials.role !== adminRole) {
        throw failure(403, 'admin_required', adminMessage);
    }

    return h.continue;
}


/** The verified identity of the caller; only call on routes whose auth guarantees a token. */
export function callerId(request: Pick<Request, 'auth'>): string {

    return String(request.auth.credentials.sub);
}


// A token the strategy checks: @hapi/jwt's scheme under its own name, which routes never name.
const tokenStrategy = 'bearer-jwt';

/** The claims the token strategy checks: exp and nbf as @hapi/jwt does by default (exp is required too, in validate). */
export const verifyClaims: VerifyClaims = { aud: false, iss: false, sub: false, timeSkewSec: clockSkewSec };


export const authPlugin: Plugin<{ secret: string }> = {
    name: 'localgate-auth',
    async register(server, options) {

        await server.register(Jwt);

        server.auth.strategy(tokenStrategy, 'jwt', {
            keys: { key: options.secret, algorithms: ['HS256'] },
            verify: verifyClaims,
            httpAuthScheme: 'Bearer',
            validate(artifacts: { decoded: { header: Record<string, unknown>; payload: Record<string, unknown> } }) {

                // RFC 7515 4.1.11: a token naming critical extensions must be refused by a verifier that knows none.
                if (artifacts.decoded.header.crit !== undefined) {
                    throw new Error('Token header has critical extensions (crit), which this server does not support');
                }

                const { sub, exp, role } = artifacts.decoded.payload;
                if (typeof exp !== 'number') {
                    throw new Error('Token has no expiry (exp claim)');
                }

                if (typeof sub !== 'string' || !sub.trim()) {
                    throw new Error('Token has no subject (sub claim)');
                }

                return { isValid: true, credentials: role === adminRole ? { sub, role } : { sub } };
            }
        });

        // The scheme in front of the token strategy: anonymous reads and repeated tokens cost less (lib/bearer-scheme.ts).
        server.auth.strategy(strategy, bearerScheme(server, tokenStrategy, verifyClaims));

        // Node keeps the first of several Authorization headers and drops the rest, so which credential counts would
        // depend on their order: a request carrying more than one is refused on every route.
        server.ext('onRequest', (request, h) => {

            // server.inject() builds requests without a raw header list, and cannot repeat a header anyway.
            if (authorizationHeaders(request.raw.req.rawHeaders ?? []) > 1) {
                throw failure(400, 'multiple_authorization_headers', 'Send one Authorization header: this request carries several');
            }

            return h.continue;
        });

        // Secure by default: a route is public or optional only when it says so.
        server.auth.default({ strategy, mode: 'required' });
    }
};


// How many Authorization headers a request carries, from its raw header list (names and values alternating).
function authorizationHeaders(rawHeaders: string[]): number {

    return rawHeaders.filter((name, index) => index % 2 === 0 && name.toLowerCase() === 'authorization').length;
}

