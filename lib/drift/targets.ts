import type { Server } from '@hapi/hapi';

import { mintToken } from '../auth';
import { fieldOf, thrownMessage } from '../thrown';
import type { ReplayTarget } from './drift';


// Where a drift replays: a server in this process, its requests injected, or one at a URL, over HTTP.

/** A server of this process. */
export function injectTarget(server: Server): ReplayTarget {

    return {
        token: (subject, admin) => mintToken(server.app.localgate.secret, subject, 3600, { admin }),
        async send(method, path, headers, body) {

            const res = await server.inject({ method, url: path, headers, ...(body === null ? {} : { payload: body }) });
            return { status: res.statusCode, headers: textHeaders(res.headers), body: parsedBody(res.payload, String(res.headers['content-type'])) };
        }
    };
}


/** The server at a URL, with tokens signed by its secret. */
export function httpTarget(url: URL, secret: string): ReplayTarget {

    return {
        token: (subject, admin) => mintToken(secret, subject, 3600, { admin }),
        async send(method, path, headers, body) {

            let res: Response;
            try {
                res = await fetch(new URL(path, url), { method, headers, ...(body === null ? {} : { body }) });
            }
            catch (err) {
                throw new Error(`nothing answers at ${url.origin}: ${thrownMessage(fieldOf(err, 'cause'))}`);
            }

            return { status: res.status, headers: Object.fromEntries(res.headers), body: parsedBody(await res.text(), String(res.headers.get('content-type'))) };
        }
    };
}


function textHeaders(headers: Record<string, string | string[] | number | undefined>): Record<string, string> {

    return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, String(value)]));
}


/** A replayed answer's body: parsed when it is JSON, its text otherwise, null when empty. */
export function parsedBody(text: string, type: string): unknown {

    if (text === '') {
        return null;
    }

    if (!/\bjson\b/i.test(type)) {
        return text;
    }

    try {
        return JSON.parse(text);
    }
    catch {
        return text;
    }
}
