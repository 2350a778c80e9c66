import { setTimeout as sleep } from 'node:timers/promises';

import { matchesType, typePattern, undeliveredPrefix, type TypePattern } from './outbox';
import { signatureHeaders } from './signing';
import { fieldOf, thrownMessage } from './thrown';


// `localgate listen`: reads a data set's event stream as a client and posts each event, signed as Standard Webhooks
// says, to a URL of this machine. It reaches a handler the server cannot (the server in a container, the handler on
// the host), as `stripe listen` does, with nothing but the server's own API.

/** What a listener reads and where it forwards. */
export interface ListenOptions {
    /** The server's base URL (`http://127.0.0.1:3000`). */
    url: string;
    /** The URL each event is posted to. */
    forwardTo: string;
    /** The instance whose events are read; the default data set's when absent. */
    instance?: string;
    /** The types forwarded; null forwards every type an endpoint would get. */
    types: TypePattern[] | null;
    /** The secret each delivery is signed with (`whsec_<base64>`). */
    secret: string;
    /** An admin token for the stream, minted anew for each connection (a listener may run for days). */
    token: () => string;
    /** How long a delivery waits for the handler's answer. */
    timeoutMs: number;
}

/** Where a listener writes its lines: deliveries to out, the connection's news to err. */
export interface ListenIo {
    out(line: string): void;
    err(line: string): void;
}

/** One event of the stream: its id, type and the data line as sent (the event's JSON, forwarded byte for byte). */
export interface StreamEvent {
    id: string;
    type: string;
    data: string;
}

/** A line of the stream longer than any event the server writes is refused rather than held. */
export const maxLineBytes = 1024 * 1024;

/** The wait before the nth reconnection in a row (0 for the first): 0.5 s doubling, at most 10 s. */
export function reconnectDelayMs(failures: number): number {

    return Math.min(500 * 2 ** Math.min(failures, 5), 10_000);
}


/** A stream line over the bound: the listener stops, since the same event would come again after a reconnection. */
export class LineTooLong extends Error {

    constructor() {

        super(`the event stream sent a line over ${maxLineBytes} bytes: no event of localgate is that long, so the URL is probably not a localgate stream`);
    }
}


/**
 * Reads Server-Sent Events from chunks of text: yields each event with an id, a type and data once its blank line
 * comes; comments (heartbeats) and retry lines are skipped. A line is held only up to `maxLineBytes`.
 */
export class EventStreamParser {

    private partial = '';
    private fields: { id?: string; event?: string; data: string[] } = { data: [] };

    /** Takes the next chunk; answers the events it completed. */
    push(chunk: string): StreamEvent[] {

        // A CR that ends the chunk stays with the partial line: the LF of its CRLF may open the next chunk.
        const lines = (this.partial + chunk).split(/\r\n|\r(?!$)|\n/);
        // The last piece is the line still coming (split answers at least one).
        this.partial = String(lines.pop());
        if (Buffer.byteLength(this.partial) > maxLineBytes) {
            throw new LineTooLong();
        }

        const events: StreamEvent[] = [];
        for (const line of lines) {
            if (Buffer.byteLength(line) > maxLineBytes) {
                throw new LineTooLong();
            }

            const event = this.line(line);
            if (event) {
                events.push(event);
            }
        }

        return events;
    }

    private line(line: string): StreamEvent | null {

        if (line === '') {
            const { id, event, data } = this.fields;
            this.fields = { data: [] };
            return id !== undefined && event !== undefined && data.length ? { id, type: event, data: data.join('\n') } : null;
        }

        const colon = line.indexOf(':');
        const name = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (name === 'id') {
            this.fields.id = value;
        }
        else if (name === 'event') {
            this.fields.event = value;
        }
        else if (name === 'data') {
            this.fields.data.push(value);
        }

        return null;
    }
}


/** Whether a listener forwards an event of this type: what an endpoint asking for these types would be sent. */
export function forwards(type: string, types: readonly TypePattern[] | null): boolean {

    return !type.startsWith(undeliveredPrefix) && matchesType(type, types);
}


/** The types a --types value names: patterns separated by commas; empty names none (every type). */
export function typesOf(values: readonly string[]): TypePattern[] | null {

    const texts = values.flatMap((value) => value.split(',')).map((text) => text.trim()).filter(Boolean);
    return texts.length ? texts.map(typePattern) : null;
}


/** What happened to one delivery, as a line: `→ 204 pay.transaction.completed <event id> 12 ms`, or why there was no answer. */
export function deliveryLine(event: Pick<StreamEvent, 'id' | 'type'>, outcome: { status: number } | { error: string }, ms: number, forwardTo: string, timeoutMs: number): string {

    const head = `${event.type} ${event.id}`;
    if ('status' in outcome) {
        return `→ ${outcome.status} ${head} ${ms} ms`;
    }

    switch (outcome.error) {
        case 'timeout': return `→ timeout ${head}: no answer from ${forwardTo} within ${timeoutMs} ms`;
        case 'ECONNREFUSED': return `→ refused ${head}: nothing listens at ${forwardTo} (connection refused)`;
        default: return `→ failed ${head}: ${forwardTo} (${outcome.error})`;
    }
}


