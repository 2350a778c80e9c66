import type { Request, ResponseObject } from '@hapi/hapi';

import { scrub } from '../console/feed';
import type { NearMiss } from './near-miss';


/** One request as the journal keeps it. */
export interface JournalEntry {
    id: string;
    at: string;
    method: string;
    path: string;
    query: Record<string, string | string[]>;
    headers: Record<string, string>;
    body: unknown;
    body_truncated: boolean;
    caller: string | null;
    status: number | null;
    code: string | null;
    duration_ms: number;
    route: string | null;
    fault: string | null;
    near_miss: NearMiss | null;
}

/** What matching needs beside an entry: the URL as sent and the body's text. */
interface Built {
    entry: JournalEntry;
    url: string;
    bodyText: string | null;
}

/** What an answered request leaves to build its entry from: the request's own objects, not copies of them. */
interface Source {
    request: Pick<JournalEntry, 'id' | 'path' | 'caller' | 'status' | 'code' | 'route' | 'fault' | 'near_miss'> & { method: string; received: number; completed: number };
    headers: Request['headers'];
    query: Record<string, string | string[]>;
    rawUrl: string;
    payload: unknown;
    // The body's JSON text, known when it was measured; null when the request had none.
    text: string | null;
    options: RecordOptions;
}

interface RecordOptions {
    secrets: string[];
    bodyBytes: number;
}

export const hidden = '[hidden]';

// Headers that carry credentials by their name; Idempotency-Key is a key of another kind, and stays.
const credentialHeader = /^(?:authorization|proxy-authorization|cookie|set-cookie)$|api[-_]?key|token|secret|passw|session|credential|signature/i;

// Values that are credentials whatever the header or parameter: an auth scheme's prefix, or a JWT.
const credentialValue = /^\s*(?:bearer|basic|digest|negotiate|hoba|mutual|aws4-hmac-sha256)\s|eyJ[\w-]*\.[\w-]*\.[\w-]*/i;

const credentialParameter = /token|key|secret|passw|auth|session|signature|credential/i;

// Room an entry takes beyond its variable parts: keys, numbers, ids and timestamps.
const entryOverhead = 400;


/**
 * An answered request as the journal keeps it. Recording only measures it and keeps the request's own parts; its
 * entry (credentials hidden, the body scrubbed) is built when it is first read, so that a journal nobody reads costs
 * a request little. A body over bodyBytes is cut as it is recorded, so that a large one is never kept.
 */
export class Recorded {

    private source: Source | null;
    private built: Built | null = null;

    constructor(source: Source, readonly arrival: number, readonly bytes: number, buildNow: boolean) {

        this.source = source;
        if (buildNow) {
            this.build();
        }
    }

    get entry(): JournalEntry {

        return this.build().entry;
    }

    get url(): string {

        return this.build().url;
    }

    get bodyText(): string | null {

        return this.build().bodyText;
    }

    private build(): Built {

        if (!this.built) {
            this.built = buildEntry(this.source!);
            // The request's objects are no longer needed once the entry holds what it keeps of them.
            this.source = null;
        }

        return this.built;
    }
}


function isCredential(value: string, secrets: string[]): boolean {

    return credentialValue.test(value) || secrets.some((secret) => value.includes(secret));
}


