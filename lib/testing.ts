import Crypto from 'node:crypto';

import type { Server, ServerInjectOptions, ServerInjectResponse } from '@hapi/hapi';
import type Joi from 'joi';

import { mintToken } from './auth';
import type { Options } from './config';
import type { AppliedCounts } from './data-set/transitions';
import type { DeliveryEntry, DeliveryPattern } from './events/deliveries';
import { listEvents } from './events/log';
import { eventTypesOf, typePattern, type Event } from './events/model';
import { eventSchemas } from './events/schemas';
import { endpointChangePayload, recoverPayload, resendPayload, rotatePayload } from './events/webhook-schemas';
import { webhooksOf, type EndpointInput, type WebhookEndpointInput, type WebhookEndpointRead, type WebhookEndpointSet } from './events/webhooks';
import { faultSchemas, faultsOf, type FaultRuleInput, type FaultRules } from './faults';
import { createServer } from './index';
import type { Instance } from './instances';
import { liveInstance } from './instances/lookup';
import { instanceOptions as optionsOf, type NewInstance } from './instances/options';
import { durationMs, newInstanceSchema } from './instances/schemas';
import { journalOf, requestPatternSchema, type JournalEntry, type RequestPattern } from './journal';


export { startReceiver, type ReceivedWebhook, type ReceiverOptions, type WebhookReceiver } from './webhook-receiver';
export type { DeliveryEntry as WebhookDelivery, DeliveryPattern as WebhookDeliveryPattern } from './events/deliveries';
export type { Event, EventType, SigningClock } from './events/model';
export { eventTypesOf } from './events/model';
export type { WebhookEndpointInput, WebhookEndpointRead, WebhookEndpointSet } from './events/webhooks';


// The kit a test suite imports as localgate/testing: one server per suite, a fresh instance per test.

export interface TestInstanceOptions {
    /** An instance (or its id) to fork: the new one is a copy of it as it is now; no other option but failOnUnexpected goes with it. */
    from?: TestInstance | string;
    /** 'demo' (default) loads the demo data set, 'none' starts empty. */
    seed?: 'demo' | 'none';
    /** Records to load, in the API's shape: {"<namespace>": {"<collection>": [records]}}. */
    fixture?: unknown;
    /** An ISO 8601 UTC instant at which the instance's clock stands still until moved. */
    clock?: string;
    /** 'sequential' derives every new id from a counter of the instance. */
    ids?: 'random' | 'sequential';
    /** true gives the instance a provisioned pay namespace. */
    pay?: boolean;
    /** true makes close() reject, naming each request that matched no route or got a 5xx no fault injected. */
    failOnUnexpected?: boolean;
}

/** The instance's fault rules, set from the test. */
export interface TestFaults {
    /** Replaces the rules, as PUT /_instances/{id}/faults does; returns them as stored, each with its id. */
    set(rules: FaultRuleInput[], options?: { seed?: number }): FaultRules;
    /** The rules with their hits. */
    get(): FaultRules;
    /** Removes every rule. */
    clear(): void;
}

/** What the instance's clients sent, from its request journal. */
export interface TestRequests {
    /** Every entry, oldest first. */
    list(): JournalEntry[];
    /** How many entries a WireMock request pattern matches. */
    count(pattern?: RequestPattern): number;
    /** The entries a WireMock request pattern matches, oldest first. */
    find(pattern?: RequestPattern): JournalEntry[];
    /** Forgets every entry. */
    clear(): void;
}

/** The webhook attempts the instance made, from its delivery journal. */
export interface TestDeliveries {
    /** Every attempt kept, in the order they were made. */
    list(): DeliveryEntry[];
    /** How many attempts a pattern matches ({type, status, attempt, endpoint_id, webhook_id}, each given must hold; type may end with *). */
    count(pattern?: DeliveryPattern): number;
    /** The attempts a pattern matches, in the order they were made. */
    find(pattern?: DeliveryPattern): DeliveryEntry[];
    /** Forgets every attempt (pending deliveries go on). */
    clear(): void;
}

