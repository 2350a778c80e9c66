import type { Request, ResponseObject } from '@hapi/hapi';

import { hidden, isCredentialName, isCredentialValue, scrubJsonText, scrubText } from '../secrets';
import { always } from '../always';
import { fieldOf } from '../thrown';


/** The route closest to a request no route took. */
export interface NearMiss {
    method: string;
    path: string;
}


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

/**
 * What a saved scenario keeps of an answer beside the journal's entry: the id of the record it answered, and its other
 * top-level values that a replay can hold it to (not the instants, which a clock on the wall makes differ).
 */
export interface AnswerDigest {
    id: string | null;
    fields: Record<string, string | number | boolean | null>;
}

// The longest text of one value a digest keeps: an answer's own shape bounds how many it has.
const maxDigestText = 200;

/** An entry without its body, and what matching needs beside it: the URL as sent and the body's scrubbed text. */
interface Built {
    head: Omit<JournalEntry, 'body'>;
    url: string;
    bodyText: string | null;
}

/** What an answered request leaves to build its entry from: the request's own objects, and its body as JSON text. */
interface Source {
    request: Pick<JournalEntry, 'id' | 'path' | 'caller' | 'status' | 'code' | 'route' | 'fault' | 'near_miss'> & { method: string; received: number; completed: number };
    headers: Request['headers'];
    query: Record<string, string | string[]>;
    rawUrl: string;
    // The body's JSON text, cut at bodyBytes (and then already scrubbed); null when the request had none.
    text: string | null;
    truncated: boolean;
    secrets: string[];
}

interface RecordOptions {
    secrets: string[];
    bodyBytes: number;
}

// Room an entry takes beyond its variable parts: keys, numbers, ids and timestamps.
const entryOverhead = 400;

const beyondLatin1 = /[^\u0000-\u00ff]/;


/**
 * An answered request as the journal keeps it. Recording only measures it and keeps the request's headers and query
 * and its body as JSON text, never parsed: text is what the journal's memory counts, and a parsed body can take twenty
 * times its text. Its entry (credentials hidden) is built when it is first read, so that a journal nobody reads costs a
 * request little; the body is parsed again each time an entry or a pattern needs it.
 */
export class Recorded {

    // The request's objects until the entry is built, then what the entry keeps of them alone.
    private state: { source: Source; built: null } | { source: null; built: Built };

    /**
     * @param admin whether the caller's token had the admin role
     * @param digest what a saved scenario keeps of a success's answer, credentials not yet taken out; null for a failure
     * @param secrets the values that never leave the journal: the server's token secret and pay keys
     */
    constructor(source: Source, readonly arrival: number, readonly bytes: number, readonly admin: boolean, private readonly digest: AnswerDigest | null, private readonly secrets: readonly string[]) {

        this.state = { source, built: null };
    }

    /** What a saved scenario keeps of the answer, without a field that is a credential by its name or its value. */
    get answer(): AnswerDigest | null {

        return this.digest && withoutCredentials(this.digest, this.secrets);
    }

    /** The entry as the routes show it. */
    get entry(): JournalEntry {

        const { head, bodyText } = this.build();
        return { ...head, body: this.bodyOf(bodyText, head.body_truncated) };
    }

    /** The entry without its body, which costs a parse to read. */
    get head(): Omit<JournalEntry, 'body'> {

        return this.build().head;
    }

    /** The path and query as sent, credentials hidden. */
    get url(): string {

        return this.build().url;
    }

    /** The body's JSON text, credentials hidden; cut when body_truncated. */
    get bodyText(): string | null {

        return this.build().bodyText;
    }

    private bodyOf(text: string | null, truncated: boolean): unknown {

        return text === null || truncated ? text : JSON.parse(text);
    }

    private build(): Built {

        if (this.state.built === null) {
            // The request's objects are no longer needed once the entry holds what it keeps of them.
            this.state = { source: null, built: buildEntry(this.state.source) };
        }

        return this.state.built;
    }
}


