import Assert from 'node:assert';

import Hapi, { type Server } from '@hapi/hapi';
import HapiPino from 'hapi-pino';

import { authPlugin, resolveSecret } from './auth';
import { IdSource, unheard } from './record-context';
import { resolveSettings, settingsFromEnvironment as namespaceSettingsFromEnvironment, type Flags, type Options, type Settings } from './config';
import { consolePlugin } from './console';
import { OutboundAgents, servicesFactory, timedStoresOf } from './data-set';
import { defaultClock } from './data-set/clock-file';
import { errorsPlugin, validationFailed } from './errors';
import { eventsPlugin } from './events';
import { cataloguePlugin } from './events/catalogue-routes';
import { resyncEventPosition } from './data-set/positions';
import { webhooksPlugin } from './events/webhook-routes';
import { faultsPlugin } from './faults';
import { healthPlugin } from './health';
import { instanceHeaderName, InstanceRegistry, instancesPlugin } from './instances';
import { journalPlugin } from './journal';
import { JournalBudget } from './data-set/journal';
import { loggingOptions } from './logging';
import { builtInNamespaces } from './namespaces';
import { nestingPlugin } from './nesting';
import { openapiPlugin } from './openapi';
import type { Scope } from './scope';
import { createEngine, startupFailure } from './storage';
import type { DataSetDatabases } from './storage/engine';
import { requestIdPlugin } from './request-id';
import { scenariosPlugin } from './scenarios';


export { mintToken } from './auth';
export type { Options, Settings } from './config';
export { SettingError } from './setting-error';
export { provisionPay } from './storage';

export interface Localgate {
    settings: Settings;
    secret: string;
    data: DataSetDatabases;
    instances: InstanceRegistry;
}

declare module '@hapi/hapi' {
    interface ServerApplicationState {
        localgate: Localgate;
    }
}

export const maxPayloadBytes = 64 * 1024;



/** Reads the settings of the built-in namespaces from the environment, with command-line flags taking precedence. */
export function settingsFromEnvironment(env?: NodeJS.ProcessEnv, flags?: Flags): Settings {

    return namespaceSettingsFromEnvironment(builtInNamespaces, env, flags);
}


