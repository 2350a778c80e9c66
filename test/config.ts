import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { SettingError, settingsFromEnvironment } from '../lib';
import { resolveSettings, settingsFromEnvironment as namespaceSettingsFromEnvironment } from '../lib/config';
import { builtInNamespaces } from '../lib/namespaces';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


describe('settings', () => {

    it('defaults to a laptop service on 127.0.0.1:3000 with ./data', () => {

        const settings = settingsFromEnvironment({});
        expect(settings).to.equal({
            port: 3000,
            host: '127.0.0.1',
            storage: 'file',
            dataDir: './data',
            keepSecret: true,
            pay: {},
            logLevel: 'info',
            logFormat: 'auto',
            corsOrigins: ['*'],
            seed: true,
            drainTimeoutMs: 10000,
            validateResponses: false,
            instanceIdleTtlMs: 3_600_000,
            maxInstances: 1000,
            maxSnapshotMib: 512,
            maxFixtureMib: 16,
            fixtureCacheMib: 64,
            instancePoolMib: 16,
            memoryPay: false,
            consoleApi: 'auto',
            journalSize: 1000,
            journalBodyBytes: 16_384,
            journalBudgetMib: 64,
            eventsKept: 10_000,
            eventHeartbeatMs: 15_000,
            webhookHosts: ['127.0.0.1', 'localhost', '::1', 'host.docker.internal'],
            webhookTimeoutMs: 10_000,
            webhookDisableAfter: 5,
            webhookLeaseMarginMs: 70_000,
            webhookMaxSockets: 256,
            webhookSocketIdleMs: 4000,
            clockMoveDeadlineMs: 10_000,
            namespaceUrls: {},
            database: { poolMax: 10, connectTimeoutMs: 5000, statementTimeoutMs: 10000 },
            namespaces: builtInNamespaces,
            placedNamespaces: builtInNamespaces.filter(({ name }) => name !== 'pay'),
            placements: { commerce: { engine: 'sqlite' }, logistics: { engine: 'sqlite' }, weather: { engine: 'sqlite' } },
            sharedByProcesses: false,
            transitionPollMs: 0
        });
    });

    it('reads every setting from the environment', () => {

        const secret = 'x'.repeat(32);
        const settings = settingsFromEnvironment({
            PORT: '0',
            HOST: '0.0.0.0',
            DATA_DIR: '/tmp/somewhere',
            AUTH_JWT_SECRET: secret,
            PAY_DB_URL: 'file:/tmp/pay.db',
            PAY_DB_PUBLISHABLE_KEY: 'pk',
            PAY_DB_SECRET_KEY: 'sk',
            LOG_LEVEL: 'silent',
            LOG_FORMAT: 'pretty',
            CORS_ORIGINS: 'http://localhost:5173, https://demo.example',
            SEED: 'none',
            DRAIN_TIMEOUT_MS: '250',
            VALIDATE_RESPONSES: 'true',
            INSTANCE_IDLE_TTL: '15m',
            MAX_INSTANCES: '20',
            MAX_SNAPSHOT_MIB: '64',
            MAX_FIXTURE_MIB: '32',
            FIXTURE_CACHE_MIB: '8',
            INSTANCE_POOL_MIB: '4',
            CONSOLE_API: 'on',
            DATABASE_URL: 'postgres://db.example/app',
            COMMERCE_DB_URL: './commerce.db',
            LOGISTICS_DB_URL: 'postgresql://other.example/logistics',
            DB_POOL_MAX: '4',
            DB_CONNECT_TIMEOUT_MS: '1000',
            DB_STATEMENT_TIMEOUT_MS: '2000',
            JOURNAL_SIZE: '50',
            JOURNAL_BODY_BYTES: '1024',
            JOURNAL_BUDGET_MIB: '8',
            EVENTS_KEPT: '500',
            WEBHOOK_HOSTS: ' 127.0.0.1, Receiver.Local ,, ::1',
            WEBHOOK_TIMEOUT_MS: '2500',
            WEBHOOK_DISABLE_AFTER: '0',
            WEBHOOK_LEASE_MARGIN_MS: '2000',
            WEBHOOK_MAX_SOCKETS: '32',
            WEBHOOK_SOCKET_IDLE_MS: '1500',
            CLOCK_MOVE_DEADLINE_MS: '4000'
        });

        expect(settings).to.equal({
            port: 0,
            host: '0.0.0.0',
            storage: 'file',
            dataDir: '/tmp/somewhere',
            keepSecret: true,
            jwtSecret: secret,
            pay: { url: 'file:/tmp/pay.db', publishableKey: 'pk', secretKey: 'sk' },
            logLevel: 'silent',
            logFormat: 'pretty',
            corsOrigins: ['http://localhost:5173', 'https://demo.example'],
            seed: false,
            drainTimeoutMs: 250,
            validateResponses: true,
            instanceIdleTtlMs: 900_000,
            maxInstances: 20,
            maxSnapshotMib: 64,
            maxFixtureMib: 32,
            fixtureCacheMib: 8,
            instancePoolMib: 4,
            memoryPay: false,
            consoleApi: 'on',
            journalSize: 50,
            journalBodyBytes: 1024,
            journalBudgetMib: 8,
            eventsKept: 500,
            eventHeartbeatMs: 15_000,
            webhookHosts: ['127.0.0.1', 'receiver.local', '::1'],
            webhookTimeoutMs: 2500,
            webhookDisableAfter: 0,
            webhookLeaseMarginMs: 2000,
            webhookMaxSockets: 32,
            webhookSocketIdleMs: 1500,
            clockMoveDeadlineMs: 4000,
            databaseUrl: 'postgres://db.example/app',
            namespaceUrls: { commerce: './commerce.db', logistics: 'postgresql://other.example/logistics' },
            database: { poolMax: 4, connectTimeoutMs: 1000, statementTimeoutMs: 2000 },
            namespaces: builtInNamespaces,
            placedNamespaces: builtInNamespaces.filter(({ name }) => name !== 'pay'),
            placements: {
                commerce: { engine: 'sqlite', file: Path.resolve('./commerce.db') },
                logistics: { engine: 'postgres', url: 'postgresql://other.example/logistics' },
                weather: { engine: 'postgres', url: 'postgres://db.example/app' }
            },
            payLocation: { engine: 'sqlite', file: '/tmp/pay.db' },
            sharedByProcesses: true,
            transitionPollMs: 1000
        });
        expect(settingsFromEnvironment({}).placements).to.equal({ commerce: { engine: 'sqlite' }, logistics: { engine: 'sqlite' }, weather: { engine: 'sqlite' } });
        expect(settingsFromEnvironment({}).payLocation).to.not.exist();
        expect(resolveSettings(builtInNamespaces, settings)).to.equal(settings);
    });

    it('lets flags win over the environment', () => {

        const settings = settingsFromEnvironment({ PORT: '4000', HOST: 'localhost', DATA_DIR: '/tmp/a', LOG_LEVEL: 'debug', SEED: 'demo' }, {
            port: '5000',
            host: '127.0.0.2',
            'data-dir': '/tmp/b',
            'log-level': 'warn',
            seed: false
        });

        expect(settings).to.include({ port: 5000, host: '127.0.0.2', dataDir: '/tmp/b', logLevel: 'warn', seed: false });
    });

    it('runs in memory with --memory or DATA_DIR=:memory:, keeping the token secret in the data directory, and seeds unless SEED=none', () => {

        expect(settingsFromEnvironment({ DATA_DIR: '/tmp/a', SEED: 'demo' }, { memory: true })).to.include({ storage: 'memory', dataDir: '/tmp/a', keepSecret: true, seed: true });
        expect(settingsFromEnvironment({ DATA_DIR: ':memory:' })).to.include({ storage: 'memory', dataDir: './data', keepSecret: true });
        expect(settingsFromEnvironment({ SEED: 'none' })).to.include({ seed: false });
    });

    it('keeps a generated secret in memory for a server made in memory from code', () => {

        expect(resolveSettings(builtInNamespaces, { dataDir: ':memory:' })).to.include({ storage: 'memory', dataDir: './data', keepSecret: false });
        expect(resolveSettings(builtInNamespaces, { storage: 'memory', keepSecret: true })).to.include({ keepSecret: true });
        expect(resolveSettings(builtInNamespaces, {})).to.include({ storage: 'file', keepSecret: true });
    });

    it('provisions pay in memory only for a server in memory', () => {

        expect(settingsFromEnvironment({ MEMORY_PAY: 'true' }, { memory: true })).to.include({ memoryPay: true });
        expect(settingsFromEnvironment({}, { memory: true, 'memory-pay': true })).to.include({ memoryPay: true });
        expect(() => settingsFromEnvironment({ MEMORY_PAY: 'yes please' }, { memory: true })).to.throw(SettingError, 'MEMORY_PAY must be a boolean');
        expect(() => settingsFromEnvironment({}, { 'memory-pay': true })).to.throw(SettingError, '--memory-pay needs storage in memory (--memory or DATA_DIR=:memory:); for files run `npx localgate provision pay`');
        expect(() => settingsFromEnvironment({ MEMORY_PAY: 'true' })).to.throw(SettingError, 'MEMORY_PAY needs storage in memory (--memory or DATA_DIR=:memory:); for files run `npx localgate provision pay`');
    });

    it('takes json, pretty or auto as LOG_FORMAT', () => {

        expect(settingsFromEnvironment({ LOG_FORMAT: 'json' })).to.include({ logFormat: 'json' });
        expect(() => settingsFromEnvironment({ LOG_FORMAT: 'colour' })).to.throw(SettingError, 'LOG_FORMAT must be one of [auto, json, pretty]');
    });

    it('treats empty environment values as unset, except the secret', () => {

        expect(settingsFromEnvironment({ PORT: '', PAY_DB_URL: '' })).to.include({ port: 3000, pay: {} });
        expect(() => settingsFromEnvironment({ AUTH_JWT_SECRET: '' })).to.throw(SettingError, 'AUTH_JWT_SECRET must be at least 32 bytes long');
    });

    const invalid: [Record<string, string>, string][] = [
        [{ PORT: 'eighty' }, 'PORT must be a number'],
        [{ PORT: '70000' }, 'PORT must be less than or equal to 65535'],
        [{ PORT: '-1' }, 'PORT must be greater than or equal to 0'],
        [{ HOST: 'no such host' }, 'HOST must be a host name or an IP address'],
        [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of [fatal, error, warn, info, debug, trace, silent]'],
        [{ AUTH_JWT_SECRET: 'short' }, 'AUTH_JWT_SECRET must be at least 32 bytes long'],
        [{ CORS_ORIGINS: ' , ' }, 'CORS_ORIGINS must contain at least 1 items'],
        [{ DRAIN_TIMEOUT_MS: 'soon' }, 'DRAIN_TIMEOUT_MS must be a number'],
        [{ SEED: 'maybe' }, `SEED must be demo, none or the path of a fixture file: there is no file ${Path.resolve('maybe')}`],
        [{ INSTANCE_IDLE_TTL: 'forever' }, 'INSTANCE_IDLE_TTL must be a positive duration such as 3600, 30m, 2h or 7d, not "forever"'],
        [{ INSTANCE_IDLE_TTL: '0' }, 'INSTANCE_IDLE_TTL must be a positive duration such as 3600, 30m, 2h or 7d, not "0"'],
        [{ MAX_INSTANCES: '-1' }, 'MAX_INSTANCES must be greater than or equal to 0'],
        [{ CONSOLE_API: 'yes' }, 'CONSOLE_API must be one of [auto, on, off]'],
        [{ PAY_DB_URL: 'file://files.example/pay.db' }, 'PAY_DB_URL must be a postgres:// URL, a path, a file: URL on this machine, or :memory:'],
        [{ PAY_DB_URL: 'http://example.com/pay.db' }, 'PAY_DB_URL must be a postgres:// URL, a path, a file: URL on this machine, or :memory:'],
        [{ PAY_DB_URL: 'postgres://localhost/pay' }, 'AUTH_JWT_SECRET must be set when a namespace is on PostgreSQL: every process serving it must sign and check tokens with one secret'],
        [{ DATABASE_URL: 'postgres://localhost/test' }, 'AUTH_JWT_SECRET must be set when a namespace is on PostgreSQL: every process serving it must sign and check tokens with one secret'],
        [{ DATABASE_URL: 'mysql://localhost/test', AUTH_JWT_SECRET: 'x'.repeat(32) }, 'DATABASE_URL must be a postgres:// or postgresql:// URL'],
        [{ COMMERCE_DB_URL: 'mysql://localhost/test' }, 'COMMERCE_DB_URL must be a postgres:// URL, a path or a file: URL on this machine'],
        [{ DB_POOL_MAX: '0' }, 'DB_POOL_MAX must be greater than or equal to 1'],
        [{ DB_CONNECT_TIMEOUT_MS: 'soon' }, 'DB_CONNECT_TIMEOUT_MS must be a number'],
        [{ DB_STATEMENT_TIMEOUT_MS: '-1' }, 'DB_STATEMENT_TIMEOUT_MS must be greater than or equal to 1'],
        [{ WEBHOOK_HOSTS: ' , ' }, 'WEBHOOK_HOSTS must contain at least 1 items'],
        [{ WEBHOOK_HOSTS: 'localhost, http://receiver.local:8080' }, 'WEBHOOK_HOSTS must be host names or IP addresses, without a scheme, port or path'],
        [{ WEBHOOK_TIMEOUT_MS: '0' }, 'WEBHOOK_TIMEOUT_MS must be greater than or equal to 1'],
        [{ WEBHOOK_TIMEOUT_MS: 'soon' }, 'WEBHOOK_TIMEOUT_MS must be a number'],
        [{ WEBHOOK_DISABLE_AFTER: '-1' }, 'WEBHOOK_DISABLE_AFTER must be greater than or equal to 0'],
        [{ WEBHOOK_LEASE_MARGIN_MS: '-1' }, 'WEBHOOK_LEASE_MARGIN_MS must be greater than or equal to 0'],
        [{ WEBHOOK_MAX_SOCKETS: '0' }, 'WEBHOOK_MAX_SOCKETS must be greater than or equal to 1'],
        [{ WEBHOOK_MAX_SOCKETS: 'many' }, 'WEBHOOK_MAX_SOCKETS must be a number'],
        [{ WEBHOOK_SOCKET_IDLE_MS: '0' }, 'WEBHOOK_SOCKET_IDLE_MS must be greater than or equal to 1'],
        [{ CLOCK_MOVE_DEADLINE_MS: '0' }, 'CLOCK_MOVE_DEADLINE_MS must be greater than or equal to 1'],
        [{ CLOCK_MOVE_DEADLINE_MS: '600001' }, 'CLOCK_MOVE_DEADLINE_MS must be less than or equal to 600000']
    ];

    for (const [env, message] of invalid) {
        it(`stops with "${message}" for ${JSON.stringify(env)}`, () => {

            const err = expect(() => settingsFromEnvironment(env)).to.throw(SettingError, message);
            expect((err as SettingError).setting).to.equal(message.split(' ')[0]!);
        });
    }

    it('names the flag when a flag is invalid, and the variable when the environment is', () => {

        expect(() => settingsFromEnvironment({}, { port: 'eighty' })).to.throw(SettingError, '--port must be a number');
        expect(() => settingsFromEnvironment({ PORT: 'eighty' }, { host: 'localhost' })).to.throw(SettingError, 'PORT must be a number');
        expect(() => settingsFromEnvironment({}, { 'log-level': 'loud' })).to.throw(SettingError, /^--log-level must be one of/);
        expect(() => settingsFromEnvironment({ LOG_LEVEL: 'loud' }, { port: '1' })).to.throw(SettingError, /^LOG_LEVEL must be one of/);
        expect(() => settingsFromEnvironment({ SEED: 'maybe' }, { port: '1' })).to.throw(SettingError, `SEED must be demo, none or the path of a fixture file: there is no file ${Path.resolve('maybe')}`);
    });

    it('reads a one-letter scheme as a Windows drive', () => {

        expect(settingsFromEnvironment({ PAY_DB_URL: 'C:/data/pay.db' }).pay.url).to.equal('C:/data/pay.db');
    });

    it('validates programmatic options with the same names', () => {

        expect(resolveSettings(builtInNamespaces)).to.include({ port: 3000 });
        expect(() => resolveSettings(builtInNamespaces, { port: 1.5 })).to.throw(SettingError, 'PORT must be an integer');
        expect(() => resolveSettings(builtInNamespaces, { unknown: true } as never)).to.throw(SettingError, 'unknown is not allowed');
    });

    it('passes on an error that names no setting as it is, whatever the flags', () => {

        const misnamed = builtInNamespaces.map((namespace) => ({ ...namespace, name: namespace.name.toUpperCase() }));
        expect(() => namespaceSettingsFromEnvironment(misnamed, { PORT: '4000' }, { port: '4000' })).to.throw('Namespace names must be distinct, lower case letters and digits: COMMERCE, LOGISTICS, WEATHER, PAY');
    });
});
