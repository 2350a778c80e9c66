import Fs from 'node:fs';
import Path from 'node:path';
import Stream from 'node:stream';

import Code from '@hapi/code';
import type { Server } from '@hapi/hapi';
import Lab from '@hapi/lab';
import Sqlite from 'better-sqlite3';
import Joi from 'joi';
import Pino from 'pino';

import { createServer } from '../lib';
import { DomainError, failure, type DomainErrorKind } from '../lib/errors';
import { prettyLine } from '../lib/pretty-log';
import type { NamespacesDataSet } from '../lib/storage/data-set';
import { adminBearer, bearer, body, tempDir, testServer } from './helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


class LogLines extends Stream.Writable {

    lines: Record<string, unknown>[] = [];

    override _write(chunk: Buffer, encoding: string, callback: () => void) {

        this.lines.push(...chunk.toString().trim().split('\n').map((line) => JSON.parse(line)));
        callback();
    }
}


describe('the server', () => {

    let server: Server;
    const logs = new LogLines();

    before(async () => {

        server = await testServer({ logLevel: 'info', logStream: logs, corsOrigins: ['http://localhost:5173'] });

        server.route([
            {
                method: 'POST',
                path: '/test/items',
                options: {
                    validate: {
                        query: Joi.object({ dry: Joi.boolean() }),
                        payload: Joi.object({ name: Joi.string().max(5).required(), price: Joi.number().strict().min(0) })
                    },
                    handler: (request) => request.payload
                }
            },
            {
                method: 'POST',
                path: '/test/either',
                options: { validate: { payload: Joi.object({ a: Joi.string(), b: Joi.string() }).xor('a', 'b') }, handler: () => null }
            },
            { method: 'GET', path: '/test/boom', options: { auth: false, handler: () => failure(409, 'slot_taken', 'The slot is taken', { slot: 3 }) } },
            { method: 'GET', path: '/test/domain/{kind}', options: { auth: false, handler: (request) => {

                throw new DomainError(request.params.kind as DomainErrorKind, 'rule_broken', 'The rule is broken', request.query.field as string | undefined);
            } } },
            { method: 'GET', path: '/test/crash', options: { auth: false, handler: () => {

                throw new Error('SELECT secret FROM internals WHERE path = /home/me');
            } } },
            { method: 'GET', path: '/test/engine-failure', options: { auth: false, handler: () => {

                // An engine's own failure that stands for no domain error (a bug), with the engine's code on it.
                throw Object.assign(new Error('near "SELEC": syntax error'), { code: 'SQLITE_ERROR' });
            } } }
        ]);
    });

    after(async () => {

        await server.stop();
    });

    it('answers unknown routes with a Boom-shaped 404 that names the path and points to /docs', async () => {

        const res = await server.inject('/v2/nothing?limit=2');
        expect(res.statusCode).to.equal(404);
        expect(body(res)).to.equal({ statusCode: 404, error: 'Not Found', message: 'No route serves /v2/nothing: the routes are listed at /docs', code: 'not_found' });
    });

    it('answers a body that is not declared JSON (curl -d sends a form) with a 415 that says to send application/json', async () => {

        const res = await server.inject({ method: 'POST', url: '/test/items', headers: { ...bearer(server, 'alice'), 'content-type': 'application/x-www-form-urlencoded' }, payload: '{"name":"a"}' });
        expect(res.statusCode).to.equal(415);
        expect(body(res)).to.equal({ statusCode: 415, error: 'Unsupported Media Type', message: 'The body must be JSON, sent with the header Content-Type: application/json', code: 'unsupported_media_type' });
    });

    it('names each invalid field and says why', async () => {

        const res = await server.inject({ method: 'POST', url: '/test/items', headers: bearer(server, 'alice'), payload: { name: 'too long', price: '12', extra: 1 } });
        expect(res.statusCode).to.equal(400);
        expect(body(res)).to.equal({
            statusCode: 400,
            error: 'Bad Request',
            message: 'Invalid payload: name length must be less than or equal to 5 characters long; price must be a number; extra is not allowed',
            code: 'validation_failed',
            details: [
                { field: 'name', message: 'name length must be less than or equal to 5 characters long' },
                { field: 'price', message: 'price must be a number' },
                { field: 'extra', message: 'extra is not allowed' }
            ]
        });
    });

    it('names the keys of a rule over several keys, and the source of a rule over the whole body', async () => {

        const both = await server.inject({ method: 'POST', url: '/test/either', headers: bearer(server, 'alice'), payload: { a: 'x', b: 'y' } });
        expect(body(both)).to.include({ message: 'Invalid payload: value contains a conflict between exclusive peers [a, b]', details: [{ field: 'a, b', message: 'value contains a conflict between exclusive peers [a, b]' }] });
        const list = await server.inject({ method: 'POST', url: '/test/either', headers: bearer(server, 'alice'), payload: [1] });
        expect(body(list).details).to.equal([{ field: 'payload', message: 'value must be of type object' }]);
    });

    it('validates query strings the same way', async () => {

        const res = await server.inject({ method: 'POST', url: '/test/items?dry=maybe', headers: bearer(server, 'alice'), payload: { name: 'ok' } });
        expect(res.statusCode).to.equal(400);
        expect(body(res)).to.include({ message: 'Invalid query: dry must be a boolean', details: [{ field: 'dry', message: 'dry must be a boolean' }] });
    });

    it('answers 413 for a body over 64 KiB', async () => {

        const res = await server.inject({ method: 'POST', url: '/test/items', headers: bearer(server, 'alice'), payload: { name: 'x'.repeat(65 * 1024) } });
        expect(res.statusCode).to.equal(413);
        expect(body(res)).to.include({ code: 'payload_too_large' });
    });

    it('answers 415 for a body that is not JSON', async () => {

        const res = await server.inject({ method: 'POST', url: '/test/items', headers: { ...bearer(server, 'alice'), 'content-type': 'text/plain' }, payload: 'name=x' });
        expect(res.statusCode).to.equal(415);
        expect(body(res)).to.include({ code: 'unsupported_media_type' });
    });

    it('answers 400 for malformed JSON', async () => {

        const res = await server.inject({ method: 'POST', url: '/test/items', headers: { ...bearer(server, 'alice'), 'content-type': 'application/json' }, payload: '{"name": ' });
        expect(res.statusCode).to.equal(400);
        expect(body(res)).to.include({ code: 'bad_request' });
    });

    it('carries the code and extra fields of a failure()', async () => {

        const res = await server.inject('/test/boom');
        expect(res.statusCode).to.equal(409);
        expect(body(res)).to.equal({ statusCode: 409, error: 'Conflict', message: 'The slot is taken', code: 'slot_taken', slot: 3 });
    });

    const kinds: [string, number][] = [['not_found', 404], ['conflict', 409], ['unprocessable', 422]];
    const domainOutcome = (kind: string) => server.inject(`/test/domain/${kind}`);
    for (const [kind, status] of kinds) {
        it(`maps a store's ${kind} outcome to ${status}`, async () => {

            const res = await domainOutcome(kind);
            expect(res.statusCode).to.equal(status);
            expect(body(res)).to.include({ statusCode: status, message: 'The rule is broken', code: 'rule_broken' });
            expect(body(res).details).to.not.exist();
        });
    }

    it('names the field of a store outcome about one', async () => {

        const res = await server.inject('/test/domain/unprocessable?field=business_id');
        expect(body(res).details).to.equal([{ field: 'business_id', message: 'The rule is broken' }]);
    });

    it('reveals nothing of a crash and logs it with the request id', async () => {

        for (const url of ['/test/crash', '/test/engine-failure']) {
            logs.lines = [];
            const res = await server.inject(url);
            expect(res.statusCode).to.equal(500);
            expect(body(res)).to.equal({ statusCode: 500, error: 'Internal Server Error', message: 'An internal server error occurred', code: 'internal_server_error' });
            expect(res.payload).to.not.contain('SELEC');
            expect(res.payload).to.not.contain('SQLITE');
            const error = logs.lines.find((line) => line.err);
            expect(error).to.exist();
            expect((error!.req as { id: string }).id).to.equal(res.request.info.id);
        }
    });

    it('logs one line per request without the authorization header', async () => {

        logs.lines = [];
        const res = await server.inject({ url: '/health', headers: bearer(server, 'alice') });
        expect(logs.lines).to.have.length(1);
        expect(logs.lines[0]).to.include({ msg: '[response] get /health 200 (' + logs.lines[0]!.responseTime + 'ms)' });
        expect(logs.lines[0]!.req).to.equal({ id: res.request.info.id, method: 'get', url: '/health' });
        expect(JSON.stringify(logs.lines)).to.not.contain('Bearer');
    });

    it('logs a request under the X-Request-Id its client sent, and answers with it', async () => {

        logs.lines = [];
        const res = await server.inject({ url: '/v2/nothing', headers: { 'x-request-id': 'suite-7:case.12' } });
        expect(res.headers['x-request-id']).to.equal('suite-7:case.12');
        expect(logs.lines).to.have.length(1);
        expect(logs.lines[0]!.req).to.equal({ id: 'suite-7:case.12', method: 'get', url: '/v2/nothing' });
    });

    it('logs a path with a token or the server\'s secret in it hidden', async () => {

        logs.lines = [];
        const token = bearer(server, 'alice').authorization.slice('Bearer '.length);
        await server.inject(`/v1/commerce/products/${token}`);
        await server.inject(`/v1/commerce/products/${server.app.localgate.secret}`);
        expect(logs.lines.map((line) => (line.req as { url: string }).url)).to.equal(['/v1/commerce/products/[hidden]', '/v1/commerce/products/[hidden]']);
        expect(logs.lines.map((line) => line.msg)).to.equal([400, 404].map((status, i) => `[response] get /v1/commerce/products/[hidden] ${status} (${logs.lines[i]!.responseTime}ms)`));
    });

    it('logs a path with a whsec_ webhook secret in it hidden', async () => {

        logs.lines = [];
        const secret = `whsec_${Buffer.alloc(32, 251).toString('base64')}`;
        await server.inject(`/console/inbox/${encodeURIComponent(secret)}`);
        await server.inject(`/v1/commerce/products/${secret.replace(/[+/=]/g, 'A')}`);
        expect(logs.lines.map((line) => (line.req as { url: string }).url)).to.equal(['/console/inbox/[hidden]', '/v1/commerce/products/[hidden]']);
        expect(JSON.stringify(logs.lines)).to.not.contain('whsec_');
    });

    it('logs an error by its name, message and stack only', async () => {

        logs.lines = [];
        await server.inject('/test/crash');
        const error = logs.lines.find((line) => line.err)!;
        expect(Object.keys(error.err as object)).to.equal(['type', 'message', 'stack']);
    });

    it('answers CORS preflights for the configured origins only', async () => {

        const allowed = await server.inject({ method: 'OPTIONS', url: '/v1/weather/status', headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'GET' } });
        expect(allowed.statusCode).to.equal(200);
        expect(allowed.headers['access-control-allow-origin']).to.equal('http://localhost:5173');
        const refused = await server.inject({ method: 'OPTIONS', url: '/v1/weather/status', headers: { origin: 'http://evil.test', 'access-control-request-method': 'GET' } });
        expect(refused.headers['access-control-allow-origin']).to.not.exist();
        const simple = await server.inject({ url: '/v1/weather/status', headers: { origin: 'http://localhost:5173' } });
        expect(simple.headers['access-control-expose-headers']).to.contain('X-Total-Count');
    });

    it('accepts a trailing slash', async () => {

        expect((await server.inject('/v1/pay/status/')).statusCode).to.equal(200);
    });
});


