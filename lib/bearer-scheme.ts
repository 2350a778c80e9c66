import Boom from '@hapi/boom';
import type { AuthArtifacts, AuthCredentials, Server } from '@hapi/hapi';
import Jwt, { type HapiJwt } from '@hapi/jwt';

import { fieldOf } from './thrown';


// A fence around what the bearer scheme relies on in hapi and @hapi/jwt beyond their documented API; the test of this
// file (test/bearer-scheme.ts) fails when either changes under it:
// - hapi's server.auth.test() answers a strategy's credentials and artifacts (typed as any artifacts), and @hapi/jwt's
//   artifacts hold the decoded token that Jwt.token.verifyPayload() checks again, exp and nbf included when the
//   options leave them out, as the strategy's verify option does by default;
// - @hapi/jwt refuses a token of another algorithm (alg none, HS512) as a missing one (isMissing), and
//   server.auth.test() rejects with the strategy's Boom error;
// - hapi leaves a request no strategy authenticated as isAuthenticated false, credentials and strategy null.

/** The claim checks of @hapi/jwt's verify option, which a remembered token is checked against again: exp and nbf always. */
export type VerifyClaims = Pick<HapiJwt.VerifyTokenOptions, 'aud' | 'iss' | 'sub' | 'timeSkewSec'>;

// A token the strategy verified: its credentials, and the decoded token its claims are read from.
interface Verified {
    credentials: AuthCredentials;
    artifacts: HapiJwt.Artifacts;
}

// Tokens whose signature and claims were verified, by their exact header text, at most this many.
const maxRemembered = 1000;

// The credentials an anonymous request to an optional route holds between this scheme and onPostAuth, and nowhere else.
const anonymous = Object.freeze({});

const schemeName = 'localgate-bearer';


/**
 * Registers the scheme that stands in front of the token strategy (an @hapi/jwt strategy checked with verify) and
 * returns its name. hapi makes a new 401 error, stack trace and all, for every request no strategy authenticates, even
 * on a route where none is needed: a fifth of an anonymous read's authentication. This scheme lets an anonymous request
 * to an optional route through with placeholder credentials (taken back in onPostAuth) and hands every request that
 * carries a header to the token strategy. Checking a signature is most of the rest, and clients send the same token
 * again and again: a token verified once is remembered by its exact text, and only its time claims are checked again.
 */
export function bearerScheme(server: Server, tokenStrategy: string, verify: VerifyClaims): string {

    const missing = Boom.unauthorized(null, 'Bearer');
    const verified = new Map<string, Verified>();
    server.auth.scheme(schemeName, () => ({
        async authenticate(request, h) {

            const optional = request.auth.mode === 'optional';
            const header: unknown = request.headers.authorization;
            if (typeof header !== 'string') {
                return optional ? h.authenticated({ credentials: anonymous }) : h.unauthenticated(missing);
            }

            // @hapi/jwt reports a header without the Bearer scheme as no header at all.
            // The header is not echoed: its first word may be the token itself.
            const sent = header.trim();
            if (!/^bearer(?:\s|$)/i.test(sent)) {
                const wrong = /\s/.test(sent) ? 'names a scheme other than Bearer' : 'is missing the scheme';
                return h.unauthenticated(Boom.unauthorized(`The Authorization header ${wrong}: send Authorization: Bearer <token>`, 'Bearer'));
            }

            const known = verified.get(header);
            if (known && stillValid(known, verify)) {
                return h.authenticated(known);
            }

            try {
                const { credentials, artifacts } = await server.auth.test(tokenStrategy, request);
                const result = { credentials: Object.freeze(credentials), artifacts: artifacts as HapiJwt.Artifacts & AuthArtifacts };
                if (verified.size >= maxRemembered) {
                    verified.clear();
                }

                verified.set(header, result);
                return h.authenticated(result);
            }
            catch (err) {
                // @hapi/jwt reports a token of a refused algorithm (alg none, HS512) or another scheme as missing,
                // which an optional route would accept anonymously: a credential that is present but not accepted
                // is a 401, never a silent downgrade.
                const refused = optional && fieldOf(err, 'isMissing') === true;
                return h.unauthenticated(refused ? Boom.unauthorized('Invalid token', 'Bearer') : err as Error);
            }
        }
    }));

    server.ext('onPostAuth', (request, h) => {

        if (request.auth.credentials === anonymous) {
            // As hapi leaves a request that no strategy authenticated.
            Object.assign(request.auth, { isAuthenticated: false, credentials: null, strategy: null });
        }

        return h.continue;
    });

    return schemeName;
}


// The strategy's own time check, with the strategy's own options.
function stillValid(token: Verified, verify: VerifyClaims): boolean {

    try {
        Jwt.token.verifyPayload(token.artifacts, verify);
        return true;
    }
    catch {
        return false;
    }
}
