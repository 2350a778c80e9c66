import Crypto from 'node:crypto';

import { seededRandom } from './random';


/** A fault rule as a client sends it (see schemas.ts). */
export interface FaultRuleInput {
    method?: string;
    path: string;
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
    method: string | null;
    // The path without its trailing *, and whether everything below it matches.
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

            const below = input.path.endsWith('*');
            return {
                rule: { id: Crypto.randomUUID(), ...input, description: describeRule(input), hits: 0 },
                method: input.method?.toUpperCase() ?? null,
                path: below ? input.path.slice(0, -1) : input.path,
                below,
                seen: 0
            };
        });
    }

    /** The rules as stored, with their hits. */
    describe(): FaultRules {

        return { seed: this.seed, rules: this.tracked.map(({ rule }) => ({ ...rule })) };
    }

    /** Whether a rule that drops a reply can still act. */
    get drops(): boolean {

        return this.tracked.some(({ rule }) => rule.drop !== undefined && isLive(rule));
    }

    /** The first rule that acts on a request, counting it; null when every rule lets the request through. */
    decide(method: string, path: string): FaultDecision | null {

        for (const tracked of this.tracked) {
            if ((tracked.method !== null && tracked.method !== method) || !(tracked.below ? path.startsWith(tracked.path) : path === tracked.path)) {
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
