import type { Server } from '@hapi/hapi';
import Joi from 'joi';
import { JSONPath } from 'jsonpath-plus';

import { isRecord } from '../fixtures';
import type { Namespace } from '../namespace';
import { fieldOf } from '../thrown';
import type { Exchange } from './har';
import { ownerFields, recordsOf, worldFromHar, type WorldFromHar } from './world';


// A drift: a recording replayed, request by request as its callers, on a fresh instance made from the world it started
// from, each answer compared with the one recorded, and each recorded answer checked against localgate's own contract.

export type DriftKind = 'status' | 'removed' | 'added' | 'type' | 'value' | 'header' | 'contract' | 'not_served';

/** One way the stand-in and the recording part: where (a JSONPath into the answer, or a header), and both sides. */
export interface Difference {
    level: 'error' | 'warning';
    kind: DriftKind;
    path: string;
    recorded: unknown;
    replayed: unknown;
    entry: number;
}

/** The answers of one entry, side by side, as a report shows the first that differed of an operation. */
export interface SideBySide {
    entry: number;
    recorded: { status: number; body: unknown };
    replayed: { status: number; body: unknown } | null;
}

export interface OperationReport {
    method: string;
    /** The route's template (`/v1/commerce/products/{id}`), or the path when localgate serves none. */
    route: string;
    entries: number;
    errors: number;
    warnings: number;
    differences: Difference[];
    example: SideBySide | null;
}

export interface DriftReport {
    entries: number;
    world: { counts: WorldFromHar['counts']; left_out: string[] };
    totals: { operations: number; errors: number; warnings: number; not_served: number };
    operations: OperationReport[];
}

/** Where a replay sends its requests: a server of localgate, in process or over HTTP. */
export interface ReplayTarget {
    send(method: string, path: string, headers: Record<string, string>, body: string | null): Promise<{ status: number; headers: Record<string, string>; body: unknown }>;
    /** A bearer token for a subject, signed with the target server's secret. */
    token(subject: string, admin: boolean): string;
}

export interface DriftOptions {
    /** JSONPath expressions of answer fields left out of the comparison (`$.data[*].description`). */
    ignore?: readonly string[];
    /** A route localgate does not serve is an error, not a warning. */
    strict?: boolean;
}

/** The most differences an operation lists; its counts go on past them. */
export const maxListedDifferences = 100;

/** The longest JSON of an answer a report shows side by side; a longer one is shown cut, as text. */
export const maxShownChars = 16_384;

const methods = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'] as const;

const instant = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/;

// Headers a replay sends as they were recorded: what the contract reads of a request besides its credential.
const replayedHeaders = ['content-type', 'accept', 'idempotency-key', 'if-match', 'if-none-match'];


/** Replays a recording on a fresh instance of the target and reports where its answers part from the recorded ones. */
export async function drift(server: Server, target: ReplayTarget, exchanges: readonly Exchange[], options: DriftOptions = {}): Promise<DriftReport> {

    const { namespaces } = server.app.localgate.settings;
    const world = worldFromHar(exchanges, namespaces, 'start');
    const admin = { authorization: `Bearer ${target.token('localgate-drift', true)}`, 'content-type': 'application/json' };
    const pay = exchanges.some((exchange) => exchange.path.startsWith('/v1/pay/'));
    const made = await target.send('POST', '/_instances', admin, JSON.stringify({ fixture: world.fixture, pay }));
    if (made.status !== 201) {
        throw new Error(`The recording's world cannot be made an instance: ${made.status} ${String(fieldOf(made.body, 'code'))}: ${String(fieldOf(made.body, 'message'))}`);
    }

    const base = `/i/${String(fieldOf(made.body, 'id'))}`;
    const subjects = subjectsOf(exchanges, namespaces);
    const ids = new Map<string, string>();
    const operations = new Map<string, OperationReport>();
    try {
        for (const exchange of exchanges) {
            const bare = exchange.path.replace(/\?.*$/s, '');
            const method = methods.find((candidate) => candidate === exchange.method.toLowerCase());
            const route = method === undefined ? null : server.match(method, bare);
            const served = route !== null && (bare.startsWith('/v1/') || bare === '/health');
            const key = `${exchange.method} ${served ? route.path : bare}`;
            const operation = operations.get(key) ?? { method: exchange.method, route: served ? route.path : bare, entries: 0, errors: 0, warnings: 0, differences: [], example: null };
            operations.set(key, operation);
            ++operation.entries;
            if (!served) {
                note(operation, exchange, null, [{ level: options.strict ? 'error' : 'warning', kind: 'not_served', path: bare, recorded: exchange.status, replayed: null, entry: exchange.entry }]);
                continue;
            }

            const differences = contractDifferences(route.settings.response?.status?.[exchange.status], exchange);
            const headers: Record<string, string> = Object.fromEntries(replayedHeaders.filter((name) => exchange.headers[name] !== undefined).map((name) => [name, String(exchange.headers[name])]));
            if (exchange.caller !== null) {
                headers.authorization = `Bearer ${target.token(subjects.get(exchange.caller) ?? exchange.caller, false)}`;
            }

            // The API under the instance's base path; /health, which no data set owns, where it is.
            const prefix = bare === '/health' ? '' : base;
            const replayed = await target.send(exchange.method, `${prefix}${mapped(exchange.path, ids)}`, headers, exchange.body === null ? null : mapped(exchange.body, ids));
            if (replayed.status !== exchange.status) {
                differences.push({ level: 'error', kind: 'status', path: '$', recorded: exchange.status, replayed: replayed.status, entry: exchange.entry });
            }
            else {
                learnIds(exchange.answer, replayed.body, ids);
                differences.push(...bodyDifferences(exchange, replayed.body, ids, ignoredPaths(options.ignore ?? [], exchange.answer, replayed.body)));
                differences.push(...headerDifferences(exchange, replayed.headers, ids));
            }

            note(operation, exchange, replayed, differences);
        }
    }
    finally {
        await target.send('DELETE', `/_instances/${base.slice(3)}`, { authorization: admin.authorization }, null);
    }

    const listed = [...operations.values()];
    return {
        entries: exchanges.length,
        world: { counts: world.counts, left_out: world.leftOut },
        totals: {
            operations: listed.length,
            errors: listed.reduce((sum, operation) => sum + operation.errors, 0),
            warnings: listed.reduce((sum, operation) => sum + operation.warnings, 0),
            not_served: listed.filter((operation) => operation.differences.some((difference) => difference.kind === 'not_served')).length
        },
        operations: listed
    };
}


