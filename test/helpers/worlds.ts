import Fs from 'node:fs';
import Path from 'node:path';

import type { Server, ServerInjectOptions, ServerInjectResponse } from '@hapi/hapi';
import type Lab from '@hapi/lab';
import Sqlite from 'better-sqlite3';

import { provisionPay, type Options } from '../../lib';
import { createTestKit, type TestKit } from '../../lib/testing';
import { mintPayKeys } from '../../lib/storage/pay-keys';
import { engineServer, schemaQuery, templateDatabase, type TestDatabase } from './postgres';
import { tempDir, testServer } from './server';


/** One isolated data set that a test drives through the API, seeded with the demo data. */
export interface World {
    readonly server: Server;
    /** What the world's paths and Location headers start with: /i/<id> for a kit instance, '' for a server of its own. */
    readonly basePath: string;
    /** Injects a request into the world; the url is the API's own (/v1/...). */
    inject(options: string | ServerInjectOptions): Promise<ServerInjectResponse>;
    /** Frees the world. */
    close(): Promise<void>;
}

/** Fresh worlds on one engine. */
export interface Worlds<T extends World = World> {
    open(): Promise<T>;
    /** Frees what the worlds share: the kit's server on SQLite, the template database on PostgreSQL. */
    close(): Promise<void>;
}


/**
 * Worlds on an engine: on SQLite a kit instance each (the kit users get, one server for all); on PostgreSQL, where
 * instances are not made, a server of its own on a throw-away copy of one migrated and seeded template database.
 * With pay, each world's pay is provisioned: an instance's own on SQLite, the copy's pay schema on PostgreSQL.
 */
export function engineWorlds(engine: 'sqlite' | 'postgres', options: Options = {}, { pay = false } = {}): Worlds {

    let kit: Promise<TestKit> | null = null;
    let template: Promise<TestDatabase> | null = null;
    const keys = pay ? mintPayKeys() : undefined;

    return {
        async open() {

            if (engine === 'postgres') {
                template ??= templateDatabase(options, keys);
                return serverWorld(await engineServer('postgres', options, (await template).name, keys));
            }

            kit ??= createTestKit({ validateResponses: true, ...options });
            const shared = await kit;
            const instance = await shared.instance({ pay });
            return world(shared.server, instance.basePath, () => instance.close());
        },
        async close() {

            await (await kit)?.close();
            await (await template)?.drop();
            kit = null;
            template = null;
        }
    };
}


/** A world of its own whose pay tables a test can also write past the API, as an operator would. */
export interface LedgerWorld extends World {
    /** Runs one statement on the world's pay tables, `?` marking each parameter on both engines, and returns its rows. */
    sql(text: string, ...params: unknown[]): Promise<Record<string, unknown>[]>;
}


/**
 * Fresh worlds with a provisioned pay database a test can reach past the API: on SQLite a server of its own on a copy
 * of one provisioned pay file; on PostgreSQL a server of its own on a copy of one template database with pay.
 */
export function ledgerWorlds(engine: 'sqlite' | 'postgres'): Worlds<LedgerWorld> {

    const keys = mintPayKeys();
    let template: Promise<TestDatabase> | null = null;
    let payFile: Promise<string> | null = null;

    return {
        async open() {

            if (engine === 'postgres') {
                template ??= templateDatabase({}, keys);
                const server = await engineServer('postgres', {}, (await template).name, keys);
                const url = server.app.localgate.settings.pay.url!;
                return { ...serverWorld(server), sql: (text, ...params) => schemaQuery(url, 'pay', text, params) };
            }

            payFile ??= provisionPay(Path.join(tempDir(), 'pay.db'), undefined, keys).then((credentials) => credentials.PAY_DB_URL);
            const file = Path.join(tempDir(), 'pay.db');
            Fs.copyFileSync(await payFile, file);
            const server = await testServer({ pay: { url: file, ...keys } });
            return {
                ...serverWorld(server),
                sql(text, ...params) {

                    const db = new Sqlite(file);
                    try {
                        const statement = db.prepare(text);
                        if (statement.reader) {
                            return Promise.resolve(statement.all(...params) as Record<string, unknown>[]);
                        }

                        statement.run(...params);
                        return Promise.resolve([]);
                    }
                    finally {
                        db.close();
                    }
                }
            };
        },
        async close() {

            await (await template)?.drop();
            template = null;
            payFile = null;
        }
    };
}


/** Worlds each the default data set of a server of its own on the engine, as engineServer starts it. */
export function serverWorlds(engine: 'sqlite' | 'postgres', options: Options = {}): Worlds {

    return {
        open: async () => serverWorld(await engineServer(engine, options)),
        // Each world stops its server as it closes: nothing is shared.
        close: () => Promise.resolve()
    };
}


/** The hooks of a test script (Lab.script()) that useWorld opens and closes worlds in. */
export type Hooks = Pick<Lab.script.Script, 'before' | 'after' | 'beforeEach' | 'afterEach'>;


/**
 * Gives each test of the describe around it a world of its own, so that its counts are exact whatever other tests
 * wrote; with `shared`, one world for all its tests. Returns a getter of the current world. With `closeWorlds` the
 * worlds were made for this describe and are closed after it; otherwise whoever made them closes them.
 */
export function useWorld<T extends World>(hooks: Hooks, worlds: Worlds<T>, options: { shared?: boolean; closeWorlds?: boolean } = {}): () => T {

    let current: T | null = null;
    if (options.shared) {
        hooks.before(async () => {

            current = await worlds.open();
        });

        hooks.after(() => current?.close());
    }
    else {
        hooks.beforeEach(async () => {

            current = await worlds.open();
        });

        hooks.afterEach(() => current?.close());
    }

    if (options.closeWorlds) {
        hooks.after(() => worlds.close());
    }

    return () => current!;
}


/** The default data set of a server of its own as a world; closing it stops the server. */
export function serverWorld(server: Server): World {

    return world(server, '', () => server.stop());
}


function world(server: Server, basePath: string, close: () => Promise<void>): World {

    return {
        server,
        basePath,
        inject(options) {

            const request = typeof options === 'string' ? { url: options } : options;
            return server.inject({ ...request, url: basePath + request.url });
        },
        close
    };
}
