import Crypto from 'node:crypto';

import type { Server, ServerInjectOptions, ServerInjectResponse } from '@hapi/hapi';

import { mintToken } from './auth';
import type { Options } from './config';
import { createServer } from './index';
import type { Instance } from './instances';
import { instanceGone, type InstanceOptions } from './instances/registry';
import { durationMs, newInstanceSchema } from './instances/schemas';


// The kit a test suite imports as localgate/testing: one server per suite, a fresh instance per test.

export interface TestInstanceOptions {
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
}

/** The instance's clock, read and moved from the test. */
export interface TestClock {
    /** The instance's current time. */
    now(): Date;
    /** Freezes the clock at an instant. */
    set(instant: string | Date): void;
    /** Moves the clock forward (500ms, 90s, 30m, 2h, 7d, or milliseconds) and freezes it there. */
    advance(by: string | number): void;
}

/** One isolated data set of the kit's server. */
export interface TestInstance {
    readonly id: string;
    /** The prefix of the instance's paths on a listening server: /i/<id>. */
    readonly basePath: string;
    /** The console opened on this instance, once the kit listens (undefined before): where a failed test can point. */
    readonly consoleUrl: string | undefined;
    readonly clock: TestClock;
    /** Injects a request into the instance; the url is the API's own (/v1/...). */
    inject(options: string | ServerInjectOptions): Promise<ServerInjectResponse>;
    /** A bearer token for a subject, signed with the server's secret; ttlSec: whole seconds (default 3600), negative for one that expired that long ago, 0 throws. */
    token(subject: string, options?: { ttlSec?: number; admin?: boolean }): string;
    /** Authorization headers for a subject. */
    auth(subject: string): { authorization: string };
    /** Back to the state at creation: data, clock and ids. */
    reset(): void;
    /** Keeps a copy of the current state; returns its id. */
    snapshot(): string;
    /** Puts back the state a snapshot holds. */
    restore(snapshotId: string): void;
    /** Deletes the instance. */
    close(): void;
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
    const token = (subject: string, tokenOptions: { ttlSec?: number; admin?: boolean } = {}) => mintToken(secret, subject, tokenOptions.ttlSec, { admin: tokenOptions.admin });

    return {
        server,
        instance(instanceOptions: TestInstanceOptions = {}) {

            // A throw (bad options, a bad fixture, the limit) becomes the rejection.
            return new Promise((resolve) => {

                // The rules of POST /_instances, and its defaults.
                const { error, value } = newInstanceSchema.validate(instanceOptions, { errors: { wrap: { label: false } } });
                if (error) {
                    throw new Error(`Invalid instance options: ${error.message}`);
                }

                const { seed, ids, clock, pay, fixture } = value as Omit<InstanceOptions, 'fixture'> & { fixture?: unknown };
                const created: InstanceOptions = { seed, ids, clock, pay, fixture: fixture === undefined ? undefined : { records: fixture, origin: 'fixture' } };
                resolve(testInstance(server, instances.create(created), token));
            });
        },
        async listen() {

            await server.start();
            return server.info.uri;
        },
        close: () => server.stop()
    };
}


function testInstance(server: Server, instance: Instance, token: TestInstance['token']): TestInstance {

    const registry = server.app.localgate.instances;
    // Each call reaches the instance as a request does: a use that keeps it alive, or instance_not_found once it is gone.
    const live = (): Instance => {

        const found = registry.find(instance.id);
        if (!found) {
            throw instanceGone(instance.id);
        }

        return found;
    };

    return {
        id: instance.id,
        basePath: instance.basePath,
        get consoleUrl() {

            return server.info.started ? `${server.info.uri}/console?instance=${encodeURIComponent(instance.id)}` : undefined;
        },
        clock: {
            now: () => live().now(),
            set: (instant) => live().setClock(new Date(instant)),
            advance: (by) => live().advanceClock(typeof by === 'number' ? by : durationMs(by))
        },
        inject(options) {

            const request = typeof options === 'string' ? { url: options } : options;
            return server.inject({ ...request, url: instance.basePath + request.url });
        },
        token,
        auth: (subject) => ({ authorization: `Bearer ${token(subject)}` }),
        reset: () => live().reset(),
        snapshot: () => live().snapshot(),
        restore: (snapshotId) => live().restore(snapshotId),
        close: () => {

            registry.delete(instance.id);
        }
    };
}
