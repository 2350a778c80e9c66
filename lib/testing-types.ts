import type { Server, ServerInjectOptions, ServerInjectResponse } from '@hapi/hapi';

import type { AppliedCounts } from './transitions';
import type { DeliveryEntry, DeliveryPattern } from './data-set/deliveries';
import type { Event } from './outbox';
import type { WebhookEndpointInput, WebhookEndpointRead, WebhookEndpointSet } from './events/webhooks';
import type { FaultRuleInput, FaultRules } from './faults';
import type { JournalEntry, RequestPattern } from './journal';
import type { PlayedScenario } from './scenarios/routes';


// What the test kit (localgate/testing) hands a suite: the kit, its instances and each instance's parts.

/** How kit.instance() makes an instance; every option may be left out. */
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
    /**
     * Runs a scenario's steps on this instance as it stands (its instance block is not applied): source is a file
     * (YAML or JSON) or the scenario itself. Resolves to the run; rejects with the failure's message (the step, what
     * was expected and what came) when a step fails, and with the step and field when the scenario cannot run.
     */
    scenario(source: string | object): Promise<ScenarioRun>;
    /** Deletes the instance; with failOnUnexpected, rejects afterwards naming each unexpected request. */
    close(): Promise<void>;
}

/** A scenario's run: each step's line, the failure (null when all passed), and what the steps captured. */
export type ScenarioRun = PlayedScenario;

/** The kit of one suite: its server, and the instances made on it. */
export interface TestKit {
    readonly server: Server;
    /** A new instance: migrated, seeded (unless seed is 'none'), with the fixture loaded. */
    instance(options?: TestInstanceOptions): Promise<TestInstance>;
    /** Runs a scenario on a fresh instance made with its instance block, deleted after; rejects as TestInstance.scenario does. */
    scenario(source: string | object): Promise<ScenarioRun>;
    /** Starts listening on a free loopback port; resolves to the URL for HTTP clients. */
    listen(): Promise<string>;
    /** Stops the server and frees every instance. */
    close(): Promise<void>;
}
