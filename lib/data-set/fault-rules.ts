import Crypto from 'node:crypto';

import { seededRandom } from './random';


/** A fault rule as a client sends it (see schemas.ts). */
export interface FaultRuleInput {
    // Absent: inbound, a rule on the API's requests; outbound: a rule on webhook deliveries.
    direction?: 'inbound' | 'outbound';
    method?: string;
    // Inbound rules only: the path they match.
    path?: string;
    // Outbound rules only: the event type (or prefix with *) and the endpoint they match.
    event?: string;
    endpoint_id?: string;
    after?: number;
    times?: number;
    probability?: number;
    status?: number;
    code?: string;
    message?: string;
    retry_after?: number;
    latency_ms?: number | [number, number];
    drop?: 'before' | 'after';
}

/** A stored rule: its id, its words (describeRule), and how many times it acted. */
export interface FaultRule extends FaultRuleInput {
    id: string;
    description: string;
    hits: number;
}

/** The rules of a data set as the fault routes answer with them. */
export interface FaultRules {
    seed: number;
    rules: FaultRule[];
}

/** The rule that acts on a request, and the latency drawn for it. */
export interface FaultDecision {
    rule: FaultRule;
    latencyMs: number;
}

interface Tracked {
    rule: FaultRule;
    outbound: boolean;
    method: string | null;
    // The path (or the event type) without its trailing *, and whether everything below it matches.
    path: string;
    below: boolean;
    seen: number;
}


/**
 * A rule in a few words, the only wording of one: the live log, the console, an injected error's default message and
 * the fault routes (each rule's description) all say this. "POST /v1/pay/gateway/*: 503 gateway_unavailable, Retry-After: 30".
 */
export function describeRule(rule: FaultRuleInput): string {

    const effects: string[] = [];
    if (rule.latency_ms !== undefined) {
        const [min, max] = [rule.latency_ms].flat();
        effects.push(max === undefined ? `${min} ms late` : `${min} to ${max} ms late`);
    }

    if (rule.status !== undefined) {
        const retry = rule.retry_after === undefined ? '' : `, Retry-After: ${rule.retry_after}`;
        effects.push(`${[rule.status, rule.code].filter(Boolean).join(' ')}${retry}`);
    }

    if (rule.direction === 'outbound') {
        if (rule.drop !== undefined) {
            effects.push(rule.drop === 'before' ? 'not sent, counted failed' : 'sent, counted failed as if unanswered');
        }

        return `webhook ${rule.event}${rule.endpoint_id === undefined ? '' : ` to ${rule.endpoint_id}`}: ${effects.join(', ')}`;
    }

    if (rule.drop !== undefined) {
        effects.push(rule.drop === 'before' ? 'connection closed before it runs' : 'reply dropped after it runs');
    }

    return `${rule.method?.toUpperCase() ?? 'any method'} ${rule.path}: ${effects.join(', ')}`;
}


/** Whether a rule can still act: its times, if it has any, are not used up. */
export function isLive(rule: FaultRule): boolean {

    return rule.hits < (rule.times ?? Infinity);
}


/** The fault rules of one data set, with the generator their seed starts and the counts after and times read. */
export class FaultSet {

    private readonly tracked: Tracked[];
    private readonly random: () => number;

    constructor(readonly seed: number, rules: FaultRuleInput[]) {

        this.random = seededRandom(seed);
        this.tracked = rules.map((input) => {

            const outbound = input.direction === 'outbound';
            // The schema gives an inbound rule its path and an outbound one its event.
            const matched = String(outbound ? input.event : input.path);
            const below = matched.endsWith('*');
            return {
                rule: { id: Crypto.randomUUID(), ...input, description: describeRule(input), hits: 0 },
                outbound,
                method: input.method?.toUpperCase() ?? null,
                path: below ? matched.slice(0, -1) : matched,
                below,
                seen: 0
            };
        });
    }

    /** The rules as stored, with their hits. */
    describe(): FaultRules {

        return { seed: this.seed, rules: this.tracked.map(({ rule }) => ({ ...rule })) };
    }

    /** Whether an inbound rule that drops a reply can still act. */
    get drops(): boolean {

        return this.tracked.some(({ rule, outbound }) => !outbound && rule.drop !== undefined && isLive(rule));
    }

    /** The first inbound rule that acts on a request, counting it; null when every rule lets the request through. */
    decide(method: string, path: string): FaultDecision | null {

        return this.first((tracked) => !tracked.outbound && (tracked.method === null || tracked.method === method) && matches(tracked, path));
    }

    /** The first outbound rule that acts on an attempt to deliver an event of this type to this endpoint, counting it. */
    decideOutbound(type: string, endpointId: string): FaultDecision | null {

        return this.first((tracked) => tracked.outbound && (tracked.rule.endpoint_id === undefined || tracked.rule.endpoint_id === endpointId) && matches(tracked, type));
    }

    // The first matching rule that acts: past its after, times left, and drawn by its probability.
    private first(matching: (tracked: Tracked) => boolean): FaultDecision | null {

        for (const tracked of this.tracked) {
            if (!matching(tracked)) {
                continue;
            }

            const { rule } = tracked;
            tracked.seen++;
            if (tracked.seen <= (rule.after ?? 0) || !isLive(rule)) {
                continue;
            }

            if (rule.probability !== undefined && this.random() >= rule.probability) {
                continue;
            }

            rule.hits++;
            return { rule, latencyMs: this.latency(rule.latency_ms) };
        }

        return null;
    }

    private latency(latency: FaultRuleInput['latency_ms']): number {

        if (!Array.isArray(latency)) {
            return latency ?? 0;
        }

        const [min, max] = latency;
        return min + Math.floor(this.random() * (max - min + 1));
    }
}


function matches(tracked: Tracked, text: string): boolean {

    return tracked.below ? text.startsWith(tracked.path) : text === tracked.path;
}
