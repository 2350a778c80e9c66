import Fs from 'node:fs';
import Http from 'node:http';
import Https from 'node:https';
import type { AddressInfo } from 'node:net';
import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';
import type { Server } from '@hapi/hapi';

import { main } from '../lib/cli';
import { maxRecordedBodyBytes, maxRecordedTotalBytes, maxRequestBytes, startRecorder, type Har } from '../lib/record';
import { bearer, tempDir, testServer } from './helpers/server';
import { until } from './helpers/until';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


const tls = Path.join(__dirname, 'fixtures', 'tls');

// A server of answers the test writes, where localgate could not say them: a large body, a path under a base.
async function scripted(handler: Http.RequestListener, secure = false): Promise<{ url: string; close(): Promise<void> }> {

    const server = secure ?
        Https.createServer({ key: Fs.readFileSync(Path.join(tls, 'key.pem')), cert: Fs.readFileSync(Path.join(tls, 'cert.pem')) }, handler) :
        Http.createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
        url: `${secure ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close() {

            server.closeAllConnections();
            return new Promise((resolve) => server.close(() => resolve()));
        }
    };
}


describe('localgate record', () => {

    let server: Server;
    let dir: string;

    before(async () => {

        server = await testServer({ port: 0, host: '127.0.0.1' });
        await server.start();
        dir = tempDir('localgate-record-');
    });

    after(async () => {

        await server.stop();
        Fs.rmSync(dir, { recursive: true, force: true });
    });

    const read = (file: string): Har => JSON.parse(Fs.readFileSync(file, 'utf8')) as Har;

    it('passes each exchange through unchanged and writes it to a HAR, credentials hidden and callers kept as aliases', async () => {

        const out = Path.join(dir, 'session.har');
        const lines: string[] = [];
        const recorder = await startRecorder({ upstream: new URL(server.info.uri), port: 0, out, log: (line) => lines.push(line) });
        expect(read(out).log).to.equal({ version: '1.2', creator: { name: 'localgate', version: read(out).log.creator.version }, entries: [] });
        const alice = bearer(server, 'alice');
        const bob = bearer(server, 'bob');
        const product = { name: 'Kettle', price: 12, currency: 'USD', business_id: 'd851fadb-03ca-5a24-ba16-c15cce19933b' };

        const direct = await fetch(`${server.info.uri}/v1/commerce/products?limit=2`);
        const proxied = await fetch(`${recorder.url}/v1/commerce/products?limit=2`, { headers: { cookie: 'session=abc123', 'x-api-key': 'sk-live-123' } });
        expect(proxied.status).to.equal(200);
        expect(proxied.headers.get('x-total-count')).to.equal(direct.headers.get('x-total-count'));
        expect(await proxied.json()).to.equal(await direct.json());

        const made = await fetch(`${recorder.url}/v1/commerce/products`, { method: 'POST', headers: { ...alice, 'content-type': 'application/json' }, body: JSON.stringify(product) });
        expect(made.status).to.equal(201);
        const { id } = await made.json() as { id: string };
        expect(made.headers.get('location')).to.equal(`/v1/commerce/products/${id}`);
        const refused = await fetch(`${recorder.url}/v1/commerce/products`, { method: 'POST', headers: { ...bob, 'content-type': 'application/json' }, body: JSON.stringify({ ...product, password: 'hunter2' }) });
        expect(refused.status).to.equal(400);
        expect((await fetch(`${recorder.url}/v1/logistics/bookings`, { headers: alice })).status).to.equal(200);
        await until('the recording written', () => read(out).log.entries.length === 4);
        await recorder.close();

        const har = read(out);
        expect(har.log.entries.map((entry) => [entry.request.method, new URL(entry.request.url).pathname, entry.response.status, entry._caller])).to.equal([
            ['GET', '/v1/commerce/products', 200, null],
            ['POST', '/v1/commerce/products', 201, 'caller-1'],
            ['POST', '/v1/commerce/products', 400, 'caller-2'],
            ['GET', '/v1/logistics/bookings', 200, 'caller-1']
        ]);
        const [list, create, bad] = har.log.entries;
        expect(list!.request.url).to.equal(`${server.info.uri}/v1/commerce/products?limit=2`);
        expect(list!.request.queryString).to.equal([{ name: 'limit', value: '2' }]);
        expect(list!.request.headers).to.include([{ name: 'cookie', value: '[hidden]' }, { name: 'x-api-key', value: '[hidden]' }]);
        expect(list!.request.postData).to.not.exist();
        expect(JSON.parse(String(list!.response.content.text))).to.include({ total: Number(direct.headers.get('x-total-count')) });
        expect(list!.response.content.mimeType).to.startWith('application/json');
        expect(create!.request.headers).to.include({ name: 'authorization', value: '[hidden]' });
        expect(JSON.parse(String(create!.request.postData?.text))).to.equal(product);
        expect(create!.response.headers).to.include({ name: 'location', value: `/v1/commerce/products/${id}` });
        expect(JSON.parse(String(bad!.request.postData?.text))).to.include({ password: '[hidden]' });
        expect(lines).to.equal([
            `200 GET /v1/commerce/products ${har.log.entries[0]!.time} ms`,
            `201 POST /v1/commerce/products ${har.log.entries[1]!.time} ms as caller-1`,
            `400 POST /v1/commerce/products ${har.log.entries[2]!.time} ms as caller-2`,
            `200 GET /v1/logistics/bookings ${har.log.entries[3]!.time} ms as caller-1`
        ]);

        // No credential that was sent is in the file, in any form.
        const text = Fs.readFileSync(out, 'utf8');
        for (const sent of [alice.authorization.slice(7), bob.authorization.slice(7), 'sk-live-123', 'abc123', 'hunter2']) {
            expect(text).to.not.contain(sent);
        }
    });

    it('keeps a base path, says when the upstream cannot be reached, and bounds what it keeps', async () => {

        const got: string[] = [];
        const upstream = await scripted((request, response) => {

            got.push(String(request.url));
            request.resume();
            request.once('end', () => response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.alloc(maxRecordedBodyBytes + 1, 1)));
        });
        const out = Path.join(dir, 'bounded.har');
        const lines: string[] = [];
        const recorder = await startRecorder({ upstream: new URL(`${upstream.url}/base/`), port: 0, out, maxEntries: 2, maxTotalBytes: 10, log: (line) => lines.push(line) });
        try {
            const big = await fetch(`${recorder.url}/v1/things?a=1&access_token=tok-9`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(maxRecordedBodyBytes + 1) });
            expect(big.status).to.equal(200);
            expect((await big.arrayBuffer()).byteLength).to.equal(maxRecordedBodyBytes + 1);
            expect(got).to.equal(['/base/v1/things?a=1&access_token=tok-9']);
            await fetch(`${recorder.url}/v1/second`, { method: 'POST', body: 'x'.repeat(20) }).then((res) => res.arrayBuffer());
            await fetch(`${recorder.url}/v1/third`).then((res) => res.arrayBuffer());
            await fetch(`${recorder.url}/v1/fourth`).then((res) => res.arrayBuffer());
            expect(recorder.entries).to.equal(2);
            expect(lines.filter((line) => line.includes('exchanges recorded'))).to.equal(['localgate record: 2 exchanges recorded, the most a recording holds: those after pass through unrecorded']);

            const tooLarge = await fetch(`${recorder.url}/v1/upload`, { method: 'POST', body: Buffer.alloc(maxRequestBytes + 1) }).catch((err: Error) => err);
            if (!(tooLarge instanceof Error)) {
                expect(tooLarge.status).to.equal(413);
                expect(await tooLarge.json()).to.include({ code: 'request_too_large' });
            }

            expect(got).to.have.length(4);
        }
        finally {
            await recorder.close();
            await upstream.close();
        }

        const [entry, second] = read(out).log.entries;
        // Past the bytes a recording keeps in all, a body is not kept: the 20 bytes did not fit in the 10 left.
        expect(second!.request.postData).to.equal({ mimeType: 'text/plain;charset=UTF-8', text: '', comment: `not recorded: the recording holds the ${maxRecordedTotalBytes} bytes of bodies it keeps in all` });
        expect(entry!.request.url).to.equal(`${upstream.url}/base/v1/things?a=1&access_token=%5Bhidden%5D`);
        expect(entry!.request.queryString).to.equal([{ name: 'a', value: '1' }, { name: 'access_token', value: '[hidden]' }]);
        expect(entry!.request.postData).to.equal({ mimeType: 'text/plain', text: '', comment: `not recorded: ${maxRecordedBodyBytes + 1} bytes, more than the ${maxRecordedBodyBytes} a recording keeps` });
        expect(entry!.response.content).to.equal({ size: maxRecordedBodyBytes + 1, mimeType: 'application/octet-stream', comment: `not recorded: ${maxRecordedBodyBytes + 1} bytes, more than the ${maxRecordedBodyBytes} a recording keeps` });

        // An upstream that refuses: a 502 in the service's error shape, a line, and nothing recorded.
        const closed = await scripted(() => undefined);
        await closed.close();
        const gone = await startRecorder({ upstream: new URL(closed.url), port: 0, out: Path.join(dir, 'gone.har'), log: (line) => lines.push(line) });
        try {
            const res = await fetch(`${gone.url}/v1/commerce/products`);
            expect(res.status).to.equal(502);
            expect(await res.json()).to.equal({ statusCode: 502, error: 'Bad Gateway', code: 'upstream_unreachable', message: `The upstream ${closed.url} cannot be reached (connect ECONNREFUSED ${closed.url.slice(7)})` });
            expect(lines.at(-1)).to.equal(`localgate record: the upstream ${closed.url} cannot be reached (connect ECONNREFUSED ${closed.url.slice(7)}): GET /v1/commerce/products answered 502 and not recorded`);
            expect(gone.entries).to.equal(0);
        }
        finally {
            await gone.close();
        }
    });

    it('records an https upstream, and says so when the file cannot be written', async () => {

        const upstream = await scripted((request, response) => {

            request.resume();
            response.writeHead(204).end();
        }, true);
        await expect(startRecorder({ upstream: new URL(upstream.url), port: 0, out: Path.join(dir, 'no', 'such', 'folder.har'), log: () => undefined })).to.reject(/ENOENT/);
        const folder = tempDir('localgate-record-gone-');
        const lines: string[] = [];
        const recorder = await startRecorder({ upstream: new URL(upstream.url), port: 0, out: Path.join(folder, 'a.har'), ca: [Fs.readFileSync(Path.join(tls, 'cert.pem'), 'utf8')], log: (line) => lines.push(line) });
        try {
            Fs.rmSync(folder, { recursive: true, force: true });
            const res = await fetch(`${recorder.url}/v1/anything`, { method: 'DELETE' });
            expect(res.status).to.equal(204);
            await until('the failed write said', () => lines.some((line) => line.startsWith('localgate record: {"task":"write the recording","type":"Error"')));
            expect(lines[0]).to.match(/^204 DELETE \/v1\/anything \d+ ms$/);
        }
        finally {
            Fs.mkdirSync(folder);
            await recorder.close();
            await upstream.close();
            Fs.rmSync(folder, { recursive: true, force: true });
        }
    });

    it('runs from the command line until SIGINT, and refuses an upstream it cannot use', async () => {

        const out = Path.join(dir, 'cli.har');
        const lines: string[] = [];
        const io = { out: (line: string) => lines.push(line), err: (line: string) => lines.push(line) };
        const done = main(['record', '--upstream', `${server.info.uri}/`, '--port', '0', '--out', out], { LOG_LEVEL: 'silent' }, io);
        await until('the recorder listening', () => lines.length === 1);
        const url = /^localgate record: (http:\/\/127\.0\.0\.1:\d+) → /.exec(String(lines[0]))?.[1];
        expect(String(lines[0])).to.endWith(` → ${server.info.uri}, writing ${out} (Ctrl-C stops)`);
        expect((await fetch(`${url}/health`)).status).to.equal(200);
        process.emit('SIGINT', 'SIGINT');
        expect(await done).to.equal(0);
        expect(lines.at(-1)).to.equal(`localgate record: SIGINT received: 1 exchange in ${out}`);
        expect(read(out).log.entries).to.have.length(1);

        const stopped = main(['record', '--upstream', server.info.uri, '--port', '0', '--out', Path.join(dir, 'none.har')], { LOG_LEVEL: 'silent' }, io);
        await until('the second recorder listening', () => lines.length === 4);
        process.emit('SIGTERM', 'SIGTERM');
        expect(await stopped).to.equal(0);
        expect(String(lines.at(-1))).to.startWith('localgate record: SIGTERM received: 0 exchanges in ');

        // Without --port it listens on 4010: taken, it says so and exits 1, having written nothing.
        const taken = Http.createServer();
        await new Promise<void>((resolve) => taken.once('error', () => resolve()).listen(4010, '127.0.0.1', resolve));
        try {
            const errors: string[] = [];
            expect(await main(['record', '--upstream', server.info.uri], {}, { out: () => undefined, err: (line) => errors.push(line) })).to.equal(1);
            expect(errors[0]).to.contain('EADDRINUSE');
            expect(Fs.existsSync('session.har')).to.be.false();
        }
        finally {
            await new Promise((resolve) => taken.close(resolve));
        }

        for (const [args, said] of [
            [[], 'record needs --upstream URL, the hosted API to record, for example: npx localgate record --upstream https://api.example.com'],
            [['--upstream', 'api.example.com'], '--upstream must be an http:// or https:// URL with no query or credentials in it: api.example.com'],
            [['--upstream', 'ftp://api.example.com'], '--upstream must be an http:// or https:// URL with no query or credentials in it: ftp://api.example.com'],
            [['--upstream', 'https://u:p@api.example.com'], '--upstream must be an http:// or https:// URL with no query or credentials in it: https://u:p@api.example.com'],
            [['--upstream', 'https://api.example.com/?k=1'], '--upstream must be an http:// or https:// URL with no query or credentials in it: https://api.example.com/?k=1']
        ] as [string[], string][]) {
            const errors: string[] = [];
            expect(await main(['record', ...args], {}, { out: () => undefined, err: (line) => errors.push(line) })).to.equal(2);
            expect(errors[0]).to.equal(`localgate: ${said}`);
        }
    });
});