/** The instance's webhook endpoints, set from the test. */
export interface TestWebhooks {
    /** Replaces the endpoints, as PUT /_instances/{id}/webhooks does; resolves to them as stored, each with its id and its secret in full. */
    set(endpoints: WebhookEndpointInput[]): Promise<WebhookEndpointSet[]>;
    /** The endpoints, secrets masked, each with its delivered and failed counts. */
    get(): Promise<WebhookEndpointRead[]>;
    /** Removes every endpoint and the deliveries pending to them. */
    clear(): Promise<void>;
    /** Makes every attempt due at the instance's current instant; resolves to how many were made. */
    flush(): Promise<number>;
    /** Pauses an endpoint, as PATCH …/webhooks/{endpoint_id} {"disabled": true} does: its deliveries wait, pending; resolves to it as read back. */
    disable(endpointId: string): Promise<WebhookEndpointRead>;
    /** Enables an endpoint (paused, or disabled after giving up WEBHOOK_DISABLE_AFTER deliveries in a row): what waited goes in due order. */
    enable(endpointId: string): Promise<WebhookEndpointRead>;
    /** Gives an endpoint a new secret, the old one signing beside it for `overlap` (24h when left out) of the instance's clock; resolves to it with the new secret in full. */
    rotate(endpointId: string, options?: { overlap?: string }): Promise<WebhookEndpointSet>;
    /** Makes a new attempt of an event now, the same webhook-id, to each endpoint it matches or to `endpoint_id`; resolves to how many were made. */
    resend(eventId: string, options?: { endpoint_id?: string }): Promise<number>;
    /** Sends again each failed or given-up delivery to an endpoint of the events from `since` (an ISO 8601 UTC instant) on; resolves to how many attempts were made. */
    recover(endpointId: string, since: string): Promise<number>;
    readonly deliveries: TestDeliveries;
}

/** Which events a list reads, as GET …/events takes it. */
export interface EventQuery {
    /** An event id: the events after it (from the oldest kept without it); one the instance does not hold rejects. */
    after?: string;
    /** An event type, or a prefix ending in * (`pay.*`). */
    type?: string;
    /** At most this many (1 to 1000, default 100): read on after the last for more. */
    limit?: number;
}

/** The instance's events. */
export interface TestEvents {
    /** A page of the events in their order (the same each run with sequential ids). */
    list(query?: EventQuery): Promise<Event[]>;
}

/**
 * What a move of the clock did: the transitions it applied, counted by type, the webhook attempts it made, and the
 * deliveries with an attempt due by the new instant still to make when it answered at its deadline (0 otherwise).
 */
export interface ClockMove {
    now: Date;
    applied: AppliedCounts;
    attempted: number;
    remaining: number;
}

/** The instance's clock, read and moved from the test. */
export interface TestClock {
    /** The instance's current time. */
    now(): Date;
    /**
     * Freezes the clock at an instant, applying every transition that falls due on the way (payments settling,
     * bookings starting and ending; offers are read off the clock); resolves to how many of each type were applied.
     */
    set(instant: string | Date): Promise<AppliedCounts>;
    /**
     * Moves the clock forward (500ms, 90s, 30m, 2h, 3d, or milliseconds) and freezes it there, applying what falls due
     * on the way; resolves to how many of each type were applied ({} for none), as set does.
     */
    advance(by: string | number): Promise<AppliedCounts>;
    /**
     * Moves the clock as set ({ to }) or advance ({ by }) does, and resolves to the whole of what the move did: the
     * counts set and advance resolve to, the webhook attempts made on the way (first attempts of the events the move
     * wrote, and retries due meanwhile), each in due order between the transitions, and `remaining`: past
     * CLOCK_MOVE_DEADLINE_MS the move resolves with the attempts left counted there, made after it in due order.
     */
    move(to: { to: string | Date } | { by: string | number }): Promise<ClockMove>;
}

/** One isolated data set of the kit's server. */
export interface TestInstance {
    readonly id: string;
    /** The prefix of the instance's paths on a listening server: /i/<id>. */
    readonly basePath: string;
    /** The console opened on this instance, once the kit listens (undefined before): where a failed test can point. */
    readonly consoleUrl: string | undefined;
    readonly clock: TestClock;
    readonly faults: TestFaults;
    readonly requests: TestRequests;
    readonly webhooks: TestWebhooks;
    readonly events: TestEvents;
    /** Injects a request into the instance; the url is the API's own (/v1/...). */
    inject(options: string | ServerInjectOptions): Promise<ServerInjectResponse>;
    /** A bearer token for a subject, signed with the server's secret; ttlSec: whole seconds (default 3600), negative for one that expired that long ago, 0 throws. */
    token(subject: string, options?: { ttlSec?: number; admin?: boolean }): string;
    /** Authorization headers for a subject. */
    auth(subject: string): { authorization: string };
    /** Back to the state at creation: data, event log, clock and ids; webhook endpoints, fault rules and journals stay. */
    reset(): Promise<void>;
    /** A new instance that is a copy of this one as it is now: data, event log, clock and id counter, and no webhook endpoint. */
    fork(options?: { failOnUnexpected?: boolean }): Promise<TestInstance>;
    /** Keeps a copy of the current state; resolves to its id. */
    snapshot(): Promise<string>;
    /** The whole state as a fixture file, as GET /_instances/{id}/export answers it: kit.instance({ seed: 'none', fixture }) loads it back. */
    export(): Promise<Record<string, unknown>>;
    /** Puts back the state a snapshot holds (its deliveries pending to the endpoints still set); webhook endpoints, fault rules and journals stay. */
    restore(snapshotId: string): Promise<void>;
    /** Deletes the instance; with failOnUnexpected, rejects afterwards naming each unexpected request. */
    close(): Promise<void>;
}

