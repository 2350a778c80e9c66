import Crypto from 'node:crypto';
import Http from 'node:http';
import type { AddressInfo } from 'node:net';

import Joi from 'joi';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

import { eventTypesOf, type Event } from './outbox';
import { builtInNamespaces } from './namespaces';
import { thrownMessage } from './thrown';


// A stand-in for the service whose webhook handler a test checks: it takes localgate's deliveries on a loopback port,
// verifies each as the Standard Webhooks library a handler would use does, and answers what the test tells it to.

/** How a receiver starts. */
export interface ReceiverOptions {
    /** The endpoint's secret (`whsec_<base64>`); minted like localgate mints one when absent: give `receiver.secret` to the endpoint. */
    secret?: string;
    /**
     * The clock a delivery's `webhook-timestamp` is checked against (five minutes either way, as Standard Webhooks
     * says), read as it arrives: the wall clock by default. For an endpoint whose `signing_clock` is `instance`, give
     * `instance` instead: a move of the clock makes attempts due before its target.
     */
    now?: () => Date;
    /**
     * For an endpoint whose `signing_clock` is `instance`: the instance (`t`). A delivery's timestamp is then checked
     * against the instant its attempt was due on the instance's clock, as the instance knows it: the event's
     * `created_at` for a first attempt, a retry's `next_attempt_at` in the delivery journal, or the clock's instant for
     * an attempt made there and then. Within a long move (`advance: '3d'`) an attempt due on the first day holds.
     */
    instance?: AttemptClock;
    /** What the receiver answers when told nothing else (default 204). */
    status?: number;
    /**
     * The event types a body may have to be read as an event: by default those of the built-in namespaces. A server
     * given other namespaces (`createServer({ namespaces })`) writes theirs: give `eventTypesOf(namespaces)`.
     */
    types?: readonly string[];
}

/** What a receiver reads of an instance to find when an attempt was due: a TestInstance has both. */
export interface AttemptClock {
    clock: { now(): Date };
    webhooks: { deliveries: { find(pattern: { webhook_id: string }): { next_attempt_at: string | null }[] } };
}

/** One request the receiver got, in arrival order. */
export interface ReceivedWebhook {
    /** Its place in arrival order: 1 for the first since the receiver started or was cleared. */
    seq: number;
    method: string;
    /** The path and query the request was sent to. */
    path: string;
    /** The request's headers, names in lower case (a repeated one joined with ', '). */
    headers: Record<string, string>;
    /** The body as text, as received. */
    body: string;
    /** The body parsed, when it is the JSON of an event (`{id, type, created_at, data}`); null otherwise. */
    event: Event | null;
    /** The `webhook-id` header: the same for each attempt of one event to one endpoint. */
    webhookId: string | null;
    /** Whether the signature is the secret's, for this id, timestamp and body, and the timestamp within five minutes of `now`. */
    verified: boolean;
    /** Why it is not verified (the library's words: `No matching signature found`, `Message timestamp too old`, …); null when verified. */
    failure: string | null;
    /** The status the receiver answered. */
    status: number;
    /** When it arrived (wall clock). */
    receivedAt: Date;
}

/** A loopback HTTP server that records and verifies webhook deliveries. */
export interface WebhookReceiver {
    /** Where to send deliveries: `http://127.0.0.1:<port>/`; any path under it is taken. */
    readonly url: string;
    /** The secret the receiver verifies with. */
    readonly secret: string;
    /** Every request received since the start (or the last clear), in arrival order. */
    readonly deliveries: ReceivedWebhook[];
    /** Answers `status` to the next `times` requests (default 1), after any answers told before; then the default again. */
    respondWith(status: number, options?: { times?: number }): void;
    /** Resolves to the deliveries once `count` have arrived; rejects after `timeoutMs` (default 5000) saying how many did. */
    waitFor(count: number, options?: { timeoutMs?: number }): Promise<ReceivedWebhook[]>;
    /** Forgets the deliveries received (the answers told stay). */
    clear(): void;
    /** Stops listening and drops open connections. */
    close(): Promise<void>;
}


// A delivery is an event of the data set: far less than this. A bigger body is answered 413 and recorded unverified.
const maxBodyBytes = 1024 * 1024;

// Standard Webhooks' tolerance, which the library applies against the wall clock.
const toleranceMs = 5 * 60 * 1000;