/** Records an answered request: its size is measured now, its entry built when first read. */
export function recordOf(request: Request, options: RecordOptions, route: string | null, nearMiss: NearMiss | null): Recorded {

    let bytes = entryOverhead;
    const headers = request.headers;
    for (const name in headers) {
        bytes += name.length + String(headers[name]).length;
    }

    const rawUrl = request.raw.req.url!;
    bytes += rawUrl.length;

    // The body as sent: a route's validation may have added defaults to request.payload. A body over the limit is
    // cut now; a smaller one is kept as parsed (the route never changes it) and scrubbed when read.
    const parsed = request.orig.payload ?? request.payload;
    const text = parsed === undefined || parsed === null ? null : JSON.stringify(parsed);
    const cut = text !== null && text.length > options.bodyBytes;
    // Only what is kept of the body counts against the journals' memory.
    bytes += Math.min(text?.length ?? 0, options.bodyBytes);

    // A dropped request's answer is a symbol: the fault kept the status it would have had.
    const fault = request.app.fault;
    const response = request.response as ResponseObject | symbol;
    const answered = typeof response !== 'symbol';
    const status = answered ? response.statusCode : fault?.status ?? null;
    const code = answered ? (status! >= 400 ? (response.source as { code: string }).code : null) : fault?.code ?? null;
    const source: Source = {
        request: {
            id: request.info.id,
            method: request.method,
            path: request.path,
            received: request.info.received,
            completed: request.info.completed,
            caller: request.auth.isAuthenticated ? String(request.auth.credentials.sub) : null,
            status,
            code,
            route,
            fault: fault?.id ?? null,
            near_miss: nearMiss
        },
        headers,
        // The query as sent: a route's validation may have converted request.query.
        query: (request.orig.query ?? request.query) as Record<string, string | string[]>,
        rawUrl,
        payload: parsed,
        text,
        options
    };

    return new Recorded(source, request.app.arrival!, bytes, cut);
}


function buildEntry({ request, headers: sentHeaders, query: sent, rawUrl, payload, text, options: { secrets, bodyBytes } }: Source): Built {

    const headers: Record<string, string> = {};
    for (const [name, raw] of Object.entries(sentHeaders)) {
        const value = String(raw);
        headers[name] = credentialHeader.test(name) || isCredential(value, secrets) ? hidden : value;
    }

    const query: Record<string, string | string[]> = {};
    let hiding = false;
    for (const [name, value] of Object.entries(sent)) {
        const secret = credentialParameter.test(name) || [value].flat().some((item) => isCredential(item, secrets));
        hiding ||= secret;
        query[name] = secret ? hidden : value;
    }

    const mark = rawUrl.indexOf('?');
    const search = hiding ? `?${new URLSearchParams(Object.entries(query).flatMap(([name, value]) => [value].flat().map((item): [string, string] => [name, item]))).toString()}` : (mark === -1 ? '' : rawUrl.slice(mark));
    const { body, bodyText, truncated } = bodyOf(payload, text, secrets, bodyBytes);
    return {
        entry: {
            id: request.id,
            at: new Date(request.received).toISOString(),
            method: request.method.toUpperCase(),
            path: request.path,
            query,
            headers,
            body,
            body_truncated: truncated,
            caller: request.caller,
            status: request.status,
            code: request.code,
            duration_ms: Math.max(0, request.completed - request.received),
            route: request.route,
            fault: request.fault,
            near_miss: request.near_miss
        },
        url: request.path + search,
        bodyText
    };
}


// The parsed JSON body (payload, whose JSON text is text), scrubbed of tokens and secrets; over bodyBytes, its text
// cut there instead.
function bodyOf(payload: unknown, text: string | null, secrets: string[], bodyBytes: number): { body: unknown; bodyText: string | null; truncated: boolean } {

    // Unparsed (a GET, a request answered before its body was read) or empty.
    if (text === null) {
        return { body: null, bodyText: null, truncated: false };
    }

    const clean = scrub(text, secrets);
    if (clean.length > bodyBytes) {
        const cut = clean.slice(0, bodyBytes);
        return { body: cut, bodyText: cut, truncated: true };
    }

    return { body: clean === text ? payload : scrubbed(payload, secrets), bodyText: clean, truncated: false };
}


// A copy of a JSON value with every string scrubbed: walked only when its text showed something to hide.
function scrubbed(value: unknown, secrets: string[]): unknown {

    if (typeof value === 'string') {
        return scrub(value, secrets);
    }

    if (Array.isArray(value)) {
        return value.map((item) => scrubbed(item, secrets));
    }

    if (value !== null && typeof value === 'object') {
        return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, scrubbed(item, secrets)]));
    }

    return value;
}