// Why a request got no answer: a timeout, else the code of the socket's failure (ECONNREFUSED, ENOTFOUND, …).
function failureOf(err: unknown): string {

    if (fieldOf(err, 'name') === 'TimeoutError') {
        return 'timeout';
    }

    // fetch says only "fetch failed": what failed is its cause's.
    const cause = fieldOf(err, 'cause');
    const said = fieldOf(cause, 'code') ?? fieldOf(cause, 'message');
    return typeof said === 'string' ? said : thrownMessage(err);
}


/** The stream a listener reads: the instance's, or the default data set's. */
export function streamUrl(url: string, instance: string | undefined): string {

    const base = url.replace(/\/+$/, '');
    return instance === undefined ? `${base}/_events/stream` : `${base}/_instances/${encodeURIComponent(instance)}/events/stream`;
}


// A refusal of the stream that no retry mends: the token, the instance, the route.
class Refused extends Error { }

// An error answer is read this far, for its message; a server that is no localgate may send any length.
const maxErrorBytes = 16 * 1024;


// The chunks of an answer's body; none for an answer without one (a 204).
async function* chunksOf(response: Response): AsyncGenerator<Uint8Array> {

    if (response.body) {
        yield* response.body;
    }
}


// At most max bytes of an answer's body, as text: the rest is never read.
async function textOf(response: Response, max: number): Promise<string> {

    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of chunksOf(response)) {
        chunks.push(Buffer.from(chunk));
        size += chunk.length;
        if (size >= max) {
            break;
        }
    }

    return Buffer.concat(chunks).subarray(0, max).toString('utf8');
}


// The message of localgate's error shape, when the text is one.
function messageOf(text: string): string | null {

    try {
        const message = fieldOf(JSON.parse(text), 'message');
        return typeof message === 'string' ? message : null;
    }
    catch {
        return null;
    }
}


/**
 * Forwards a data set's events as they are written, until `stop` aborts: resolves to the exit code (0 once stopped,
 * 1 when the server refuses the stream or sends what is no event stream). A dropped connection is opened again after
 * a bounded wait, resuming after the last event read.
 */
export async function listen(options: ListenOptions, io: ListenIo, stop: AbortSignal): Promise<number> {

    const { forwardTo, timeoutMs } = options;
    const source = streamUrl(options.url, options.instance);
    let lastId: string | null = null;
    let failures = 0;

    const forward = async (event: StreamEvent) => {

        const started = performance.now();
        let outcome: { status: number } | { error: string };
        try {
            const headers = { 'content-type': 'application/json', 'user-agent': 'localgate-listen', ...signatureHeaders(options.secret, event.id, new Date(), event.data) };
            const response = await fetch(forwardTo, { method: 'POST', headers, body: event.data, signal: AbortSignal.any([stop, AbortSignal.timeout(timeoutMs)]) });
            // The answer's body is not shown, nor read: a handler's answer could be of any length.
            await response.body?.cancel();
            outcome = { status: response.status };
        }
        catch (err) {
            if (stop.aborted) {
                return;
            }

            outcome = { error: failureOf(err) };
        }

        io.out(deliveryLine(event, outcome, Math.round(performance.now() - started), forwardTo, timeoutMs));
    };

    const read = async () => {

        const headers: Record<string, string> = { authorization: `Bearer ${options.token()}`, accept: 'text/event-stream' };
        if (lastId !== null) {
            headers['last-event-id'] = lastId;
        }

        const response = await fetch(source, { headers, signal: stop });
        if (response.status !== 200) {
            const message = messageOf(await textOf(response, maxErrorBytes));
            const said = `${source} answered ${response.status}${message === null ? '' : `: ${message}`}`;
            if (response.status === 422 && lastId !== null) {
                // The event to resume after is no longer kept (EVENTS_KEPT, a reset): go on with new events.
                io.err(`localgate listen: ${said}; going on with the events written from now on (some may have been missed)`);
                lastId = null;
                return;
            }

            if (response.status === 429 || response.status >= 500) {
                throw new Error(said);
            }

            throw new Refused(said);
        }

        io.err(failures === 0 ? `Ready: forwarding to ${forwardTo}. Stop with Ctrl-C.` : `localgate listen: reconnected to ${source}`);
        failures = 0;
        const parser = new EventStreamParser();
        const decoder = new TextDecoder();
        for await (const chunk of chunksOf(response)) {
            for (const event of parser.push(decoder.decode(chunk, { stream: true }))) {
                lastId = event.id;
                if (forwards(event.type, options.types)) {
                    await forward(event);
                }
            }
        }

        throw new Error(`${source} ended the stream`);
    };

    io.err(`localgate listen: reading ${source}`);
    io.err(`Signing secret: ${options.secret} (Standard Webhooks, webhook-timestamp on the wall clock)`);
    while (!stop.aborted) {
        try {
            await read();
        }
        catch (err) {
            if (stop.aborted) {
                break;
            }

            if (err instanceof Refused || err instanceof LineTooLong) {
                io.err(`localgate listen: ${err.message}`);
                return 1;
            }

            const wait = reconnectDelayMs(failures);
            failures += 1;
            io.err(`localgate listen: ${failureOf(err) === 'ECONNREFUSED' ? `nothing listens at ${options.url}` : failureOf(err)}; connecting again in ${wait} ms`);
            await sleep(wait, undefined, { signal: stop }).catch(() => undefined);
        }
    }

    return 0;
}