/** Starts a receiver on a free port of 127.0.0.1. */
export async function startReceiver(options: ReceiverOptions = {}): Promise<WebhookReceiver> {

    const secret = options.secret ?? `whsec_${Crypto.randomBytes(32).toString('base64')}`;
    // Throws here, at the start, for a secret that is not base64.
    const webhook = new Webhook(secret);
    const defaultStatus = options.status ?? 204;
    const eventOf = eventReader(options.types ?? eventTypesOf(builtInNamespaces));
    const answers: number[] = [];
    let deliveries: ReceivedWebhook[] = [];
    let waiters: { count: number; resolve: () => void }[] = [];

    const verify = (body: string, headers: Record<string, string>): string | null => {

        try {
            const { instance, now } = options;
            if (instance) {
                verifyAt(webhook, (id, at) => dueInstant(instance, id, at, eventOf(body)), body, headers);
            }
            else if (now) {
                verifyAt(webhook, now, body, headers);
            }
            else {
                webhook.verify(body, headers, { jsonParse: false });
            }

            return null;
        }
        catch (err) {
            // Only WebhookVerificationError is thrown on the way: its message says what did not match.
            return thrownMessage(err);
        }
    };

    const receive = (request: Http.IncomingMessage, response: Http.ServerResponse, body: Buffer | null) => {

        const headers = headersOf(request);
        const text = body?.toString('utf8') ?? '';
        const status = body === null ? 413 : answers.shift() ?? defaultStatus;
        const failure = body === null ? `Body over ${maxBodyBytes} bytes` : verify(text, headers);
        deliveries.push({
            seq: deliveries.length + 1,
            method: String(request.method),
            path: String(request.url),
            headers,
            body: text,
            event: eventOf(text),
            webhookId: headers['webhook-id'] ?? null,
            verified: failure === null,
            failure,
            status,
            receivedAt: new Date()
        });
        response.writeHead(status, { connection: body === null ? 'close' : 'keep-alive' }).end();
        waiters = waiters.filter((waiter) => {

            if (deliveries.length < waiter.count) {
                return true;
            }

            waiter.resolve();
            return false;
        });
    };

    const server = Http.createServer((request, response) => {

        const chunks: Buffer[] = [];
        let size = 0;
        request.on('data', (chunk: Buffer) => {

            size += chunk.length;
            if (size <= maxBodyBytes) {
                chunks.push(chunk);
            }
        });
        request.on('end', () => receive(request, response, size <= maxBodyBytes ? Buffer.concat(chunks) : null));
        // A sender that goes away mid-body: nothing to record, nothing to answer.
        request.on('error', () => response.destroy());
    });

    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;

    return {
        url: `http://127.0.0.1:${port}/`,
        secret,
        get deliveries() {

            return deliveries.slice();
        },
        respondWith(status, { times = 1 } = {}) {

            if (!Number.isInteger(status) || status < 200 || status > 599) {
                throw new RangeError(`status must be an HTTP status from 200 to 599, not ${status}`);
            }

            if (!Number.isInteger(times) || times < 1) {
                throw new RangeError(`times must be a whole number from 1, not ${times}`);
            }

            answers.push(...Array.from({ length: times }, () => status));
        },
        async waitFor(count, { timeoutMs = 5000 } = {}) {

            if (deliveries.length < count) {
                let timer: NodeJS.Timeout | undefined;
                const arrived = new Promise<void>((resolve) => waiters.push({ count, resolve }));
                const late = new Promise<never>((resolve, reject) => {

                    timer = setTimeout(() => reject(new Error(`Expected ${count} webhook deliveries within ${timeoutMs} ms, got ${deliveries.length}`)), timeoutMs);
                });

                try {
                    await Promise.race([arrived, late]);
                }
                finally {
                    clearTimeout(timer);
                }
            }

            return deliveries.slice();
        },
        clear() {

            deliveries = [];
        },
        close() {

            return new Promise<void>((resolve) => {

                server.close(() => resolve());
                server.closeAllConnections();
            });
        }
    };
}


/**
 * The instant an attempt of a message was due on its instance's clock, of those the instance knows the nearest to a
 * timestamp: the event's `created_at` (a first attempt is due as its event is written), each `next_attempt_at` its
 * journal holds for the webhook-id (a retry's), and the clock's instant (an attempt made there and then). Nearest, so
 * that a delivery checked after later attempts were journaled is checked as on its arrival.
 */
export function dueInstant(instance: AttemptClock, webhookId: string, at: Date, event: Event | null): Date {

    const dues = instance.webhooks.deliveries.find({ webhook_id: webhookId }).flatMap(({ next_attempt_at: next }) => (next === null ? [] : [Date.parse(next)]));
    const candidates = [...(event ? [Date.parse(event.created_at)] : []), ...dues].filter(Number.isFinite);
    candidates.push(instance.clock.now().getTime());
    return new Date(candidates.reduce((nearest, due) => (Math.abs(due - at.getTime()) < Math.abs(nearest - at.getTime()) ? due : nearest)));
}


// What Webhook.verify checks, with the timestamp held against another clock than the wall clock: the signature is
// still the library's own (Webhook.sign), compared in constant time. The clock is told the message's id and instant.
function verifyAt(webhook: Webhook, clock: (webhookId: string, at: Date) => Date, body: string, headers: Record<string, string>): void {

    const id = headers['webhook-id'];
    const timestamp = headers['webhook-timestamp'];
    const signatures = headers['webhook-signature'];
    if (!id || !timestamp || !signatures) {
        throw new WebhookVerificationError('Missing required headers');
    }

    const at = Number.parseInt(timestamp, 10) * 1000;
    if (Number.isNaN(at)) {
        throw new WebhookVerificationError('Invalid Signature Headers');
    }

    const now = clock(id, new Date(at));
    if (now.getTime() - at > toleranceMs) {
        throw new WebhookVerificationError('Message timestamp too old');
    }

    if (at - now.getTime() > toleranceMs) {
        throw new WebhookVerificationError('Message timestamp too new');
    }

    const expected = Buffer.from(webhook.sign(id, new Date(at), body));
    const matches = signatures.split(' ').some((signature) => {

        const given = Buffer.from(signature);
        return given.length === expected.length && Crypto.timingSafeEqual(given, expected);
    });

    if (!matches) {
        throw new WebhookVerificationError('No matching signature found');
    }
}


// Lower-case names, one string each, as the library's verify takes them.
function headersOf(request: Http.IncomingMessage): Record<string, string> {

    return Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, [value].flat().join(', ')]));
}


// The body as an event, when it has an event's shape and one of the types; a receiver also records what is not one.
function eventReader(types: readonly string[]): (text: string) => Event | null {

    const eventSchema = Joi.object<Event>({
        id: Joi.string().required(),
        type: Joi.string().valid(...types).required(),
        created_at: Joi.string().required(),
        data: Joi.object().required()
    });

    return (text) => {

        let parsed: unknown;
        try {
            parsed = JSON.parse(text);
        }
        catch {
            return null;
        }

        const { error, value } = eventSchema.validate(parsed);
        return error ? null : value;
    };
}
