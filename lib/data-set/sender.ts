import Fs from 'node:fs';
import Http from 'node:http';
import Https from 'node:https';
import Net from 'node:net';
import Path from 'node:path';

import { packageRoot } from '../paths';


/** A call out of the process, as a webhook makes one. */
export interface OutboundCall {
    method: 'POST';
    url: string;
    headers: Record<string, string>;
    body: string;
}

/** A receiver's answer as it came: its headers in their order (name, value), and the start of its body. */
export interface OutboundAnswer {
    headers: [string, string][];
    // At most maxResponseBytes.
    body: Buffer;
}

/**
 * What became of a call out: the receiver's status, or null with why there was none (`timeout`,
 * `connection_refused`, `host_not_allowed`, ...), and how long it took on the wall clock; the headers as they left
 * (null when nothing left), and the answer (null when none came).
 */
export interface OutboundOutcome {
    status: number | null;
    error: string | null;
    duration_ms: number;
    sent: Record<string, string> | null;
    answer: OutboundAnswer | null;
}

/** What a data set's sender is allowed: the hosts it may call, how long it waits for an answer, and the process's agents. */
export interface OutboundSettings {
    hosts: readonly string[];
    timeoutMs: number;
    agents: OutboundAgents;
}

/** How the process keeps its connections out: at most maxSockets open at once, an idle one closed after idleMs. */
export interface AgentSettings {
    maxSockets: number;
    idleMs: number;
}

/** The one door out of the process for a data set: each call out goes through it. */
export interface OutboundSender {

    /** Makes the call, and answers what became of it; never throws. */
    send(call: OutboundCall): Promise<OutboundOutcome>;

    /** Ends the calls it has in flight, as the data set goes; the process's idle connections stay. */
    close(): void;
}

// The bytes of a receiver's answer read before the connection is closed: its status is what counts, and the delivery
// journal keeps the start of the rest.
export const maxResponseBytes = 64 * 1024;

// Every call says what made it.
const packageJson: { version: string } = JSON.parse(Fs.readFileSync(Path.join(packageRoot, 'package.json'), 'utf8'));
const userAgent = `localgate/${packageJson.version}`;

// Connection failures by their system code, in the words the delivery journal uses.
const connectionErrors: Record<string, string> = {
    ECONNREFUSED: 'connection_refused',
    ECONNRESET: 'connection_reset',
    EPIPE: 'connection_reset',
    ENOTFOUND: 'host_not_found',
    EAI_AGAIN: 'host_not_found',
    EHOSTUNREACH: 'host_unreachable',
    ENETUNREACH: 'host_unreachable'
};


// Node's raw headers, name and value one after the other, as (name, value) pairs in their order.
function headerPairs(raw: readonly string[]): [string, string][] {

    const pairs: [string, string][] = [];
    let name: string | null = null;
    for (const item of raw) {
        if (name === null) {
            name = item;
        }
        else {
            pairs.push([name, item]);
            name = null;
        }
    }

    return pairs;
}


/** The host of a URL as WEBHOOK_HOSTS names it: lower case, an IPv6 address without its brackets. */
export function urlHost(url: URL): string {

    return url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}


/** Whether a host is one WEBHOOK_HOSTS allows: named there, or a 127.0.0.0/8 address when 127.0.0.1 is. */
export function hostAllowed(host: string, hosts: readonly string[]): boolean {

    return hosts.includes(host) || (hosts.includes('127.0.0.1') && Net.isIPv4(host) && host.startsWith('127.'));
}


/**
 * The keep-alive agents of a process, one per protocol, which every data set's sender shares: the sockets to receivers
 * are bounded by the process's setting, not by how many data sets there are.
 */
export class OutboundAgents {

    readonly http: Http.Agent;
    readonly https: Https.Agent;

    constructor(settings: AgentSettings) {

        // The cap holds per receiver and over all of them; past it an attempt waits for a socket, within its timeout.
        // An idle socket is closed after idleMs (the agent's timeout destroys a free socket), an attempt's own timer
        // bounds one in use.
        const options = { keepAlive: true, maxSockets: settings.maxSockets, maxTotalSockets: settings.maxSockets, maxFreeSockets: settings.maxSockets, timeout: settings.idleMs };
        this.http = new Http.Agent(options);
        this.https = new Https.Agent(options);
    }

    /** The sockets both agents hold now: in use, and idle. */
    open(): { active: number; idle: number } {

        const count = (pools: NodeJS.ReadOnlyDict<unknown[]>[]): number => pools.flatMap((pool) => Object.values(pool).flat()).length;
        return { active: count([this.http.sockets, this.https.sockets]), idle: count([this.http.freeSockets, this.https.freeSockets]) };
    }

    /** Closes every socket, as the server stops. */
    close(): void {

        this.http.destroy();
        this.https.destroy();
    }
}


/** A data set's sender: POSTs over node:http or node:https through the process's agents, redirects never followed. */
export class HttpSender implements OutboundSender {

    // The calls in flight, ended when the data set goes; the agents' idle sockets stay for the other data sets.
    private readonly inFlight = new Set<Http.ClientRequest>();

    constructor(private readonly settings: OutboundSettings) {}

    send(call: OutboundCall): Promise<OutboundOutcome> {

        const started = performance.now();
        const url = new URL(call.url);
        const body = Buffer.from(call.body);
        const headers = { ...call.headers, 'user-agent': userAgent, 'content-length': String(body.length) };
        const outcome = (status: number | null, error: string | null, answer: OutboundAnswer | null = null): OutboundOutcome => ({ status, error, duration_ms: Math.round(performance.now() - started), sent: headers, answer });
        // Checked again here, whatever the route checked: the settings are the door's. Nothing left, so it took no time.
        if (!hostAllowed(urlHost(url), this.settings.hosts)) {
            return Promise.resolve({ status: null, error: 'host_not_allowed', duration_ms: 0, sent: null, answer: null });
        }

        const secure = url.protocol === 'https:';
        const request = (secure ? Https : Http).request;
        return new Promise((resolve) => {

            let settled = false;
            const settle = (status: number | null, error: string | null, answer: OutboundAnswer | null = null): void => {

                if (!settled) {
                    settled = true;
                    clearTimeout(timer);
                    this.inFlight.delete(outgoing);
                    resolve(outcome(status, error, answer));
                }
            };

            const outgoing = request(url, { method: call.method, agent: secure ? this.settings.agents.https : this.settings.agents.http, headers }, (response) => {

                const status = Number(response.statusCode);
                const answerHeaders = headerPairs(response.rawHeaders);
                const chunks: Buffer[] = [];
                let read = 0;
                const answered = (): void => settle(status, null, { headers: answerHeaders, body: Buffer.concat(chunks).subarray(0, maxResponseBytes) });
                response.on('data', (chunk: Buffer) => {

                    chunks.push(chunk);
                    read += chunk.length;
                    if (read > maxResponseBytes) {
                        // Enough: the rest is never read, and the connection is not used again.
                        response.destroy();
                        answered();
                    }
                });
                response.on('end', answered);
                response.on('error', answered);
            });

            const timer = setTimeout(() => {

                settle(null, 'timeout');
                outgoing.destroy();
            }, this.settings.timeoutMs);

            this.inFlight.add(outgoing);
            outgoing.on('error', (err: NodeJS.ErrnoException) => settle(null, connectionErrors[String(err.code)] ?? 'connection_failed'));
            outgoing.end(body);
        });
    }

    close(): void {

        for (const outgoing of this.inFlight) {
            outgoing.destroy();
        }
    }
}
