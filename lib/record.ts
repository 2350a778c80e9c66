import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Http from 'node:http';
import Https from 'node:https';
import type { AddressInfo } from 'node:net';

import { errorMessage } from './errno';
import { readPackage } from './paths';
import { safely } from './safe-listener';
import { hidden, isCredentialName, isCredentialValue, scrubJsonText, scrubText } from './secrets';


// `localgate record`: a proxy in front of the hosted API that passes every exchange through unchanged and writes it
// to an HTTP Archive (HAR 1.2, as browsers, Playwright's recordHar and MSW read and write), credentials scrubbed and
// each caller kept as a stable alias, so that a recording can be made a world and replayed as its callers.

/** The most exchanges a recording holds; those after it pass through unrecorded, said once. */
export const maxEntries = 10_000;

/** The largest body a recording keeps; a larger one passes through, and the entry says it was not kept. */
export const maxRecordedBodyBytes = 2 ** 20;

/** The most body bytes a recording keeps in all, so that it stays a HAR `drift` reads (64 MiB); past it, bodies are not kept. */
export const maxRecordedTotalBytes = 48 * 2 ** 20;

/** The largest request body the recorder takes: a larger one is answered 413 and not forwarded. */
export const maxRequestBytes = 16 * 2 ** 20;

/** A name-value pair, as HAR lists headers, query parameters and cookies. */
export interface HarPair {
    name: string;
    value: string;
}

/** One exchange of a HAR, with `_caller`: the alias of the credential it was sent with (null: none). */
export interface HarEntry {
    startedDateTime: string;
    time: number;
    request: {
        method: string;
        url: string;
        httpVersion: string;
        cookies: HarPair[];
        headers: HarPair[];
        queryString: HarPair[];
        postData?: { mimeType: string; text: string; comment?: string };
        headersSize: number;
        bodySize: number;
    };
    response: {
        status: number;
        statusText: string;
        httpVersion: string;
        cookies: HarPair[];
        headers: HarPair[];
        content: { size: number; mimeType: string; text?: string; comment?: string };
        redirectURL: string;
        headersSize: number;
        bodySize: number;
    };
    cache: Record<string, never>;
    timings: { send: number; wait: number; receive: number };
    _caller: string | null;
}

export interface Har {
    log: { version: '1.2'; creator: { name: string; version: string }; entries: HarEntry[] };
}

export interface RecordOptions {
    upstream: URL;
    port: number;
    out: string;
    /** Values to hide wherever they appear (the server's own secrets, when recording one's own). */
    secrets?: readonly string[];
    maxEntries?: number;
    /** The most body bytes kept in all (maxRecordedTotalBytes). */
    maxTotalBytes?: number;
    /** The certificates an https upstream is checked against, in place of the system's (a CA of one's own). */
    ca?: string[];
    log(line: string): void;
}

/** A recorder running: where it listens, how many exchanges it holds, and how to stop it (writing the file a last time). */
export interface Recorder {
    url: string;
    readonly entries: number;
    close(): Promise<void>;
}


/** The aliases of a recording's callers: the same credential is the same caller-N, in the order they first came. */
export class CallerAliases {

    private readonly aliases = new Map<string, string>();

    aliasOf(credential: string | undefined): string | null {

        if (!credential) {
            return null;
        }

        // Only a digest of the credential is held, never the credential itself.
        const digest = Crypto.createHash('sha256').update(credential).digest('hex');
        let alias = this.aliases.get(digest);
        if (alias === undefined) {
            alias = `caller-${this.aliases.size + 1}`;
            this.aliases.set(digest, alias);
        }

        return alias;
    }
}


/** Headers as a HAR lists them, each credential's value hidden (by its name or by its value). */
export function harHeaders(headers: Http.IncomingHttpHeaders, secrets: readonly string[]): HarPair[] {

    return Object.entries(headers).flatMap(([name, value]) => [value].flat().map(String).map((one) => ({ name, value: isCredentialName(name) || isCredentialValue(one, secrets) ? hidden : scrubText(one, secrets) })));
}