/** Builds an initialized server from plain options: the default data set open and migrated, plugins registered, nothing listening yet. */
export async function createServer(options: Options = {}): Promise<Server> {

    const settings = resolveSettings(options.namespaces ?? builtInNamespaces, options);
    const engine = createEngine(settings);
    const secret = resolveSecret(settings.jwtSecret, settings.dataDir, settings.keepSecret, settings.storage === 'memory');

    // The default data set opens as the server initializes and closes as it stops, so that a server that fails to
    // build holds nothing open: the server's state and the default scope read it once it is open.
    let opened: DataSetDatabases | undefined;
    const defaultData = (): DataSetDatabases => {

        Assert.ok(opened, 'The default data set is read before the server initialized');
        return opened;
    };

    // Values that never reach a journal entry, the live log or a log line: the token secret and the pay keys.
    // An empty key hides nothing: it is not a secret to look for.
    const secrets = [secret, settings.pay.publishableKey, settings.pay.secretKey].filter((value): value is string => Boolean(value));
    // What every data set carries beside its databases: a failed scheduled task is logged by the server.
    const log = (tags: string[], data: object): void => server.log(tags, data);
    // One agent per protocol for the whole server: every data set's attempts share its bounded sockets.
    const agents = new OutboundAgents({ maxSockets: settings.webhookMaxSockets, idleMs: settings.webhookSocketIdleMs });
    const servicesFor = servicesFactory({
        journalSize: settings.journalSize,
        journalBudget: new JournalBudget(settings.journalBudgetMib * 2 ** 20),
        log,
        outbound: { hosts: settings.webhookHosts, timeoutMs: settings.webhookTimeoutMs, agents },
        secrets,
        moveDeadlineMs: settings.clockMoveDeadlineMs,
        disableAfter: settings.webhookDisableAfter,
        leaseMarginMs: settings.webhookLeaseMarginMs
    });
    const defaultServices = servicesFor({ clock: defaultClock(settings, settings.sharedByProcesses, log), ids: new IdSource(), committed: unheard });
    const defaultScope: Scope = { basePath: '', services: defaultServices, get data() {

        return defaultData();
    } };

    const server = Hapi.server({
        port: settings.port,
        host: settings.host,
        router: { stripTrailingSlash: true },
        // Errors are logged once, through pino with the request id; hapi's own console output would bypass LOG_LEVEL.
        debug: false,
        routes: {
            cors: {
                origin: settings.corsOrigins,
                additionalHeaders: ['Idempotency-Key', 'X-Request-Id', instanceHeaderName],
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

    // The idle sweeper's and the pool's failures go to the server's log.
    const limits = { idleTtlMs: settings.instanceIdleTtlMs, maxInstances: settings.maxInstances, maxSnapshotBytes: settings.maxSnapshotMib * 2 ** 20, poolBytes: settings.instancePoolMib * 2 ** 20, fixtureImages: settings.fixtureCacheMib > 0 };
    const instances = new InstanceRegistry(engine, servicesFor, limits, log);
    const localgate: Localgate = { settings, secret, instances, get data() {

        return defaultData();
    } };
    server.app.localgate = localgate;
    server.ext('onPreStart', async () => {

        opened = await engine.openDefault(defaultServices);
        try {
            await resyncEventPosition(opened, defaultServices.ids);
            // What fell due while the server was stopped is applied before it answers; with other processes on the same
            // databases, what they made due is looked for every second too.
            // Deliveries a stopped process left pending are sent now; other processes' retries are looked for as transitions are.
            const { counts } = await defaultServices.watch(timedStoresOf(settings.namespaces, defaultData), () => defaultData().eventLogs(), { pollMs: settings.transitionPollMs });
            if (Object.keys(counts).length > 0) {
                server.log(['debug', 'transitions'], { applied: counts });
            }
        }
        catch (err) {
            throw startupFailure(settings, err);
        }
    });
    server.ext('onPostStop', () => {

        defaultServices.close();
        agents.close();
        return defaultData().close();
    });

    // First: the id a request is logged under is settled before the logger sees the request.
    await server.register(requestIdPlugin);
    await server.register({ plugin: HapiPino, options: loggingOptions(settings, secrets) });
    await server.register(errorsPlugin);
    await server.register(nestingPlugin);
    await server.register({ plugin: instancesPlugin, options: { registry: instances, defaultScope, maxFixtureBytes: settings.maxFixtureMib * 2 ** 20 } });
    await server.register({ plugin: authPlugin, options: { secret } });
    // The test double: the journal numbers requests as they arrive, before a fault can hold one back.
    await server.register({ plugin: journalPlugin, options: { secrets, record: settings.journalSize > 0, bodyBytes: settings.journalBodyBytes } });
    await server.register(faultsPlugin);
    await server.register({ plugin: eventsPlugin, options: { pollMs: settings.transitionPollMs, heartbeatMs: settings.eventHeartbeatMs, log } });
    await server.register({ plugin: cataloguePlugin, options: { namespaces: settings.namespaces } });
    await server.register({ plugin: webhooksPlugin, options: { hosts: settings.webhookHosts } });
    await server.register(scenariosPlugin);
    await server.register(healthPlugin);
    for (const namespace of settings.namespaces) {
        await server.register(namespace.plugin, { routes: { prefix: `/v1/${namespace.name}` } });
    }

    await server.register({ plugin: openapiPlugin, options: { namespaces: settings.namespaces } });
    await server.register({ plugin: consolePlugin, options: { mode: settings.consoleApi, host: settings.host, secret, secrets } });

    await server.initialize();
    return server;
}

