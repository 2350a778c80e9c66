import Crypto from 'node:crypto';
import Fs from 'node:fs';

import type { Server } from '@hapi/hapi';
import type Joi from 'joi';

import { mintToken } from './auth';
import type { Options } from './config';
import { parseDurationMs } from './durations';
import { listEvents } from './events/log';
import { eventTypesOf, typePattern, type Event } from './outbox';
import { eventSchemas } from './events/schemas';
import { webhooksOf } from './events/webhook-routes';
import { endpointChangePayload, recoverPayload, resendPayload, rotatePayload } from './events/webhook-schemas';
import type { EndpointInput } from './events/webhooks';
import { faultSchemas, faultsOf } from './faults';
import { createServer } from './index';
import type { Instance } from './instances';
import { liveInstance } from './instances/lookup';
import { instanceOptions as optionsOf, type NewInstance } from './instances/options';
import { newInstanceSchema } from './instances/schemas';
import { journalOf, requestPatternSchema, type JournalEntry } from './journal';
import { readScenario, runScenario, scenarioRules, serverTarget, type Scenario } from './scenarios';
import { parseScenarioFile } from './scenarios/file';
import { playFresh } from './scenarios/routes';
import type { EventQuery, ScenarioRun, TestClock, TestInstance, TestInstanceOptions, TestKit } from './testing-types';


export { startReceiver, type ReceivedWebhook, type ReceiverOptions, type WebhookReceiver } from './webhook-receiver';
export type { DeliveryEntry as WebhookDelivery, DeliveryPattern as WebhookDeliveryPattern } from './data-set/deliveries';
export type { Event, EventType, SigningClock } from './outbox';
export { eventTypesOf } from './outbox';
export type { WebhookEndpointInput, WebhookEndpointRead, WebhookEndpointSet } from './events/webhooks';
export type { ClockMove, EventQuery, ScenarioRun, TestClock, TestDeliveries, TestEvents, TestFaults, TestInstance, TestInstanceOptions, TestKit, TestRequests, TestWebhooks } from './testing-types';


// The kit a test suite imports as localgate/testing: one server per suite, a fresh instance per test; what it hands
// out is typed in testing-types.ts.

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
    const creationSchema = newInstanceSchema(instances.namespaces);
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
                const { error, value } = creationSchema.validate({ ...creation, from: source }, { errors: { wrap: { label: false } } });
                if (error) {
                    throw new Error(`Invalid instance options: ${error.message}`);
                }

                resolve(instances.create(optionsOf(value as NewInstance, 'fixture', instances.namespaces)));
            }).then((made) => testInstance(server, made, token, failOnUnexpected, kit));
        },
        scenario: (source) => asPromise(async () => passed(await playFresh(server, scenarioOf(server, source), false))),
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

    // A request dropped before it was answered has no status (null), which reads as no failure here.
    return Number(entry.status) >= 500 && entry.fault === null ? `${entry.method} ${entry.path} answered ${entry.status} ${entry.code}` : null;
}


// A scenario from a file or as given, checked as POST …/scenario checks it.
function scenarioOf(server: Server, source: string | object): Scenario {

    return readScenario(typeof source === 'string' ? parseScenarioFile(Fs.readFileSync(source, 'utf8'), source) : source, scenarioRules(server));
}


// A run that failed rejects with its message: the step, what was expected and what came.
function passed(run: ScenarioRun): ScenarioRun {

    if (run.message !== null) {
        throw new Error(run.message);
    }

    return run;
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

    return { advance: typeof to.by === 'number' ? to.by : parseDurationMs(to.by) };
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
        async scenario(source) {

            const scenario = scenarioOf(server, source);
            live();
            return passed({ ...await runScenario(scenario, serverTarget(server, instance.id)), instance: instance.id });
        },
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
