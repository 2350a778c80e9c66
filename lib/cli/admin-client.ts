import { existingSecret, mintToken } from '../auth';
import type { Settings } from '../config';
import { thrownMessage, fieldOf } from '../thrown';
import { UsageError } from './command';


// How a command reaches a running server's admin routes: its URL checked as typed, an admin token minted from
// AUTH_JWT_SECRET as `localgate token --admin` does, and each answer's JSON, or one line saying why there is none.

export interface Answered {
    status: number;
    body: unknown;
}

export interface AdminClient {
    readonly url: string;
    /** A request to a path of the server with a body of that media type. */
    call(method: string, path: string, body: { type: string; text: string }): Promise<Answered>;
}


/** Where the server of these settings listens, as this machine reaches it: a server on every interface is on loopback. */
export function defaultServerUrl(settings: Pick<Settings, 'host' | 'port'>): string {

    const host = ['0.0.0.0', '::'].includes(settings.host) ? '127.0.0.1' : settings.host;
    return `http://${host.includes(':') ? `[${host}]` : host}:${settings.port}`;
}


/** The server at url (the settings' own when undefined), reached as an admin. */
export function adminClient(settings: Settings, url: string | undefined): AdminClient {

    const base = url ?? defaultServerUrl(settings);
    let parsed: URL | null = null;
    try {
        parsed = new URL(base);
    }
    catch {
        // Said below.
    }

    if (!parsed || !['http:', 'https:'].includes(parsed.protocol)) {
        throw new UsageError(`--url must be the http: or https: URL of a localgate server, such as http://127.0.0.1:3000, not "${base}"`);
    }

    const origin = parsed;
    const secret = existingSecret(settings.jwtSecret, settings.dataDir);
    return {
        url: base,
        async call(method, path, body) {

            const headers = { authorization: `Bearer ${mintToken(secret, 'localgate-cli', 3600, { admin: true })}`, 'content-type': body.type };
            let res: Response;
            try {
                res = await fetch(new URL(path, origin), { method, headers, body: body.text });
            }
            catch (err) {
                // fetch says why in its error's cause.
                throw new Error(`nothing answers at ${base}: ${thrownMessage(fieldOf(err, 'cause'))}`);
            }

            const answer = await res.text();
            try {
                const json: unknown = JSON.parse(answer);
                return { status: res.status, body: json };
            }
            catch {
                throw new Error(`${base} answered ${res.status} with no JSON: is it a localgate server?`);
            }
        }
    };
}


/** The body of a 2xx answer, or an Error in the server's words: its message, status and code. */
export function answeredBody<T>({ status, body }: Answered): T {

    if (status >= 300) {
        // localgate's error body; another server's JSON says no more than its status.
        const message = fieldOf(body, 'message');
        throw new Error(typeof message === 'string' ? `${message} (${status} ${String(fieldOf(body, 'code'))})` : `the server answered ${status}, with no error of localgate's`);
    }

    return body as T;
}