// Who each caller of the recording is: the owner a record answered to them names (a booking's customer_id), else the alias.
function subjectsOf(exchanges: readonly Exchange[], namespaces: readonly Namespace[]): Map<string, string> {

    const subjects = new Map<string, string>();
    for (const exchange of exchanges.filter((candidate) => candidate.caller !== null && !subjects.has(String(candidate.caller)))) {
        const owner = recordsOf(exchange, namespaces).map(({ place, record }) => record[String(ownerFields[place.collection])]).find((value) => typeof value === 'string');
        if (typeof owner === 'string') {
            subjects.set(String(exchange.caller), owner);
        }
    }

    return subjects;
}


function note(operation: OperationReport, exchange: Exchange, replayed: { status: number; body: unknown } | null, differences: Difference[]): void {

    for (const difference of differences) {
        ++operation[difference.level === 'error' ? 'errors' : 'warnings'];
    }

    operation.differences.push(...differences.slice(0, Math.max(0, maxListedDifferences - operation.differences.length)));
    if (differences.length && operation.example === null) {
        operation.example = { entry: exchange.entry, recorded: { status: exchange.status, body: cut(exchange.answer) }, replayed: replayed && { status: replayed.status, body: cut(replayed.body) } };
    }
}


function cut(value: unknown): unknown {

    const text = String(JSON.stringify(value));
    return text.length > maxShownChars ? `${text.slice(0, maxShownChars)} … (cut: ${text.length} characters in all)` : value;
}


// The recorded answer held to localgate's own schema of that route's answer: the hosted service's shape against the contract.
function contractDifferences(schema: unknown, exchange: Exchange): Difference[] {

    if (!Joi.isSchema(schema) || exchange.answer === null) {
        return [];
    }

    // As the route's own response validation reads it (an instant as text is one): a number sent as a string is caught
    // by the comparison, as a field of another type.
    const { error } = schema.validate(exchange.answer, { abortEarly: false, allowUnknown: false });
    return (error?.details ?? []).slice(0, 20).map((detail) => ({
        level: 'error' as const,
        kind: 'contract' as const,
        path: `$${detail.path.map((part) => (typeof part === 'number' ? `[${part}]` : `['${part}']`)).join('')}`,
        recorded: detail.context?.value,
        replayed: detail.message,
        entry: exchange.entry
    }));
}


// Recorded ids swapped for the ones the replay made of the same records, wherever they stand in a path or a body: each
// run of id characters looked up once, so that the text is read once however many ids there are.
function mapped(text: string, ids: ReadonlyMap<string, string>): string {

    return text.replace(/[\w-]+/g, (token) => ids.get(token) ?? token);
}


// Where the recorded answer has an id (a field named id or ending in _id) the replayed answer has another, the two are one record.
function learnIds(recorded: unknown, replayed: unknown, ids: Map<string, string>): void {

    const open: [unknown, unknown][] = [[recorded, replayed]];
    let top = open.pop();
    while (top !== undefined) {
        const [a, b] = top;
        if (Array.isArray(a) && Array.isArray(b)) {
            a.forEach((item, i) => open.push([item, b[i]]));
        }
        else if (isRecord(a) && isRecord(b)) {
            for (const [key, value] of Object.entries(a)) {
                const other = b[key];
                if ((key === 'id' || key.endsWith('_id')) && typeof value === 'string' && typeof other === 'string' && value !== other && !ids.has(value)) {
                    ids.set(value, other);
                }

                open.push([value, other]);
            }
        }

        top = open.pop();
    }
}