/** A body as a HAR keeps it: its text with credentials hidden, or why it is not kept. */
export function harBody(body: Buffer, contentType: string, secrets: readonly string[], room = maxRecordedTotalBytes): { text?: string; comment?: string } {

    if (body.length > maxRecordedBodyBytes) {
        return { comment: `not recorded: ${body.length} bytes, more than the ${maxRecordedBodyBytes} a recording keeps` };
    }

    if (body.length > room) {
        return { comment: `not recorded: the recording holds the ${maxRecordedTotalBytes} bytes of bodies it keeps in all` };
    }

    const text = body.toString('utf8');
    return { text: /\bjson\b/i.test(contentType) ? scrubJsonText(text, secrets) : scrubText(text, secrets) };
}


/** Starts a recorder: a proxy on host:port in front of the upstream, writing the HAR to `out` as exchanges come. */
export async function startRecorder(options: RecordOptions): Promise<Recorder> {

    const { upstream, secrets = [], log } = options;
    const limit = options.maxEntries ?? maxEntries;
    const aliases = new CallerAliases();
    const har: Har = { log: { version: '1.2', creator: { name: 'localgate', version: readPackage().version }, entries: [] } };
    const client = upstream.protocol === 'https:' ? Https : Http;
    let full = false;
    let pending: NodeJS.Timeout | null = null;
    let room = options.maxTotalBytes ?? maxRecordedTotalBytes;
    // A write takes longer as the recording grows: the next waits ten times as long as the last took, and 100 ms at least.
    let lastWriteMs = 0;
    const kept = (body: Buffer, type: string) => {

        const recorded = harBody(body, type, secrets, room);
        room -= recorded.text === undefined ? 0 : body.length;
        return recorded;
    };

    // Written whole, through a file beside it and a rename, so that the file is a HAR at any moment.
    const write = () => {

        const started = Date.now();
        pending = null;
        Fs.writeFileSync(`${options.out}.partial`, JSON.stringify(har, null, 2));
        Fs.renameSync(`${options.out}.partial`, options.out);
        lastWriteMs = Date.now() - started;
    };

    // A failure of the recorder's own is said in a line, its type and place, never the bytes of the exchange.
    const failed = (tags: string[], data: object) => log(`localgate record: ${JSON.stringify(data)}`);

    const server = Http.createServer(safely('record an exchange', failed, async (request: Http.IncomingMessage, response: Http.ServerResponse) => {

        const started = new Date();
        const body = await readBody(request, maxRequestBytes);
        if (body === null) {
            answer(response, 413, 'request_too_large', `The recorder forwards request bodies of at most ${maxRequestBytes / 2 ** 20} MiB`);
            return;
        }

        const target = new URL(`${upstream.pathname.replace(/\/$/, '')}${String(request.url)}`, upstream);
        let upstreamAnswer: { status: number; statusText: string; headers: Http.IncomingHttpHeaders; body: Buffer };
        try {
            upstreamAnswer = await forward(client, target, request, body, options.ca);
        }
        catch (err) {
            const why = errorMessage(err);
            log(`localgate record: the upstream ${upstream.origin} cannot be reached (${why}): ${request.method} ${target.pathname} answered 502 and not recorded`);
            answer(response, 502, 'upstream_unreachable', `The upstream ${upstream.origin} cannot be reached (${why})`);
            return;
        }

        response.writeHead(upstreamAnswer.status, upstreamAnswer.statusText, upstreamAnswer.headers).end(upstreamAnswer.body);
        if (har.log.entries.length >= limit) {
            if (!full) {
                full = true;
                log(`localgate record: ${limit} exchanges recorded, the most a recording holds: those after pass through unrecorded`);
            }

            return;
        }

        const time = Date.now() - started.getTime();
        const requestType = String(request.headers['content-type'] ?? '');
        const answerType = String(upstreamAnswer.headers['content-type'] ?? '');
        const entry: HarEntry = {
            startedDateTime: started.toISOString(),
            time,
            request: {
                method: String(request.method),
                url: recordedUrl(target, secrets),
                httpVersion: `HTTP/${request.httpVersion}`,
                cookies: [],
                headers: harHeaders(request.headers, secrets),
                queryString: [...new URL(recordedUrl(target, secrets)).searchParams].map(([name, value]) => ({ name, value })),
                ...(body.length ? { postData: { mimeType: requestType, text: '', ...kept(body, requestType) } } : {}),
                headersSize: -1,
                bodySize: body.length
            },
            response: {
                status: upstreamAnswer.status,
                statusText: upstreamAnswer.statusText,
                httpVersion: 'HTTP/1.1',
                cookies: [],
                headers: harHeaders(upstreamAnswer.headers, secrets),
                content: { size: upstreamAnswer.body.length, mimeType: answerType, ...kept(upstreamAnswer.body, answerType) },
                redirectURL: '',
                headersSize: -1,
                bodySize: upstreamAnswer.body.length
            },
            cache: {},
            timings: { send: 0, wait: time, receive: 0 },
            _caller: aliases.aliasOf(request.headers.authorization)
        };
        har.log.entries.push(entry);
        log(`${upstreamAnswer.status} ${String(request.method)} ${target.pathname} ${time} ms${entry._caller ? ` as ${entry._caller}` : ''}`);
        pending ??= setTimeout(safely('write the recording', failed, write), Math.max(100, 10 * lastWriteMs));
    }));

    await new Promise<void>((resolve, reject) => {

        server.once('error', reject);
        // On loopback only: the recorder forwards the credentials its callers send.
        server.listen(options.port, '127.0.0.1', () => resolve());
    });

    // The file is there (an empty recording) once the recorder listens, or the recorder does not start.
    try {
        write();
    }
    catch (err) {
        server.close();
        throw err;
    }

    const { port } = server.address() as AddressInfo;
    return {
        url: `http://127.0.0.1:${port}`,
        get entries() {

            return har.log.entries.length;
        },
        async close() {

            await new Promise((resolve) => server.close(resolve));
            server.closeAllConnections();
            if (pending) {
                clearTimeout(pending);
            }

            write();
        }
    };
}


