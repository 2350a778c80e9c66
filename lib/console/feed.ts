import { PassThrough } from 'node:stream';

import type { Request, ResponseObject, Server } from '@hapi/hapi';

import { instancePath } from '../instances';
import type { Namespace } from '../namespace';
import { safelyPerRequest } from '../safe-listener';
import { hidden, isCredentialName, isCredentialValue, scrubJsonText, scrubText } from '../secrets';


/** One answered request as the live log shows it: never a header, a token or a secret. */
export interface RequestEvent {
    id: string;
    time: string;
    method: string;
    // As the client sent it: an instance's base path included.
    path: string;
    // The base path of the instance the path names (/i/<id>), null for the default data set.
    instance: string | null;
    query: string;
    // Null when no reply was sent: a fault dropped it.
    status: number | null;
    ms: number;
    caller: string | null;
    // True when the route reads no credentials (a public one), so no caller is known whatever the client sent.
    public: boolean;
    // Present when the client marked the request as the console page's own housekeeping: the log view hides it
    // unless asked. A mark of the view only: the journal keeps such a request as it keeps any other.
    housekeeping?: true;
    body?: string;
    truncated?: boolean;
    // The fault rule that acted on the request (its id, its words and its hits with this request), and the reply it
    // dropped, if it did.
    fault?: string;
    fault_rule?: string;
    fault_hits?: number;
    dropped?: 'before' | 'after' | null;
    // A dropped reply: whether its handler committed a new record (a replay commits none), and the answer the client
    // never got: null when the connection closed before the request ran, or when the client closed it first.
    written?: boolean;
    unsent?: { status: number; code: string | null } | null;
}

export const maxBodyChars = 4096;

// The header, and its one value, with which the console page marks the reads it makes for itself.
export const housekeepingHeader = 'x-localgate-console';
export const housekeepingValue = 'housekeeping';

// A listener that stops reading (a stalled tab) misses events rather than growing the server's memory.
export const maxBufferedBytes = 1024 * 1024;

// Error bodies are always shown: the server writes them, and they carry a message and a code, never a credential.
// Success bodies are shown only for /health and the namespaces that say so (pay's wallets and ledger stay off a shared
// screen); the documentation's own answers are large and say nothing about what a client did. Namespace names are
// lower case letters and digits, so they go into the pattern as they are.
/** The paths whose success bodies the live log shows. */
export function liveBodyPaths(namespaces: readonly Namespace[]): RegExp {

    const shown = namespaces.filter((namespace) => namespace.liveBodies).map((namespace) => namespace.name);
    return new RegExp(`^/(?:v1/(?:${shown.join('|')})/|health$)`);
}


/** The open event streams of the live log; listens to the server's responses only while a stream is open. */
export class RequestFeed {

    private readonly streams = new Set<PassThrough>();
    // A failure here is logged with the request's id: thrown into hapi's response event, it would end the process.
    private readonly listener = safelyPerRequest('live log', (request: Request) => this.publish(request));

    private readonly bodyPaths: RegExp;

    constructor(private readonly server: Server, private readonly secrets: string[], private readonly ownPlugin: string) {

        this.bodyPaths = liveBodyPaths(server.app.localgate.settings.namespaces);
    }

    /** A new event stream; it leaves the feed when it closes. */
    open(): PassThrough {

        const stream = new PassThrough();
        if (this.streams.size === 0) {
            this.server.events.on('response', this.listener);
        }

        this.streams.add(stream);
        stream.once('close', () => this.remove(stream));
        stream.write('retry: 2000\n\n');
        return stream;
    }

    /** Ends every open stream, so that no response in flight holds the server open. */
    closeAll(): void {

        for (const stream of this.streams) {
            stream.end();
        }
    }

    get size(): number {

        return this.streams.size;
    }

    private remove(stream: PassThrough): void {

        this.streams.delete(stream);
        if (this.streams.size === 0) {
            this.server.events.removeListener('response', this.listener);
        }
    }

    private publish(request: Request): void {

        if (request.route.realm.plugin === this.ownPlugin) {
            return;
        }

        const line = `event: request\ndata: ${scrubText(JSON.stringify(summarize(request, this.secrets, this.bodyPaths)), this.secrets)}\n\n`;
        for (const stream of this.streams) {
            if (stream.writableLength < maxBufferedBytes) {
                stream.write(line);
            }
        }
    }
}


// A route reads no credentials only when its authentication is off: every other takes the server's default (lib/auth.ts).
function isPublic(request: Request): boolean {

    // hapi's types leave out the false a route's auth setting holds when it is off.
    const auth: unknown = request.route.settings.auth;
    return auth === false;
}


/** What the live log shows of an answered request; a body is scrubbed of the secrets before it is cut, so no part of one survives the cut. */
export function summarize(request: Request, secrets: string[], bodyPaths: RegExp): RequestEvent {

    // By the time a response is sent, hapi has turned an error into a response whose source is the error's body.
    // A reply a fault dropped leaves no response object: the fault's own fields say what happened below.
    const response = typeof request.response === 'symbol' ? null : request.response as ResponseObject;
    const status = response ? response.statusCode : null;
    // An instance's path has become the API's own by now; one that names no live instance was refused as it was sent.
    const path = (request.app.scope?.basePath ?? '') + request.path;
    const named = instancePath(path);
    const event: RequestEvent = {
        id: request.info.id,
        time: new Date(request.info.received).toISOString(),
        method: request.method.toUpperCase(),
        path,
        instance: named ? `/i/${named.id}` : null,
        query: queryOf(request.orig.query ?? request.query, secrets),
        status,
        ms: Math.max(0, request.info.completed - request.info.received),
        caller: request.auth.isAuthenticated ? String(request.auth.credentials.sub) : null,
        public: isPublic(request)
    };

    if (request.headers[housekeepingHeader] === housekeepingValue) {
        event.housekeeping = true;
    }

    const fault = request.app.fault;
    if (fault) {
        event.fault = fault.id;
        event.fault_rule = fault.rule;
        event.fault_hits = fault.hits;
        event.dropped = fault.drop;
    }

    if (fault?.drop) {
        // The faults plugin kept the answer a reply dropped after the request would have been, unless the client closed
        // the connection before there was one.
        event.status = null;
        event.written = request.app.written === true;
        event.unsent = fault.status === undefined ? null : { status: fault.status, code: fault.code || null };
    }

    const shown = status !== null && (status >= 400 || bodyPaths.test(request.path));
    const body = response?.source;
    if (shown && body && typeof body === 'object') {
        const text = scrubJsonText(JSON.stringify(body, null, 2), secrets);
        event.body = text.slice(0, maxBodyChars);
        event.truncated = text.length > maxBodyChars;
    }

    return event;
}


/** The query string as the caller sent it, with the value of every parameter that is a credential, by name or by value, hidden. */
function queryOf(query: object, secrets: string[]): string {

    const pairs = Object.entries(query).map(([name, value]) => {

        const text = String(value);
        return `${name}=${isCredentialName(name) || isCredentialValue(text, secrets) ? hidden : text}`;
    });
    return pairs.length ? `?${pairs.join('&')}` : '';
}