// The concrete paths (as $['a'][0]) that --ignore's expressions name in either answer.
function ignoredPaths(expressions: readonly string[], recorded: unknown, replayed: unknown): Set<string> {

    const paths = new Set<string>();
    for (const path of expressions) {
        for (const json of [recorded, replayed].filter((value): value is object => value !== null && typeof value === 'object')) {
            for (const found of JSONPath<string[]>({ path, json, resultType: 'path', eval: 'safe', wrap: true })) {
                paths.add(found);
            }
        }
    }

    return paths;
}


/**
 * Where a replayed answer's body parts from the recorded one: a field removed, added or of another type is an error (a
 * client that reads it breaks); a value that differs is a warning. Instants, fields ending in _at and ids the replay
 * made of a recorded record are not compared, nor what is ignored.
 */
export function bodyDifferences(exchange: Pick<Exchange, 'answer' | 'entry'>, replayed: unknown, ids: ReadonlyMap<string, string>, ignored: ReadonlySet<string>): Difference[] {

    const differences: Difference[] = [];
    const entry = exchange.entry;
    const open: { path: string; key: string; a: unknown; b: unknown }[] = [{ path: '$', key: '', a: exchange.answer, b: replayed }];
    let top = open.pop();
    while (top !== undefined) {
        const { path, key, a, b } = top;
        if (ignored.has(path)) {
            // Left out, with all it holds.
        }
        else if (isRecord(a) && isRecord(b)) {
            for (const name of Object.keys(a).filter((candidate) => !(candidate in b) && !ignored.has(`${path}['${candidate}']`))) {
                differences.push({ level: 'error', kind: 'removed', path: `${path}['${name}']`, recorded: a[name], replayed: null, entry });
            }

            for (const name of Object.keys(b).filter((candidate) => !(candidate in a) && !ignored.has(`${path}['${candidate}']`))) {
                differences.push({ level: 'error', kind: 'added', path: `${path}['${name}']`, recorded: null, replayed: b[name], entry });
            }

            for (const name of Object.keys(a).filter((candidate) => candidate in b).reverse()) {
                open.push({ path: `${path}['${name}']`, key: name, a: a[name], b: b[name] });
            }
        }
        else if (Array.isArray(a) && Array.isArray(b)) {
            if (a.length !== b.length) {
                differences.push({ level: 'warning', kind: 'value', path: `${path}.length`, recorded: a.length, replayed: b.length, entry });
            }

            for (let i = Math.min(a.length, b.length) - 1; i >= 0; --i) {
                open.push({ path: `${path}[${i}]`, key, a: a[i], b: b[i] });
            }
        }
        else if (a !== null && b !== null && kindOf(a) !== kindOf(b)) {
            differences.push({ level: 'error', kind: 'type', path, recorded: a, replayed: b, entry });
        }
        else if (a !== b && !sameRecord(a, b, ids) && !(typeof a === 'string' && typeof b === 'string' && (key.endsWith('_at') || (instant.test(a) && instant.test(b))))) {
            differences.push({ level: 'warning', kind: 'value', path, recorded: a, replayed: b, entry });
        }

        top = open.pop();
    }

    return differences;
}


function kindOf(value: unknown): string {

    return Array.isArray(value) ? 'array' : typeof value;
}


function sameRecord(a: unknown, b: unknown, ids: ReadonlyMap<string, string>): boolean {

    return typeof a === 'string' && ids.get(a) === b;
}


// The headers the contract promises: a list's X-Total-Count, a creation's Location (its id mapped), the body's media type.
function headerDifferences(exchange: Exchange, headers: Record<string, string>, ids: ReadonlyMap<string, string>): Difference[] {

    const differences: Difference[] = [];
    for (const name of ['x-total-count', 'location']) {
        // A Location under a base path (an instance's, a hosted API's) is the contract's path behind it.
        const recorded = exchange.answerHeaders[name]?.replace(/^.*?(?=\/v1\/)/s, '');
        const replayed = headers[name]?.replace(/^.*?(?=\/v1\/)/s, '');
        if (recorded !== undefined && replayed === undefined) {
            differences.push({ level: 'error', kind: 'header', path: name, recorded, replayed: null, entry: exchange.entry });
        }
        else if (recorded !== undefined && mapped(recorded, ids) !== replayed) {
            differences.push({ level: 'warning', kind: 'header', path: name, recorded, replayed, entry: exchange.entry });
        }
    }

    const json = (type: string | undefined) => /\bjson\b/i.test(String(type));
    if (json(exchange.answerHeaders['content-type']) !== json(headers['content-type'])) {
        differences.push({ level: 'error', kind: 'header', path: 'content-type', recorded: exchange.answerHeaders['content-type'] ?? null, replayed: headers['content-type'] ?? null, entry: exchange.entry });
    }

    return differences;
}