// The URL as recorded: the value of a query parameter named as a credential hidden, and tokens and secrets anywhere.
function recordedUrl(target: URL, secrets: readonly string[]): string {

    const url = new URL(target);
    for (const name of [...url.searchParams.keys()].filter(isCredentialName)) {
        url.searchParams.set(name, hidden);
    }

    return scrubText(url.toString(), secrets);
}


// A body read whole, or null past the limit (the rest left unread: the answer closes the connection).
function readBody(request: Http.IncomingMessage, limit: number): Promise<Buffer | null> {

    return new Promise((resolve, reject) => {

        const chunks: Buffer[] = [];
        let size = 0;
        request.on('data', (chunk: Buffer) => {

            size += chunk.length;
            if (size > limit) {
                request.removeAllListeners('data');
                request.pause();
                resolve(null);
                return;
            }

            chunks.push(chunk);
        });
        request.once('end', () => resolve(Buffer.concat(chunks)));
        request.once('error', reject);
    });
}


// Sends the request on to the upstream as it came (its Host the upstream's), and reads the answer whole.
function forward(client: typeof Http | typeof Https, target: URL, request: Http.IncomingMessage, body: Buffer, ca: string[] | undefined): Promise<{ status: number; statusText: string; headers: Http.IncomingHttpHeaders; body: Buffer }> {

    return new Promise((resolve, reject) => {

        const headers = { ...request.headers, host: target.host };
        const outgoing = client.request(target, { method: request.method, headers, ca }, (incoming) => {

            const chunks: Buffer[] = [];
            incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
            incoming.once('end', () => resolve({ status: Number(incoming.statusCode), statusText: String(incoming.statusMessage), headers: incoming.headers, body: Buffer.concat(chunks) }));
            incoming.once('error', reject);
        });
        outgoing.once('error', reject);
        outgoing.end(body);
    });
}


// An answer of the recorder's own, in the service's one error shape.
function answer(response: Http.ServerResponse, status: number, code: string, message: string): void {

    const error = Http.STATUS_CODES[status];
    response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', connection: 'close' }).end(JSON.stringify({ statusCode: status, error, message, code }));
}
