import Crypto from 'node:crypto';

import type { Request, Server } from '@hapi/hapi';
import Joi from 'joi';

import { requireAdmin } from '../auth';
import { failure } from '../errors';
import { maskedSecret, secretRegex } from '../events';
import { noContent, timestamp, wording } from '../fields';
import { refuseDeepBody } from '../nesting';


export const inboxPath = '/console/inbox/{data_set}';

export const inboxApiPath = '/console/api/inbox/{data_set}';

/** The largest webhook body the inbox reads; an event is far smaller. */
export const maxInboxBodyBytes = 64 * 1024;

/** The webhooks one inbox keeps, the newest. */
export const inboxSize = 100;

/**
 * The inboxes remembered of each kind: those an admin set a secret for, and those only posts made. Each kind forgets
 * its least recently set or written to past this bound, so a post (which anyone may make) never evicts a set one.
 */
export const maxInboxes = 64;

const signatureInvalid = () => failure(422, 'webhook_signature_invalid', 'The webhook-signature is not the HMAC of the secret this inbox was given');

// The longest id or type kept from what a sender claims.
const maxFieldChars = 200;

export interface InboxEntry {
    webhook_id: string | null;
    type: string | null;
    event_id: string | null;
    verified: boolean;
    at: string;
}

interface Inbox {
    secret: string | null;
    entries: InboxEntry[];
}

const dataSetParams = Joi.object({
    data_set: Joi.string().pattern(/^[A-Za-z0-9-]{1,64}$/).required().description('default, or an instance id')
});

const secretPayload = Joi.object({
    secret: wording(Joi.string().max(200).pattern(secretRegex), { 'string.pattern.base': '{{#label}} must be whsec_ followed by the base64 of its key' })
        .required().description('The whsec_ secret of the endpoint whose URL is this inbox, as PUT …/webhooks answered it')
}).label('ConsoleInboxSecret');

const entrySchema = Joi.object({
    webhook_id: Joi.string().allow(null).required(),
    type: Joi.string().allow(null).required(),
    event_id: Joi.string().allow(null).required(),
    verified: Joi.boolean().required().description('Whether webhook-signature is the HMAC of the secret set for this inbox'),
    at: timestamp.required().description('When it arrived, on the wall clock')
}).label('ConsoleInboxEntry');

const inboxSchema = Joi.object({
    secret: Joi.string().allow(null).required().description(`${maskedSecret} when a secret is set (never the secret), null when not`),
    data: Joi.array().items(entrySchema).required().description('Newest first'),
    count: Joi.number().integer().required()
}).label('ConsoleInbox');


/** Whether a Standard Webhooks signature header holds a v1 signature of the body by this secret. */
export function signatureVerified(secret: string, webhookId: string, stamp: string, body: Buffer, header: string): boolean {

    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const expected = Crypto.createHmac('sha256', key).update(`${webhookId}.${stamp}.`).update(body).digest();
    // Several space-separated signatures are allowed, so that a receiver keeps working while a secret rotates.
    return header.split(' ').some((part) => {

        const signature = Buffer.from(part.startsWith('v1,') ? part.slice(3) : '', 'base64');
        return signature.length === expected.length && Crypto.timingSafeEqual(signature, expected);
    });
}


// A field the sender claims, kept only as a short string.
const claimed = (value: unknown): string | null => (typeof value === 'string' ? value.slice(0, maxFieldChars) : null);


// A body that may be anything, parsed once (hapi's parser and JSON.parse do not recurse): undefined when it is no JSON.
function parsedBody(body: Buffer): unknown {

    try {
        return JSON.parse(body.toString('utf8'));
    }
    catch {
        return undefined;
    }
}


// The event's type and id, read from a parsed body that may be anything.
function eventFields(event: unknown): { type: string | null; event_id: string | null } {

    const fields = typeof event === 'object' && event !== null ? new Map(Object.entries(event)) : new Map<string, unknown>();
    return { type: claimed(fields.get('type')), event_id: claimed(fields.get('id')) };
}


/** The console's webhook receivers, one per data set, in memory: what arrived and the secret it is checked against. */
export class WebhookInboxes {

    // Apart, each bounded on its own: an admin's inbox is made by setSecret alone, a stranger's by a post alone.
    private readonly set = new Map<string, Inbox>();
    private readonly unset = new Map<string, Inbox>();

    /** Sets the secret a data set's webhooks are checked against, from now on, keeping what arrived before. */
    setSecret(dataSet: string, secret: string): void {

        const inbox = this.set.get(dataSet) ?? this.unset.get(dataSet) ?? { secret: null, entries: [] };
        this.unset.delete(dataSet);
        use(this.set, dataSet, inbox).secret = secret;
    }

