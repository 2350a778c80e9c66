import type { OutboundAnswer } from './sender';
import { BoundedJournal, type JournalBudget } from './journal';
import { hidden, isCredentialName, isCredentialValue, scrubJsonText, scrubText } from '../secrets';
import { typePattern } from '../outbox';


/** One side of an attempt as the journal keeps it: its headers and the start of its body, credentials hidden. */
export interface KeptMessage {
    headers: Record<string, string>;
    // The first keptBodyBytes of the body, as UTF-8 text.
    body: string;
    body_truncated: boolean;
}


/** One attempt to deliver an event to an endpoint, as the delivery journal keeps it. */
export interface DeliveryEntry {
    // <webhook_id>.<attempt>
    id: string;
    event_id: string;
    type: string;
    webhook_id: string;
    endpoint_id: string;
    url: string;
    attempt: number;
    // The attempt's instant on the data set's clock.
    at: string;
    status: number | null;
    duration_ms: number;
    error: string | null;
    // The outbound fault rule that acted on it.
    fault: string | null;
    // Null when delivered or given up.
    next_attempt_at: string | null;
    // What the attempt sent; null when nothing left (a fault rule dropped it before, a host not allowed).
    request: KeptMessage | null;
    // What came back; null when no answer came.
    response: KeptMessage | null;
}

/** What an attempt sent and what came back, as the sender saw them, before the journal bounds and scrubs them. */
export interface AttemptExchange {
    sent: { headers: Record<string, string>; body: string } | null;
    answer: OutboundAnswer | null;
    // The endpoint's own secrets: hidden wherever they show.
    secrets: readonly string[];
}

/** What count and find match: each field given must hold; `type` may end with `*`, `status` may be null. */
export interface DeliveryPattern {
    type?: string;
    status?: number | null;
    attempt?: number;
    endpoint_id?: string;
    webhook_id?: string;
}

interface Kept {
    entry: DeliveryEntry;
    // What the attempt sent and got, as the sender saw it (each body cut to the part ever scanned), until the entry is
    // first read: bounding and scrubbing it on every attempt cost more than the rest of the attempt.
    exchange: AttemptExchange | null;
    bytes: number;
}

// What an entry holds beyond its texts, as the request journal estimates it: keys, numbers and the object itself.
const entryOverheadBytes = 400;

/** The bytes of a body the journal keeps, each way. */
export const keptBodyBytes = 1024;

// The bytes of a body scanned for credentials before it is cut: what a receiver answers past them is never kept, and a
// 64 KiB answer costs an attempt no more than a short one.
const scannedBodyBytes = 4 * 1024;

/** The headers the journal keeps of each side, in the order they came, and the characters of each name and value. */
export const keptHeaders = 32;
export const keptHeaderChars = 512;

// The signature is an HMAC of the body, no secret: a receiver's failed check is read from it.
const shownHeaders = new Set(['webhook-signature']);


// A text (or its UTF-8 bytes) cut to at most `bytes` of UTF-8, never inside a character.
function cutText(text: string | Buffer, bytes: number): { text: string; truncated: boolean } {

    const encoded = typeof text === 'string' ? Buffer.from(text) : text;
    if (encoded.length <= bytes) {
        return { text: typeof text === 'string' ? text : text.toString(), truncated: false };
    }

    let end = bytes;
    // A continuation byte (10xxxxxx) is inside a character: the cut goes before the byte that starts it.
    while ((encoded.readUInt8(end) & 0xc0) === 0x80) {
        --end;
    }

    return { text: encoded.subarray(0, end).toString(), truncated: true };
}


// The headers kept of one side: the first keptHeaders names (a repeated name's values joined), lower case, each name
// and value cut; a credential's value hidden.
function keptHeadersOf(pairs: readonly (readonly [string, string])[], secrets: readonly string[]): Record<string, string> {

    // A map: a receiver's header may be named __proto__.
    const headers = new Map<string, string>();
    for (const [rawName, value] of pairs) {
        const name = rawName.toLowerCase().slice(0, keptHeaderChars);
        const shown = shownHeaders.has(name) || !(isCredentialName(name) || isCredentialValue(value, secrets));
        const kept = shown ? scrubText(value, secrets).slice(0, keptHeaderChars) : hidden;
        const before = headers.get(name);
        if (before !== undefined) {
            headers.set(name, `${before}, ${kept}`.slice(0, keptHeaderChars));
        }
        else if (headers.size < keptHeaders) {
            headers.set(name, kept);
        }
    }

    return Object.fromEntries(headers);
}