describe('createServer()', () => {

    it('allows any origin by default', async () => {

        const server = await testServer();
        const res = await server.inject({ url: '/v1/weather/status', headers: { origin: 'http://anywhere.test' } });
        expect(res.headers['access-control-allow-origin']).to.equal('http://anywhere.test');
        await server.stop();
    });

    it('buffers its log to standard output when given no stream', async () => {

        const server = await createServer({ dataDir: ':memory:', logLevel: 'fatal' });
        const stream = (server.logger as unknown as Record<symbol, { fd: number; sync: boolean }>)[Pino.symbols.streamSym];
        expect(stream).to.include({ fd: 1, sync: false });
        await server.stop();
    });

    it('logs pretty lines with LOG_FORMAT=pretty, to the given stream or to standard output', async () => {

        let text = '';
        const logStream = new Stream.Writable({ write(chunk: Buffer, encoding, done) {

            text += chunk.toString();
            done();
        } });
        const server = await createServer({ dataDir: ':memory:', logLevel: 'info', logFormat: 'pretty', logStream });
        await server.inject({ url: '/v2/nothing', headers: { 'x-request-id': 'pretty-1' } });
        expect(text).to.match(/^\d\d:\d\d:\d\d get \/v2\/nothing 404 \(\d+ms\)  pretty-1\n$/);
        await server.stop();

        const quiet = await createServer({ dataDir: ':memory:', logLevel: 'fatal', logFormat: 'pretty' });
        expect((quiet.logger as unknown as Record<symbol, unknown>)[Pino.symbols.streamSym]).to.be.an.instanceof(Stream.Writable);
        await quiet.stop();
    });

    it('creates the namespace files in the data directory and closes them on stop', async () => {

        const dir = Path.join(tempDir(), 'data');
        const server = await createServer({ dataDir: dir, logLevel: 'silent' });
        const files = ['.jwt-secret', 'commerce.db', 'logistics.db', 'weather.db'];
        expect(Fs.readdirSync(dir).sort()).to.equal([...files, ...['commerce', 'logistics', 'weather'].flatMap((namespace) => [`${namespace}.db-shm`, `${namespace}.db-wal`])].sort());
        await server.stop();
        // SQLite removes a write-ahead log when the last connection to its database closes.
        expect(Fs.readdirSync(dir).sort()).to.equal(files);
    });

    it('touches no disk in memory', async () => {

        // As `localgate --memory` runs: the data directory keeps the token secret, and no database.
        const dir = tempDir();
        const server = await createServer({ storage: 'memory', dataDir: dir, keepSecret: true, logLevel: 'silent' });
        const { namespaces } = body<{ namespaces: Record<string, { storage: string }> }>(await server.inject('/health'));
        expect(Object.values(namespaces).map((namespace) => namespace.storage)).to.equal(['memory', 'memory', 'memory', 'memory']);

        const created = await server.inject({ method: 'POST', url: '/v1/commerce/products', headers: bearer(server, 'ann'), payload: { name: 'Kept in memory', price: 1, currency: 'USD', business_id: 'd851fadb-03ca-5a24-ba16-c15cce19933b' } });
        expect(created.statusCode).to.equal(201);
        const instance = await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server) });
        expect(instance.statusCode).to.equal(201);
        const { id, base_path: base } = body<{ id: string; base_path: string }>(instance);
        expect((await server.inject({ method: 'POST', url: `${base}/v1/commerce/products`, headers: bearer(server, 'ann'), payload: { name: 'Kept in memory', price: 1, currency: 'USD', business_id: 'd851fadb-03ca-5a24-ba16-c15cce19933b' } })).statusCode).to.equal(201);
        expect((await server.inject({ method: 'POST', url: `/_instances/${id}/snapshots`, headers: adminBearer(server) })).statusCode).to.equal(201);
        expect(Fs.readdirSync(dir)).to.equal(['.jwt-secret']);
        await server.stop();
        expect(Fs.readdirSync(dir)).to.equal(['.jwt-secret']);
        Fs.rmSync(dir, { recursive: true });
    });

    it('closes what it opened when a database cannot be opened', async () => {

        const dir = tempDir();
        Fs.writeFileSync(Path.join(dir, 'logistics.db'), 'not a database'.repeat(200));
        await expect(createServer({ dataDir: dir, logLevel: 'silent' })).to.reject(/file is not a database/);
        // The commerce file was closed cleanly: no write-ahead log is left behind.
        expect(Fs.existsSync(Path.join(dir, 'commerce.db-wal'))).to.be.false();
    });

    it('tells a failure of the steps after the databases opened as it is, where no file is damaged', async () => {

        const dir = tempDir();
        await (await createServer({ dataDir: dir, logLevel: 'silent' })).stop();
        const raw = new Sqlite(Path.join(dir, 'commerce.db'));
        raw.exec('ALTER TABLE events RENAME TO events_elsewhere');
        raw.close();
        await expect(createServer({ dataDir: dir, logLevel: 'silent' })).to.reject('no such table: events');
    });

    it('rejects invalid options naming the setting', async () => {

        await expect(createServer({ port: -1 })).to.reject('PORT must be greater than or equal to 0');
    });
});


