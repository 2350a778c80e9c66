import Hapi, { type Request, type Server } from '@hapi/hapi';
import HapiPino from 'hapi-pino';
import Pino from 'pino';

import { authPlugin, resolveSecret } from './auth';
import { resolveSettings, type Options, type Settings } from './config';
import { closeDatabase, memory, namespaceFile, openNamespace, openSeededMemory, prepareDataDir, seedDemo, type Database } from './db';
import { errorsPlugin, validationFailed } from './errors';
import { healthPlugin } from './health';
import { commercePlugin } from './namespaces/commerce';
import { logisticsPlugin } from './namespaces/logistics';
import { payPlugin } from './namespaces/pay';
import { PayReadiness } from './namespaces/pay/readiness';
import { weatherPlugin } from './namespaces/weather';
import { openapiPlugin } from './openapi';
import { requestIdPlugin } from './request-id';


export { mintToken } from './auth';
export { SettingError, settingsFromEnvironment, type Options, type Settings } from './config';
export { provisionPay } from './namespaces/pay/provision';

export interface Localgate {
    settings: Settings;
    secret: string;
    databases: Databases;
    pay: PayReadiness;
}

export type Databases = Record<typeof namespaces[number], Database>;

declare module '@hapi/hapi' {
    interface ServerApplicationState {
        localgate: Localgate;
    }
}

export const namespaces = ['commerce', 'logistics', 'weather'] as const;

export const maxPayloadBytes = 64 * 1024;


/** Builds an initialized server from plain options: databases open and migrated, plugins registered, nothing listening yet. */
export async function createServer(options: Options = {}): Promise<Server> {

    const settings = resolveSettings(options);
    prepareDataDir(settings.dataDir);
    const secret = resolveSecret(settings.jwtSecret, settings.dataDir);
    const databases = openDatabases(settings);
    const pay = new PayReadiness(settings.pay);
    const closeAll = () => {

        Object.values(databases).forEach(closeDatabase);
        pay.close();
    };

    try {
        pay.upgrade();
        const server = Hapi.server({
            port: settings.port,
            host: settings.host,
            router: { stripTrailingSlash: true },
            // Errors are logged once, through pino with the request id; hapi's own console output would bypass LOG_LEVEL.
            debug: false,
            routes: {
                cors: {
                    origin: settings.corsOrigins,
                    additionalHeaders: ['Idempotency-Key', 'X-Request-Id'],
                    additionalExposedHeaders: ['X-Total-Count', 'Location', 'Idempotent-Replayed', 'X-Request-Id']
                },
                validate: {
                    failAction: validationFailed,
                    options: { abortEarly: false, errors: { wrap: { label: false } } }
                },
                payload: { maxBytes: maxPayloadBytes, allow: 'application/json' },
                response: { sample: settings.validateResponses ? 100 : 0, failAction: 'error' }
            }
        });

        server.app.localgate = { settings, secret, databases, pay };
        server.ext('onPostStop', closeAll);

        const logging: HapiPino.Options = {
            level: settings.logLevel,
            // pino writes to standard output synchronously by default: a system call for every request's line.
            // Buffered, the lines of concurrent requests go out together; pino flushes the rest when the process exits.
            stream: (settings.logStream ?? (settings.logLevel === 'silent' ? undefined : Pino.destination({ dest: 1, sync: false }))) as NodeJS.WriteStream | undefined,
            redact: ['req.headers.authorization'],
            // The serializers take hapi's request and node's response as they are, rather than pino's copies of them
            // (headers included) made on every request only to be narrowed down here.
            wrapSerializers: false,
            serializers: {
                req: (request: Request) => ({ id: request.info.id, method: request.method, url: request.path }),
                res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
                // An error's name, message and stack only: its other fields (a Boom's data, a parser error's raw
                // bytes) can carry what a client sent.
                err: (err: Error) => ({ type: err.name, message: err.message, stack: err.stack })
            }
        };
        // First: the id a request is logged under is settled before the logger sees the request.
        await server.register(requestIdPlugin);
        await server.register({ plugin: HapiPino, options: logging });
        await server.register(errorsPlugin);
        await server.register({ plugin: authPlugin, options: { secret } });
        await server.register({ plugin: healthPlugin, options: { databases, pay, storage: settings.dataDir === memory ? 'memory' : 'file' } });
        await server.register({ plugin: commercePlugin, options: { db: databases.commerce } }, { routes: { prefix: '/v1/commerce' } });
        await server.register({ plugin: logisticsPlugin, options: { db: databases.logistics } }, { routes: { prefix: '/v1/logistics' } });
        await server.register({ plugin: payPlugin, options: { readiness: pay } }, { routes: { prefix: '/v1/pay' } });
        await server.register(weatherPlugin, { routes: { prefix: '/v1/weather' } });
        await server.register(openapiPlugin);

        await server.initialize();
        return server;
    }
    catch (err) {
        closeAll();
        throw err;
    }
}


/** Opens, migrates and (unless told not to) seeds the databases of the always-present namespaces. */
export function openDatabases(settings: Settings): Databases {

    const opened: Partial<Databases> = {};
    try {
        for (const namespace of namespaces) {
            if (settings.dataDir === memory && settings.seed) {
                opened[namespace] = openSeededMemory(namespace);
                continue;
            }

            const db = openNamespace(namespaceFile(settings.dataDir, namespace), namespace);
            opened[namespace] = db;
            if (settings.seed) {
                seedDemo(db, namespace);
            }
        }
    }
    catch (err) {
        Object.values(opened).forEach(closeDatabase);
        throw err;
    }

    return opened as Databases;
}
