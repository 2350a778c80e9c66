import Net from 'node:net';
import Stream from 'node:stream';

import Code from '@hapi/code';
import type { Server } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { mintToken } from '../lib';
import { answerClientError } from '../lib/errors';
import { testServer } from './helpers/server';
import { until } from './helpers/until';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


// Requests written byte for byte on a real socket, where Node's own parser reads them: what server.inject() skips.

class LogText extends Stream.Writable {

    text = '';

    override _write(chunk: Buffer, encoding: string, callback: () => void) {

        this.text += chunk.toString();
        callback();
    }
}


/** Sends raw bytes on a new connection and resolves to everything the server wrote back before it closed. */
function exchange(port: number, bytes: string): Promise<string> {

    return new Promise((resolve, reject) => {

        const socket = Net.connect(port, '127.0.0.1');
        let received = '';
        socket.on('data', (chunk) => {

            received += chunk.toString();
        });
        socket.on('error', reject);
        socket.on('close', () => resolve(received));
        socket.end(bytes);
    });
}


interface RawResponse {
    status: number;
    headers: Record<string, string>;
    body: Record<string, unknown>;
}


function parse(response: string): RawResponse {

    const [head, ...rest] = response.split('\r\n\r\n');
    const [statusLine, ...lines] = head!.split('\r\n');
    const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
    return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(rest.join('\r\n\r\n')) };
}


describe('requests on the wire', () => {

    let server: Server;
    let port: number;
    let token: string;
    const logs = new LogText();

    before(async () => {

        server = await testServer({ logLevel: 'info', logStream: logs, port: 0 });
        await server.start();
        port = server.info.port as number;
        token = mintToken(server.app.localgate.secret, 'alice');
    });

    after(async () => {

        await server.stop();
    });

    const request = (lines: string[]) => `${lines.join('\r\n')}\r\n\r\n`;

    it('answers headers over the limit with a 431 error body, and logs no byte of the request', async () => {

        logs.text = '';
        const raw = await exchange(port, request([
            'GET /v1/logistics/bookings HTTP/1.1',
            'Host: localhost',
            `Authorization: Bearer ${token}`,
            `X-Big: ${'b'.repeat(20 * 1024)}`
        ]));
        const res = parse(raw);
        expect(res.status).to.equal(431);
        expect(res.headers['content-type']).to.equal('application/json; charset=utf-8');
        expect(res.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/);
        expect(res.body).to.equal({
            statusCode: 431,
            error: 'Request Header Fields Too Large',
            message: 'The request\'s headers are larger than 16384 bytes',
            code: 'request_header_fields_too_large'
        });

        // Logging is asynchronous: wait for the line rather than for a time.
        await until('the parser\'s refusal to be logged', () => logs.text.includes('HPE_HEADER_OVERFLOW'), { everyMs: 0 });

        expect(logs.text).to.not.contain(token);
        expect(logs.text).to.not.contain('bbbb');
        expect(logs.text).to.not.contain('rawPacket');
        expect(logs.text.length).to.be.below(1000);
    });

    it('answers bytes that are not HTTP with a 400 error body', async () => {

        const res = parse(await exchange(port, 'HELLO THERE\r\n\r\n'));
        expect(res.status).to.equal(400);
        expect(res.body).to.equal({ statusCode: 400, error: 'Bad Request', message: 'The request is not valid HTTP', code: 'bad_request' });
    });

    it('closes a kept-alive connection whose next request is broken, once the first is answered', async () => {

        const socket = Net.connect(port, '127.0.0.1');
        let received = '';
        const closed = new Promise((resolve) => socket.on('close', resolve));
        socket.on('data', (chunk) => {

            received += chunk.toString();
            if (received.endsWith('}')) {
                socket.write('NOT HTTP\r\n\r\n');
            }
        });
        socket.write(request(['GET /health HTTP/1.1', 'Host: localhost']));
        await closed;
        expect(received.match(/^HTTP\/1\.1 /gm)).to.have.length(1);
        expect(received).to.startWith('HTTP/1.1 200 OK');
    });

    it('refuses two Authorization headers in either order', async () => {

        for (const [first, second] of [[token, 'not.a.token'], ['not.a.token', token], [token, token]]) {
            const res = parse(await exchange(port, request([
                'GET /v1/logistics/bookings HTTP/1.1',
                'Host: localhost',
                'Connection: close',
                `Authorization: Bearer ${first}`,
                `authorization: Bearer ${second}`
            ])));
            expect(res.status).to.equal(400);
            expect(res.body).to.equal({
                statusCode: 400,
                error: 'Bad Request',
                message: 'Send one Authorization header: this request carries several',
                code: 'multiple_authorization_headers'
            });
        }
    });

    it('refuses two Authorization headers on a public route too, and takes one', async () => {

        const twice = parse(await exchange(port, request(['GET /health HTTP/1.1', 'Host: localhost', 'Connection: close', `Authorization: Bearer ${token}`, `Authorization: Bearer ${token}`])));
        expect(twice.status).to.equal(400);
        const once = parse(await exchange(port, request(['GET /v1/logistics/bookings HTTP/1.1', 'Host: localhost', 'Connection: close', 'Cache-Control: no-cache', `Authorization: Bearer ${token}`])));
        expect(once.status).to.equal(200);
    });

    it('spells X-Request-Id one way on the wire, on a 2xx and on an error', async () => {

        const names = async (path: string) => {

            const raw = await exchange(port, request([`GET ${path} HTTP/1.1`, 'Host: localhost', 'Connection: close']));
            return raw.split('\r\n\r\n')[0]!.split('\r\n').map((line) => line.slice(0, line.indexOf(':'))).filter((name) => name.toLowerCase() === 'x-request-id');
        };

        expect(await names('/health')).to.equal(['x-request-id']);
        expect(await names('/v2/nothing')).to.equal(['x-request-id']);
        expect(await names('/v1/logistics/bookings')).to.equal(['x-request-id']);
    });

    it('writes nothing to a connection the client already closed', () => {

        const socket = new Net.Socket();
        socket.destroy();
        const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
        answerClientError(server, reset, socket);
        expect(socket.bytesWritten).to.equal(0);
        expect(socket.destroyed).to.be.true();
    });
});