// One side as kept: credentials hidden before the body is cut, so that no part of one across the cut survives it.
// Only the start of a long body is scanned: a credential that begins in the kept KiB ends within the scan.
function keptMessage(pairs: readonly (readonly [string, string])[], body: string | Buffer, secrets: readonly string[]): KeptMessage {

    const scanned = cutText(body, scannedBodyBytes);
    const { text, truncated } = cutText(scrubText(scrubJsonText(scanned.text, secrets), secrets), keptBodyBytes);
    return { headers: keptHeadersOf(pairs, secrets), body: text, body_truncated: scanned.truncated || truncated };
}


/** What the journal keeps of an attempt's exchange: each side bounded, the server's secrets and the endpoint's hidden. */
export function keptExchange(exchange: AttemptExchange, secrets: readonly string[]): Pick<DeliveryEntry, 'request' | 'response'> {

    // The key a whsec_ secret spells is as secret as the secret itself.
    const hide = [...secrets, ...exchange.secrets.flatMap((secret) => [secret, secret.replace(/^whsec_/, '')])].filter(Boolean);
    const { sent, answer } = exchange;
    return {
        request: sent === null ? null : keptMessage(Object.entries(sent.headers), sent.body, hide),
        response: answer === null ? null : keptMessage(answer.headers, answer.body, hide)
    };
}


// An exchange as the journal holds it until it is read: each body no longer than what keptMessage scans of it, so that
// an entry never holds a receiver's 64 KiB. A string is cut by characters (at least as many bytes).
function heldExchange(exchange: AttemptExchange): AttemptExchange {

    const { sent, answer } = exchange;
    return {
        sent: sent && sent.body.length > scannedBodyBytes ? { headers: sent.headers, body: sent.body.slice(0, scannedBodyBytes) } : sent,
        answer: answer && answer.body.length > scannedBodyBytes ? { headers: answer.headers, body: Buffer.from(answer.body.subarray(0, scannedBodyBytes)) } : answer,
        secrets: exchange.secrets
    };
}


// The memory an exchange held until it is read takes: its bodies and its headers' names and values.
function exchangeBytes({ sent, answer }: AttemptExchange): number {

    let chars = 0;
    for (const [name, value] of Object.entries({ ...sent?.headers })) {
        chars += name.length + value.length;
    }

    for (const [name, value] of answer?.headers ?? []) {
        chars += name.length + value.length;
    }

    return 2 * (chars + (sent?.body.length ?? 0)) + (answer?.body.length ?? 0);
}


// The memory an entry takes but for what it sent and got.
function entryBytes(entry: Omit<DeliveryEntry, 'request' | 'response'>): number {

    return entryOverheadBytes + 2 * (entry.url.length + entry.event_id.length + entry.endpoint_id.length + entry.webhook_id.length);
}


function messageBytes(message: KeptMessage | null): number {

    if (message === null) {
        return 0;
    }

    let chars = message.body.length;
    for (const [name, value] of Object.entries(message.headers)) {
        chars += name.length + value.length;
    }

    return 2 * chars;
}


/** Whether an entry matches a pattern. */
export function matchesDelivery(entry: DeliveryEntry, pattern: DeliveryPattern): boolean {

    if (pattern.type !== undefined) {
        const { pattern: text, prefix } = typePattern(pattern.type);
        if (prefix ? !entry.type.startsWith(text) : entry.type !== text) {
            return false;
        }
    }

    return (['status', 'attempt', 'endpoint_id', 'webhook_id'] as const).every((field) => pattern[field] === undefined || pattern[field] === entry[field]);
}


/**
 * The attempts one data set made, in the order they were made: at most `size` entries, the oldest dropped first, in
 * the memory the request journals share.
 */
export class DeliveryJournal extends BoundedJournal<Kept> {

    constructor(size: number, budget: JournalBudget, private readonly secrets: readonly string[] = []) {

        super(size, budget);
    }

    /**
     * Keeps an attempt, with what it sent and what came back: bounded, and scrubbed of credentials as it is first read
     * (every attempt is kept, few are read).
     */
    record(entry: Omit<DeliveryEntry, 'request' | 'response'>, exchange: AttemptExchange): void {

        const held = heldExchange(exchange);
        this.keep({ entry: { ...entry, request: null, response: null }, exchange: held, bytes: entryBytes(entry) + exchangeBytes(held) }, (kept) => this.entries.push(kept));
    }

    /** Keeps an attempt as it is. */
    add(entry: DeliveryEntry): void {

        this.keep({ entry, exchange: null, bytes: entryBytes(entry) + messageBytes(entry.request) + messageBytes(entry.response) }, (kept) => this.entries.push(kept));
    }

    /** The attempts, oldest first. */
    list(): DeliveryEntry[] {

        return this.entries.map((kept) => {

            if (kept.exchange) {
                Object.assign(kept.entry, keptExchange(kept.exchange, this.secrets));
                kept.exchange = null;
            }

            return kept.entry;
        });
    }
}
