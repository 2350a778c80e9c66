import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { mintToken } from '../../lib';
import { measured } from '../helpers/pg-processes';
import { binPath, spawnListening, type SpawnedServer } from '../helpers/processes';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


// The door out is bounded: a server under `ulimit -n 256` whose many instances each deliver to eight endpoints of a
// receiver that keeps its connections open still accepts a new connection, and holds at most WEBHOOK_MAX_SOCKETS
// sockets to receivers, closed once idle. LOCALGATE_TEST_MEASURE=1 prints the descriptors the server held, and
// LOCALGATE_TEST_SOCKET_INSTANCES sets how many instances (40 unless set).

const instances = Number(process.env.LOCALGATE_TEST_SOCKET_INSTANCES ?? 40);
const endpointsEach = 8;
const maxSockets = 64;
// A business of the demo data: any caller may add products to it.
const bakery = 'd851fadb-03ca-5a24-ba16-c15cce19933b';


interface Receiver {
    url: string;
    delivered: number;
    connections: Set<Socket>;
    // The most connections open at once.
    peak: number;
    // Resolves once the receiver has no connection open.
    drained(): Promise<void>;
    close(): Promise<void>;
}


/** A receiver that answers 204 and keeps idle connections for a minute, as many do: only the sender closes them. */
async function keepingReceiver(): Promise<Receiver> {

    const waiting: (() => void)[] = [];
    const made: Receiver = {
        url: '',
        delivered: 0,
        connections: new Set(),
        peak: 0,
        drained: () => (made.connections.size === 0 ? Promise.resolve() : new Promise((resolve) => waiting.push(resolve))),
        close: () => Promise.resolve()
    };
    const server = Http.createServer((req, res) => {

        req.resume();
        req.on('end', () => {

            made.delivered += 1;
            res.writeHead(204).end();
        });
    });
    server.keepAliveTimeout = 60_000;
    server.on('connection', (socket: Socket) => {

        made.connections.add(socket);
        made.peak = Math.max(made.peak, made.connections.size);
        socket.on('close', () => {

            made.connections.delete(socket);
            if (made.connections.size === 0) {
                waiting.splice(0).forEach((resolve) => resolve());
            }
        });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    made.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    made.close = () => {

        server.closeAllConnections();
        return new Promise((resolve) => server.close(() => resolve()));
    };

    return made;
}


/** A server started under a descriptor limit: sh sets it, then becomes the server (exec), so its pid is the server's. */
function limitedServer(env: NodeJS.ProcessEnv, descriptors: number): Promise<SpawnedServer> {

    return spawnListening('sh', ['-c', `ulimit -n ${descriptors}; exec "$0" "$@"`, process.execPath, binPath, 'start', '--port', '0', '--memory'], { env: { PATH: process.env.PATH, LOG_LEVEL: 'silent', ...env } });
}


/** The descriptors a process holds, and how many of them are sockets. */
function descriptorsOf(pid: number): { open: number; sockets: number } {

    const links = Fs.readdirSync(`/proc/${pid}/fd`).map((fd) => {

        try {
            return Fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
        }
        catch {
            // Closed while it was read.
            return '';
        }
    });
    return { open: links.length, sockets: links.filter((link) => link.startsWith('socket:')).length };
}


/** GET /health over a connection of its own (no agent, no pool): answers its status, or the error that ended it. */
function healthFromNewConnection(url: string): Promise<number | string> {

    return new Promise((resolve) => {

        const request = Http.get(`${url}/health`, { agent: false, timeout: 5000 }, (response) => {

            response.resume();
            response.on('end', () => resolve(Number(response.statusCode)));
        });
        request.on('timeout', () => request.destroy(new Error('no answer within 5 s')));
        request.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });
}


/** Sends one JSON request with a token, expects its status, and answers the body. */
async function call(url: string, token: string, method: string, status: number, body: object, headers: Record<string, string> = {}): Promise<{ id?: string }> {

    const res = await fetch(url, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const text = await res.text();
    expect(res.status, text).to.equal(status);
    return JSON.parse(text) as { id?: string };
}


describe('the door out', () => {

    it(`keeps a server under ulimit -n 256 answering after ${instances} instances deliver to ${endpointsEach} endpoints each`, { timeout: 120_000 }, async () => {

        const receiver = await keepingReceiver();
        const secret = Crypto.randomBytes(32).toString('hex');
        const server = await limitedServer({ AUTH_JWT_SECRET: secret, WEBHOOK_MAX_SOCKETS: String(maxSockets), WEBHOOK_SOCKET_IDLE_MS: '1000', MAX_INSTANCES: String(instances) }, 256);
        try {
            const token = mintToken(secret, 'sockets-admin', 3600, { admin: true });
            const endpoints = Array.from({ length: endpointsEach }, (_, i) => ({ url: `${receiver.url}/${i}`, types: ['commerce.product.created'] }));
            // Made a few at a time, each with its endpoints and one product, so that its eight attempts go at once.
            const started = performance.now();
            for (let i = 0; i < instances; i += 10) {
                await Promise.all(Array.from({ length: Math.min(10, instances - i) }, async () => {

                    const instance = await call(`${server.url}/_instances`, token, 'POST', 201, {});
                    await call(`${server.url}/_instances/${instance.id}/webhooks`, token, 'PUT', 200, { endpoints });
                    await call(`${server.url}/v1/commerce/products`, token, 'POST', 201, { name: 'Bread', price: 2.5, currency: 'USD', business_id: bakery }, { 'X-Localgate-Instance': String(instance.id) });
                }));
            }

            const expected = instances * endpointsEach;
            while (receiver.delivered < expected) {
                expect(performance.now() - started, `${receiver.delivered} of ${expected} delivered`).to.be.below(60_000);
                await new Promise((resolve) => setTimeout(resolve, 100));
            }

            const held = descriptorsOf(server.pid);
            expect(await healthFromNewConnection(server.url)).to.equal(200);
            // Every socket to the receiver is the server's: the cap holds over all instances at once.
            expect(receiver.peak).to.be.at.most(maxSockets);
            // Idle ones close after WEBHOOK_SOCKET_IDLE_MS, though the receiver would keep them.
            await receiver.drained();
            const idle = descriptorsOf(server.pid);
            measured('descriptors', { instances, endpoints: instances * endpointsEach, delivered: receiver.delivered, peakReceiverConnections: receiver.peak, afterDeliveries: held, afterIdle: idle, ms: Math.round(performance.now() - started) });
            expect(receiver.delivered).to.equal(expected);
        }
        finally {
            await server.stop();
            await receiver.close();
        }
    });
});