/** Records an answered request: its size is measured now, its entry built when first read. */
export function recordOf(request: Request, options: RecordOptions, route: string | null, nearMiss: NearMiss | null): Recorded {

    let bytes = entryOverhead;
    const headers = request.headers;
    for (const name in headers) {
        bytes += name.length + String(headers[name]).length;
    }

    const rawUrl = always(request.raw.req.url, 'the request\'s raw URL');
    bytes += rawUrl.length;

    // The body as sent: a route's validation may have added defaults to request.payload.
    const parsed = request.orig.payload ?? request.payload;
    const whole = parsed === undefined || parsed === null ? null : JSON.stringify(parsed);
    const truncated = whole !== null && whole.length > options.bodyBytes;
    // A body to cut is scrubbed first, so that no part of a secret across the cut survives it.
    const text = truncated ? copyOf(scrubJsonText(whole, options.secrets).slice(0, options.bodyBytes)) : whole;
    // A string holds a byte a character while every character fits in one, two bytes a character otherwise.
    bytes += text === null ? 0 : text.length * (beyondLatin1.test(text) ? 2 : 1);

    // A dropped request's answer is a symbol: the fault kept the status it would have had.
    const fault = request.app.fault;
    const response = request.response as ResponseObject | symbol;
    const answered = typeof response !== 'symbol';
    const status = answered ? response.statusCode : fault?.status ?? null;
    const code = answered ? (response.statusCode >= 400 ? (response.source as { code: string }).code : null) : fault?.code ?? null;
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
        text,
        truncated,
        secrets: options.secrets
    };

    const answer = answered && response.statusCode < 300 ? digestOf(response.source) : null;
    const admin = request.auth.isAuthenticated && request.auth.credentials.role === 'admin';
    return new Recorded(source, always(request.app.arrival, 'the request\'s arrival'), bytes + (answer?.bytes ?? 0), admin, answer?.digest ?? null, options.secrets);
}


// A value short enough to keep: what a replay can compare without a clock on the wall making it differ.
function isShort(value: unknown): value is AnswerDigest['fields'][string] {

    return value === null || typeof value === 'number' || typeof value === 'boolean' || (typeof value === 'string' && value.length <= maxDigestText);
}


/**
 * The record an answer holds, as a digest: its id and its short top-level values (every answer of the API is a map),
 * with the room they take. Made on every answer, so it only copies: which of them are credentials is asked when a
 * scenario is saved (withoutCredentials), not on the request's way.
 */
export function digestOf(source: unknown): { digest: AnswerDigest; bytes: number } {

    const fields: AnswerDigest['fields'] = {};
    let bytes = 0;
    const entries: [string, unknown][] = Object.entries(Object(source));
    for (const [key, value] of entries) {
        if (isShort(value) && key !== 'id' && !key.endsWith('_at')) {
            fields[key] = value;
            bytes += key.length + String(value).length + 16;
        }
    }

    const id = fieldOf(source, 'id');
    return { digest: { id: typeof id === 'string' ? id : null, fields }, bytes };
}


/** A digest without the fields that are credentials, by their name or their value. */
export function withoutCredentials(digest: AnswerDigest, secrets: readonly string[]): AnswerDigest {

    const kept = Object.entries(digest.fields).filter(([key, value]) => !isCredentialName(key) && !(typeof value === 'string' && isCredentialValue(value, secrets)));
    return { id: digest.id, fields: Object.fromEntries(kept) };
}


// A cut of a long string is a view that keeps all of it alive: the copy holds the cut alone.
function copyOf(cut: string): string {

    const encoding = beyondLatin1.test(cut) ? 'utf16le' : 'latin1';
    return Buffer.from(cut, encoding).toString(encoding);
}


function buildEntry({ request, headers: sentHeaders, query: sent, rawUrl, text, truncated, secrets }: Source): Built {

    const headers: Record<string, string> = {};
    for (const [name, raw] of Object.entries(sentHeaders)) {
        const value = String(raw);
        headers[name] = isCredentialName(name) || isCredentialValue(value, secrets) ? hidden : value;
    }

    const query: Record<string, string | string[]> = {};
    let hiding = false;
    for (const [name, value] of Object.entries(sent)) {
        const secret = isCredentialName(name) || [value].flat().some((item) => isCredentialValue(item, secrets));
        hiding ||= secret;
        query[name] = secret ? hidden : value;
    }

    const mark = rawUrl.indexOf('?');
    const search = hiding ? `?${new URLSearchParams(Object.entries(query).flatMap(([name, value]) => [value].flat().map((item): [string, string] => [name, item]))).toString()}` : (mark === -1 ? '' : rawUrl.slice(mark));
    return {
        head: {
            id: request.id,
            at: new Date(request.received).toISOString(),
            method: request.method.toUpperCase(),
            path: scrubText(request.path, secrets),
            query,
            headers,
            body_truncated: truncated,
            caller: request.caller,
            status: request.status,
            code: request.code,
            duration_ms: Math.max(0, request.completed - request.received),
            route: request.route,
            fault: request.fault,
            near_miss: request.near_miss
        },
        url: scrubText(request.path, secrets) + search,
        bodyText: text === null || truncated ? text : scrubJsonText(text, secrets)
    };
}
