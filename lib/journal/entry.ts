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

/** An entry with what matching needs beside it: the URL as sent, the body's text, and the memory it holds. */
export interface Recorded {
    entry: JournalEntry;
    arrival: number;
    url: string;
    bodyText: string | null;
    bytes: number;
}

export const hidden = '[hidden]';

// Headers that carry credentials by their name; Idempotency-Key is a key of another kind, and stays.
const credentialHeader = /^(?:authorization|proxy-authorization|cookie|set-cookie)$|api[-_]?key|token|secret|passw|session|credential|signature/i;

// Values that are credentials whatever the header or parameter: an auth scheme's prefix, or a JWT.
const credentialValue = /^\s*(?:bearer|basic|digest|negotiate|hoba|mutual|aws4-hmac-sha256)\s|eyJ[\w-]*\.[\w-]*\.[\w-]*/i;

const credentialParameter = /token|key|secret|passw|auth|session|signature|credential/i;

// Room an entry takes beyond its variable parts: keys, numbers, ids and timestamps.
const entryOverhead = 400;


function isCredential(value: string, secrets: string[]): boolean {

    return credentialValue.test(value) || secrets.some((secret) => value.includes(secret));
}


/** Builds the journal entry of an answered request: credentials hidden by name and by value, the body cut at bodyBytes. */
export function recordOf(request: Request, { secrets, bodyBytes }: { secrets: string[]; bodyBytes: number }, route: string | null, nearMiss: NearMiss | null): Recorded {

    let bytes = entryOverhead + request.path.length;
    const headers: Record<string, string> = {};
    for (const [name, raw] of Object.entries(request.headers)) {
        const value = String(raw);
        headers[name] = credentialHeader.test(name) || isCredential(value, secrets) ? hidden : value;
        bytes += name.length + headers[name]!.length;
    }

    // The query as sent: a route's validation may have converted request.query.
    const sent = (request.orig.query ?? request.query) as Record<string, string | string[]>;
    const query: Record<string, string | string[]> = {};
    let hiding = false;
    for (const [name, value] of Object.entries(sent)) {
        const secret = credentialParameter.test(name) || [value].flat().some((item) => isCredential(item, secrets));
        hiding ||= secret;
        query[name] = secret ? hidden : value;
    }

    const raw = request.raw.req.url!;
    const mark = raw.indexOf('?');
    const search = hiding ? `?${new URLSearchParams(Object.entries(query).flatMap(([name, value]) => [value].flat().map((item): [string, string] => [name, item]))).toString()}` : (mark === -1 ? '' : raw.slice(mark));
    bytes += search.length;

    // The body as sent: a route's validation may have added defaults to request.payload.
    const { body, bodyText, truncated } = bodyOf(request.orig.payload ?? request.payload, secrets, bodyBytes);
    bytes += bodyText?.length ?? 0;

    // A dropped request's answer is a symbol: the fault kept the status it would have had.
    const fault = request.app.fault;
    const response = request.response as ResponseObject | symbol;
    const answered = typeof response !== 'symbol';
    const status = answered ? response.statusCode : fault?.status ?? null;
    const code = answered ? (status! >= 400 ? (response.source as { code: string }).code : null) : fault?.code ?? null;
    return {
        entry: {
            id: request.info.id,
            at: new Date(request.info.received).toISOString(),
            method: request.method.toUpperCase(),
            path: request.path,
            query,
            headers,
            body,
            body_truncated: truncated,
            caller: request.auth.isAuthenticated ? String(request.auth.credentials.sub) : null,
            status,
            code,
            duration_ms: Math.max(0, request.info.completed - request.info.received),
            route,
            fault: fault?.id ?? null,
            near_miss: nearMiss
        },
        arrival: request.app.arrival!,
        url: request.path + search,
        bodyText,
        bytes
    };
}


// The parsed JSON body, scrubbed of tokens and secrets; over bodyBytes, its text cut there instead.
function bodyOf(payload: unknown, secrets: string[], bodyBytes: number): { body: unknown; bodyText: string | null; truncated: boolean } {

    // Unparsed (a GET, a request answered before its body was read) or empty.
    if (payload === undefined || payload === null) {
        return { body: null, bodyText: null, truncated: false };
    }

    const text = JSON.stringify(payload);
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
