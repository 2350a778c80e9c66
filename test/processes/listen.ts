import ChildProcess from 'node:child_process';
import Crypto from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import Http from 'node:http';
import type { AddressInfo } from 'node:net';

import Code from '@hapi/code';
import Lab from '@hapi/lab';
import { Webhook } from 'standardwebhooks';

import { binPath, runCli, spawnServer } from '../helpers/processes';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


interface Verified {
    type: string;
    id: string;
    transaction: unknown;
    amount: unknown;
    webhookId: string;
}

// A handler as an app writes it: verifies each request with the Standard Webhooks library, on the wall clock, with
// the secret the listener printed; records what it verified and answers 204, else 400.
async function handler(secret: () => string) {

    const verified: Verified[] = [];
    const refused: string[] = [];
    const arrivals = new EventEmitter();
    const server = Http.createServer((request, response) => {

        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {

            const body = Buffer.concat(chunks).toString('utf8');
            try {
                const event = new Webhook(secret()).verify(body, request.headers as Record<string, string>) as { id: string; type: string; data: { id: unknown; amount: unknown } };
                verified.push({ type: event.type, id: event.id, transaction: event.data.id, amount: event.data.amount, webhookId: String(request.headers['webhook-id']) });
                response.writeHead(204).end();
            }
            catch (err) {
                refused.push((err as Error).message);
                response.writeHead(400).end();
            }

            arrivals.emit('arrived');
        });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
        verified,
        refused,
        // Resolves once count requests have come.
        async waitFor(count: number) {

            while (verified.length + refused.length < count) {
                await once(arrivals, 'arrived');
            }
        },
        close: () => new Promise<void>((resolve) => server.close(() => resolve()))
    };
}


describe('localgate listen, as a process', { timeout: 60_000 }, () => {

    it('forwards a deposit made through the API to a handler that verifies it with the standardwebhooks package, and exits 0 on SIGINT', async () => {

        const jwtSecret = Crypto.randomBytes(32).toString('hex');
        const server = await spawnServer({ AUTH_JWT_SECRET: jwtSecret }, ['--memory', '--memory-pay', '--seed', 'none']);
        let printed = '';
        const app = await handler(() => printed);

        const listener = ChildProcess.spawn(process.execPath, [binPath, 'listen', '--url', server.url, '--forward-to', app.url, '--types', 'pay.transaction.*'], {
            env: { PATH: process.env.PATH, AUTH_JWT_SECRET: jwtSecret }, stdio: ['ignore', 'pipe', 'pipe']
        });
        let stdout = '';
        let stderr = '';
        const exited = new Promise<number | null>((resolve) => listener.once('close', (code) => resolve(code)));
        listener.stdout.on('data', (chunk: Buffer) => {

            stdout += chunk.toString();
        });
        const ready = new Promise<void>((resolve) => {

            listener.stderr.on('data', (chunk: Buffer) => {

                stderr += chunk.toString();
                if (/^Ready: /m.test(stderr)) {
                    resolve();
                }
            });
        });

        await ready;
        printed = /^Signing secret: (whsec_\S+)/m.exec(stderr)![1]!;
        const minted = await runCli(['token', 'alice'], { AUTH_JWT_SECRET: jwtSecret });
        const deposit = await fetch(`${server.url}/v1/pay/gateway/deposit`, {
            method: 'POST',
            headers: { authorization: `Bearer ${minted.stdout.trim()}`, 'content-type': 'application/json', 'idempotency-key': 'listen-1' },
            body: JSON.stringify({ provider_id: 'card', asset: 'USD', amount: 1250 })
        });
        expect(deposit.status).to.equal(201);
        const transaction = await deposit.json() as { id: string };

        await app.waitFor(2);
        while (stdout.split('\n').filter(Boolean).length < 2) {
            await new Promise((resolve) => listener.stdout.once('data', resolve));
        }

        listener.kill('SIGINT');
        const started = Date.now();
        expect(await exited).to.equal(0);
        const exitMs = Date.now() - started;
        await app.close();
        await server.stop();

        expect(app.refused).to.equal([]);
        expect(app.verified.map(({ type, transaction: id, amount }) => ({ type, id, amount }))).to.equal([
            { type: 'pay.transaction.created', id: transaction.id, amount: 1250 },
            { type: 'pay.transaction.completed', id: transaction.id, amount: 1250 }
        ]);
        expect(app.verified.map(({ id, webhookId }) => id === webhookId)).to.equal([true, true]);
        expect(stdout.split('\n').filter(Boolean).map((line) => line.replace(/ \d+ ms$/, ' <ms>'))).to.equal([
            `→ 204 pay.transaction.created ${app.verified[0]!.id} <ms>`,
            `→ 204 pay.transaction.completed ${app.verified[1]!.id} <ms>`
        ]);
        expect(stderr.trim().split('\n')).to.equal([
            `localgate listen: reading ${server.url}/_events/stream`,
            `Signing secret: ${printed} (Standard Webhooks, webhook-timestamp on the wall clock)`,
            `Ready: forwarding to ${app.url}. Stop with Ctrl-C.`,
            'localgate listen: SIGINT received, stopped'
        ]);
        // A listener holds nothing open once stopped: it exits at once.
        expect(exitMs).to.be.below(5000);
    });

    it('refuses a bad flag with one line and the usage, exit 2', async () => {

        const res = await runCli(['listen', '--forward-to', 'localhost:4000'], { AUTH_JWT_SECRET: 'a'.repeat(32) });
        expect(res.code).to.equal(2);
        expect(res.stderr.split('\n')[0]).to.equal('localgate: --forward-to must be an http: or https: URL, such as http://localhost:4000/hooks, not "localhost:4000"');
        expect(res.stdout).to.equal('');
    });
});