export interface TestKit {
    readonly server: Server;
    /** A new instance: migrated, seeded (unless seed is 'none'), with the fixture loaded. */
    instance(options?: TestInstanceOptions): Promise<TestInstance>;
    /** Starts listening on a free loopback port; resolves to the URL for HTTP clients. */
    listen(): Promise<string>;
    /** Stops the server and frees every instance. */
    close(): Promise<void>;
}


/** Builds the server once, in memory, with logging off and a fresh secret; options override any setting. */
export async function createTestKit(options: Options = {}): Promise<TestKit> {

    const server = await createServer({
        storage: 'memory',
        logLevel: 'silent',
        jwtSecret: Crypto.randomBytes(32).toString('hex'),
        port: 0,
        ...options
    });

    const { secret, instances } = server.app.localgate;
    // A token's claims change once a second (iat, exp): one minted in this second is handed out again, the same text a
    // new signature would give, so that a test's token costs neither an HMAC here nor a verification in the server.
    const minted = { second: -1, tokens: new Map<string, string>() };
    const token = (subject: string, tokenOptions: { ttlSec?: number; admin?: boolean } = {}) => {

        const second = Math.floor(Date.now() / 1000);
        if (second !== minted.second) {
            minted.second = second;
            minted.tokens.clear();
        }

        const key = `${tokenOptions.ttlSec}/${Boolean(tokenOptions.admin)}/${subject}`;
        let value = minted.tokens.get(key);
        if (value === undefined) {
            value = mintToken(secret, subject, tokenOptions.ttlSec, { admin: tokenOptions.admin });
            minted.tokens.set(key, value);
        }

        return value;
    };

    const kit: TestKit = {
        server,
        instance(instanceOptions: TestInstanceOptions = {}) {

            const { failOnUnexpected = false, from, ...creation } = instanceOptions;
            // A throw (bad options, a bad fixture, the limit) becomes the rejection.
            return new Promise<Instance>((resolve) => {

                // The rules of POST /_instances, and its defaults.
                const source = typeof from === 'object' ? from.id : from;
                const { error, value } = newInstanceSchema.validate({ ...creation, from: source }, { errors: { wrap: { label: false } } });
                if (error) {
                    throw new Error(`Invalid instance options: ${error.message}`);
                }

                resolve(instances.create(optionsOf(value as NewInstance, 'fixture', instances.namespaces)));
            }).then((made) => testInstance(server, made, token, failOnUnexpected, kit));
        },
        async listen() {

            await server.start();
            return server.info.uri;
        },
        close: () => server.stop()
    };

    return kit;
}


// Validates as the routes do, so that the kit refuses what HTTP refuses, in the same words.
function validated<T>(schema: Joi.Schema, input: unknown, what: string): T {

    const { error, value } = schema.validate(input, { errors: { wrap: { label: false } } });
    if (error) {
        throw new Error(`Invalid ${what}: ${error.message}`);
    }

    return value as T;
}


// A request the WireMock JUnit rule would fail a test on: no route took it, or it got a 5xx no fault injected.
function unexpected(entry: JournalEntry): string | null {

    if (entry.near_miss) {
        return `${entry.method} ${entry.path} matched no route (closest: ${entry.near_miss.method} ${entry.near_miss.path})`;
    }

    return entry.status! >= 500 && entry.fault === null ? `${entry.method} ${entry.path} answered ${entry.status} ${entry.code}` : null;
}


// A call of the instance's, whose throw (a deleted instance, say) becomes the rejection.
function asPromise<T>(call: () => Promise<T>): Promise<T> {

    return new Promise((resolve) => {

        resolve(call());
    });
}


// The target of a move of the clock, as PUT …/clock takes it.
function clockTarget(to: { to: string | Date } | { by: string | number }): { now: Date } | { advance: number } {

    if ('to' in to) {
        return { now: new Date(to.to) };
    }

    return { advance: typeof to.by === 'number' ? to.by : durationMs(to.by) };
}


// A page of the instance's events, the query checked as GET …/events checks it.
async function eventsOf(instance: Instance, options: EventQuery, types: readonly string[]): Promise<Event[]> {

    const { after, type, limit } = validated<Required<Pick<EventQuery, 'limit'>> & EventQuery>(eventSchemas(types).listQuery, options, 'event query');
    const patterns = type === undefined ? null : [typePattern(type)];
    return (await listEvents(await instance.data.eventLogs(), { after: after ?? null, types: patterns, limit })).data;
}