    /** Records one webhook that arrived, and says whether its signature is the inbox's secret's. */
    receive(dataSet: string, headers: Record<string, unknown>, body: Buffer, event: unknown): InboxEntry {

        const owned = this.set.get(dataSet);
        const inbox = owned ? use(this.set, dataSet, owned) : use(this.unset, dataSet, this.unset.get(dataSet) ?? { secret: null, entries: [] });
        const header = (name: string): string => String(headers[name] ?? '');
        const verified = inbox.secret !== null && signatureVerified(inbox.secret, header('webhook-id'), header('webhook-timestamp'), body, header('webhook-signature'));
        const entry = { webhook_id: claimed(headers['webhook-id']), ...eventFields(event), verified, at: new Date().toISOString() };
        inbox.entries.unshift(entry);
        inbox.entries.length = Math.min(inbox.entries.length, inboxSize);
        return entry;
    }

    /** What a data set's inbox holds: its secret masked, its webhooks newest first. */
    read(dataSet: string): { secret: string | null; data: InboxEntry[]; count: number } {

        const inbox = this.set.get(dataSet) ?? this.unset.get(dataSet);
        const entries = inbox?.entries ?? [];
        return { secret: inbox?.secret ? maskedSecret : null, data: [...entries], count: entries.length };
    }
}


// Marks an inbox the latest used of its kind, the least recently used forgotten past maxInboxes.
function use(inboxes: Map<string, Inbox>, dataSet: string, inbox: Inbox): Inbox {

    inboxes.delete(dataSet);
    inboxes.set(dataSet, inbox);
    // The least recently used come first in the map's order.
    for (const [oldest] of inboxes) {
        if (inboxes.size <= maxInboxes) {
            break;
        }

        inboxes.delete(oldest);
    }

    return inbox;
}


const consoleOnly = 'Console only: mounted with the console API.';


/** The console's webhook inbox routes: the receiver (no auth: it is a webhook target) and the page's admin reads and secret. */
export function inboxRoutes(server: Server, addressedLocally: (request: Pick<Request, 'info'>) => void): void {

    const inboxes = new WebhookInboxes();
    const admin = { ext: { onPostAuth: { method: requireAdmin } } };

    // Unparsed, so that the signature is checked over the bytes as sent.
    server.route<{ Params: { data_set: string }; Payload: Buffer }>({
        method: 'POST',
        path: inboxPath,
        options: {
            auth: false,
            cors: false,
            tags: ['api', 'console'],
            description: 'Receive a webhook in the console\'s inbox',
            notes: `${consoleOnly} Set as a data set's webhook endpoint (http://127.0.0.1:<port>/console/inbox/<default or instance id>). Records {webhook_id, type, event_id, verified, at}, the newest ${inboxSize} per data set. Answers 204 when webhook-signature is the HMAC of the secret set with PUT ${inboxApiPath}, else 422 webhook_signature_invalid (recorded all the same), as a receiver that checks signatures does. The body is at most ${maxInboxBodyBytes} bytes (413).`,
            validate: { params: dataSetParams },
            payload: { parse: false, output: 'data', maxBytes: maxInboxBodyBytes },
            plugins: { localgate: { errors: { 422: signatureInvalid() } } },
            response: { status: { 204: noContent } },
            handler(request, h) {

                addressedLocally(request);
                // Bounded in depth before anything reads it, as every body the server parses.
                const event = parsedBody(request.payload);
                refuseDeepBody(event);
                const entry = inboxes.receive(request.params.data_set, request.headers, request.payload, event);
                if (!entry.verified) {
                    throw signatureInvalid();
                }

                return h.response().code(204);
            }
        }
    });

    server.route<{ Params: { data_set: string }; Payload: { secret: string } }>({
        method: 'PUT',
        path: inboxApiPath,
        options: {
            cors: false,
            tags: ['api', 'console'],
            description: 'Set the secret the console\'s inbox checks a data set\'s webhooks with',
            notes: `${consoleOnly} Admin token required. The secret is kept in memory and never answered again.`,
            ...admin,
            validate: { params: dataSetParams, payload: secretPayload },
            response: { status: { 204: noContent } },
            handler(request, h) {

                addressedLocally(request);
                inboxes.setSecret(request.params.data_set, request.payload.secret);
                return h.response().code(204);
            }
        }
    });

    server.route<{ Params: { data_set: string } }>({
        method: 'GET',
        path: inboxApiPath,
        options: {
            cors: false,
            tags: ['api', 'console'],
            description: 'Read the console\'s inbox of a data set',
            notes: `${consoleOnly} Admin token required. The webhooks that arrived, newest first, verified or not.`,
            ...admin,
            validate: { params: dataSetParams },
            response: { status: { 200: inboxSchema } },
            handler(request) {

                addressedLocally(request);
                return inboxes.read(request.params.data_set);
            }
        }
    });
}
