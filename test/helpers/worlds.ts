import type { Server, ServerInjectOptions, ServerInjectResponse } from '@hapi/hapi';

import type { Options } from '../../lib';
import { createTestKit, type TestKit } from '../../lib/testing';
import { engineServer, templateDatabase, type TestDatabase } from './postgres';


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
export interface Worlds {
    open(): Promise<World>;
    /** Frees what the worlds share: the kit's server on SQLite, the template database on PostgreSQL. */
    close(): Promise<void>;
}


/**
 * Worlds on an engine: on SQLite a kit instance each (the kit users get, one server for all); on PostgreSQL, where
 * instances are not made, a server of its own on a throw-away copy of one migrated and seeded template database.
 */
export function engineWorlds(engine: 'sqlite' | 'postgres', options: Options = {}): Worlds {

    let kit: Promise<TestKit> | null = null;
    let template: Promise<TestDatabase> | null = null;

    return {
        async open() {

            if (engine === 'postgres') {
                template ??= templateDatabase(options);
                return serverWorld(await engineServer('postgres', options, (await template).name));
            }

            kit ??= createTestKit({ validateResponses: true, ...options });
            const shared = await kit;
            const instance = await shared.instance();
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
