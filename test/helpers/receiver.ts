import Http from 'node:http';
import type { AddressInfo } from 'node:net';


/** A request a receiver got: its headers (names in lower case) and body text. */
export interface Received {
    path: string;
    headers: Http.IncomingHttpHeaders;
    body: string;
}

/** How the receiver answers a request: a status (and body), or a callback that does what it likes with the response. */
export type Answer = number | ((response: Http.ServerResponse, request: Http.IncomingMessage) => void);

/** A webhook receiver on loopback: it keeps what it gets and answers as told (200 when nothing is queued). */
export interface Receiver {
    url: string;
    port: number;
    received: Received[];
    // Answers for the next requests, in order.
    answers: Answer[];
    close(): Promise<void>;
}


/** Starts a receiver on 127.0.0.1 at a free port; close it in an after(). */
export async function startReceiver(): Promise<Receiver> {

    const received: Received[] = [];
    const answers: Answer[] = [];
    const server = Http.createServer((request, response) => {

        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {

            received.push({ path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString() });
            const answer = answers.shift() ?? 200;
            if (typeof answer === 'number') {
                response.writeHead(answer, { 'content-type': 'text/plain' }).end('thanks');
            }
            else {
                answer(response, request);
            }
        });
    });

    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
        url: `http://127.0.0.1:${port}/hook`,
        port,
        received,
        answers,
        async close() {

            server.closeAllConnections();
            await new Promise((resolve) => server.close(resolve));
        }
    };
}