describe('GET /health', () => {

    it('reports each namespace database and its schema version', async () => {

        const server = await testServer();
        const res = await server.inject('/health');
        expect(res.statusCode).to.equal(200);
        const { status, namespaces } = body<{ status: string; namespaces: Record<string, Record<string, unknown>> }>(res);
        expect(status).to.equal('ok');
        expect(Object.keys(namespaces)).to.equal(['commerce', 'logistics', 'weather', 'pay']);
        expect(namespaces.weather).to.equal({ state: 'ready', engine: 'sqlite', schema_version: 1, storage: 'memory' });
        // In memory without pay, pay has no database anywhere: nothing of it is a file.
        expect(namespaces.pay).to.equal({ state: 'unconfigured', engine: 'sqlite', schema_version: null, storage: 'memory' });
        await server.stop();
    });

    it('answers 503 when a database is unavailable', async () => {

        const server = await testServer();
        await (server.app.localgate.data as NamespacesDataSet).database('weather').close();
        const res = await server.inject('/health');
        expect(res.statusCode).to.equal(503);
        expect(body(res)).to.include({ status: 'degraded' });
        expect(body<{ namespaces: Record<string, unknown> }>(res).namespaces.weather).to.equal({ state: 'unavailable', engine: 'sqlite', schema_version: null, storage: 'memory' });
        await server.stop();
    });
});


describe('pretty log lines', () => {

    const time = Date.UTC(2030, 5, 1, 10, 0, 0);
    const clock = new Date(time).toTimeString().slice(0, 8);

    it('turn a request\'s JSON line into time, method, path, status, duration and request id', () => {

        const line = JSON.stringify({ level: 30, time, req: { id: 'r-1', method: 'get', url: '/health' }, res: { statusCode: 200 }, msg: '[response] get /health 200 (3ms)' });
        expect(prettyLine(line)).to.equal(`${clock} get /health 200 (3ms)  r-1\n`);
    });

    it('name a level other than info, and an error\'s message', () => {

        expect(prettyLine(JSON.stringify({ level: 50, time, msg: 'request error', err: { message: 'boom' } }))).to.equal(`${clock} ERROR request error: boom\n`);
        expect(prettyLine(JSON.stringify({ level: 35, time }))).to.equal(`${clock} 35 \n`);
    });
});