function testInstance(server: Server, instance: Instance, token: TestInstance['token'], failOnUnexpected: boolean, kit: TestKit): TestInstance {

    const registry = server.app.localgate.instances;
    const types = eventTypesOf(server.app.localgate.settings.namespaces);
    // Each call reaches the instance as a request does: a use that keeps it alive, or instance_not_found once it is gone.
    const live = (): Instance => liveInstance(registry, instance.id);
    const move: TestClock['move'] = async (to) => {

        const moving = live();
        const { counts, attempted, remaining } = await moving.moveClock(clockTarget(to));
        return { now: moving.now(), applied: counts, attempted, remaining };
    };

    return {
        id: instance.id,
        basePath: instance.basePath,
        get consoleUrl() {

            return server.info.started ? `${server.info.uri}/console?instance=${encodeURIComponent(instance.id)}` : undefined;
        },
        clock: {
            now: () => live().now(),
            set: async (instant) => (await move({ to: instant })).applied,
            advance: async (by) => (await move({ by })).applied,
            move
        },
        faults: {
            set: (rules, options = {}) => faultsOf(server).set(live(), validated(faultSchemas(types).faultRulesPayload, { ...options, rules }, 'fault rules')),
            get: () => faultsOf(server).get(live()),
            clear: () => faultsOf(server).clear(live())
        },
        requests: {
            list: () => journalOf(server).list(live()),
            count: (pattern = {}) => journalOf(server).find(live(), validated(requestPatternSchema, pattern, 'request pattern')).length,
            find: (pattern = {}) => journalOf(server).find(live(), validated(requestPatternSchema, pattern, 'request pattern')),
            clear: () => journalOf(server).clear(live())
        },
        webhooks: {
            set: async (endpoints) => (await webhooksOf(server).set(live(), validated<{ endpoints: EndpointInput[] }>(webhooksOf(server).payload, { endpoints }, 'webhook endpoints').endpoints)).endpoints,
            get: async () => (await webhooksOf(server).get(live())).endpoints,
            async clear() {

                await webhooksOf(server).set(live(), []);
            },
            flush: () => asPromise(() => live().services.dispatcher.flush()),
            disable: (endpointId) => asPromise(() => webhooksOf(server).update(live(), endpointId, validated(endpointChangePayload, { disabled: true }, 'endpoint change'))),
            enable: (endpointId) => asPromise(() => webhooksOf(server).update(live(), endpointId, validated(endpointChangePayload, { disabled: false }, 'endpoint change'))),
            rotate: (endpointId, options = {}) => asPromise(() => webhooksOf(server).rotate(live(), endpointId, validated<{ overlap: string }>(rotatePayload, options, 'rotation').overlap)),
            resend: (eventId, options = {}) => asPromise(async () => (await webhooksOf(server).resend(live(), eventId, validated<{ endpoint_id?: string }>(resendPayload, options, 'resend').endpoint_id)).attempted),
            recover: (endpointId, since) => asPromise(async () => (await webhooksOf(server).recover(live(), endpointId, validated<{ since: string }>(recoverPayload, { since }, 'recovery').since)).attempted),
            deliveries: {
                list: () => live().services.deliveries.list(),
                count: (pattern = {}) => webhooksOf(server).find(live(), validated(webhooksOf(server).pattern, pattern, 'delivery pattern')).length,
                find: (pattern = {}) => webhooksOf(server).find(live(), validated(webhooksOf(server).pattern, pattern, 'delivery pattern')),
                clear: () => live().services.deliveries.clear()
            }
        },
        events: {
            list: (options = {}) => asPromise(() => eventsOf(live(), options, types))
        },
        inject(options) {

            const request = typeof options === 'string' ? { url: options } : options;
            return server.inject({ ...request, url: instance.basePath + request.url });
        },
        token,
        auth: (subject) => ({ authorization: `Bearer ${token(subject)}` }),
        reset: () => asPromise(() => live().reset()),
        fork(options = {}) {

            return kit.instance({ ...options, from: instance.id });
        },
        snapshot: () => asPromise(() => live().snapshot()),
        export: () => asPromise(() => live().exportFile()),
        restore: (snapshotId) => asPromise(() => live().restore(snapshotId)),
        async close() {

            // Read before the instance and its journal go.
            const problems = failOnUnexpected && registry.find(instance.id) ? journalOf(server).list(instance).map(unexpected).filter((problem) => problem !== null) : [];
            await registry.delete(instance.id);
            if (problems.length) {
                throw new Error(`Unexpected requests to instance ${instance.id}:\n${problems.join('\n')}`);
            }
        }
    };
}
