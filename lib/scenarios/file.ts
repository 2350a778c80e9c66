import Joi from 'joi';
import { createRequire } from 'node:module';

import type * as Yaml from 'yaml';
import type { CST } from 'yaml';

import { always } from '../always';
import { durationPattern, parseDurationMs } from '../durations';
import { DomainError } from '../errors';
import { faultSchemas } from '../faults';
import { duration as retryDelay, maxEndpoints, maxRetries } from '../events/webhook-schemas';
import { typePatternSchema } from '../events';
import { instanceHeaderName } from '../instances/routing';
import { jsonPath } from '../journal';
import { clockTimestamp, firstDetail, visibleText } from '../fields';
import { maxJsonDepth, nestsDeeperThan, tooDeepMessage } from '../nesting';
import { fieldOf, thrownMessage } from '../thrown';


// A scenario file: a story of steps (requests as actors, clock moves, what the event log and the run's webhook
// receiver must hold, fault rules, captions), read from YAML or JSON and checked whole before a step runs, every error
// naming the step and the field.

// yaml is loaded at the first scenario read or save, not as the server starts: a server that never reads one does not
// pay the 20 ms its modules take to load.
const requireHere = createRequire(__filename);
let yamlModule: typeof Yaml | undefined;

/** The yaml module, loaded at its first use. */
export function yaml(): typeof Yaml {

    yamlModule ??= requireHere('yaml') as typeof Yaml;
    return yamlModule;
}

/** The most a scenario file may hold as JSON, as a request body may. */
export const maxScenarioBytes = 2 ** 20;

/**
 * The most a scenario may hold as YAML text, in bytes and in items (lines, commas and opening brackets, each a node of
 * the document at most). The YAML parser takes some microseconds a node, on the event loop: a dense list of 256 KiB
 * would hold it for a second, 10,000 nodes for well under a tenth. JSON is parsed natively, up to 1 MiB.
 */
export const maxYamlBytes = 2 ** 18;
export const maxYamlItems = 10_000;

/** The most steps one scenario takes: a story a demo tells, or a test's, not a load test. */
export const maxSteps = 500;

/** The longest a webhook step waits for its delivery, of the wall clock. */
export const maxWaitMs = 30_000;

const defaultWaitMs = 5_000;

/** The step kinds, in the order a step is looked at for its kind; a step with only a caption is `say`. */
export const stepKinds = ['request', 'clock', 'event', 'webhook', 'fault'] as const;

export type StepKind = typeof stepKinds[number] | 'say';

export interface Actor {
    sub: string;
    admin: boolean;
}

export interface RequestStep {
    kind: 'request';
    say?: string;
    as?: string;
    request: { method: string; path: string; query?: Record<string, string>; headers?: Record<string, string>; body?: unknown };
    expect?: { status?: number; body?: unknown; headers?: Record<string, string> };
    capture?: Record<string, string>;
}

export interface ClockStep {
    kind: 'clock';
    say?: string;
    clock: { advance: string } | { now: string };
    expect?: { applied?: Record<string, number>; attempted?: number };
}

export interface EventStep {
    kind: 'event';
    say?: string;
    event: { type: string; data?: unknown };
}

export interface WebhookStep {
    kind: 'webhook';
    say?: string;
    webhook: { type: string; data?: unknown; within: string };
}

export interface FaultStep {
    kind: 'fault';
    say?: string;
    fault: { set: unknown[]; seed?: number } | { clear: true };
}

export interface SayStep {
    kind: 'say';
    say: string;
}

export type Step = RequestStep | ClockStep | EventStep | WebhookStep | FaultStep | SayStep;

/** The endpoint a run sets to its own receiver: the types it subscribes to, and how it is sent to. */
export interface ScenarioWebhook {
    types: string[];
    retry_schedule?: string[];
}

export interface Scenario {
    name: string;
    description?: string;
    /** The body of POST /_instances that a fresh instance for the scenario is made with. */
    instance: Record<string, unknown>;
    actors: Record<string, Actor>;
    webhooks: ScenarioWebhook[];
    steps: Step[];
}

// A scenario as its head's schema passes it: the steps still to check one by one.
interface ScenarioInput {
    name: string;
    description?: string;
    instance?: Record<string, unknown>;
    actors?: Record<string, { sub?: string; admin?: boolean }>;
    webhooks?: ScenarioWebhook[];
    steps: Record<string, unknown>[];
}

/** A file refused: why, in one line, and the field it names (`steps[2].request.method`, say); a 400 invalid_scenario. */
export class ScenarioError extends DomainError {

    constructor(message: string, field: string, code = 'invalid_scenario') {

        super('invalid', code, message, field);
    }
}

/** What reads a scenario needs of the server: the event types its namespaces write, and its fixture namespaces. */
export interface ScenarioRules {
    types: readonly string[];
    instance: Joi.ObjectSchema;
}


/**
 * Why a request step's path is not one of the data set's API, or null when it is: /v1/... or /health, as the server
 * routes it, so that no dot segment or escape of one takes it to an admin route (a scenario that ran scenarios).
 */
export function pathRefusal(path: string): string | null {

    const [pathname = ''] = path.split('?');
    // What a router resolves or decodes into another path: a segment of dots, an escaped dot, slash or backslash, a
    // backslash, or a % that is no escape (hapi leaves %2%65 as text that a URL parser then reads as %2e).
    const moves = pathname.split('/').some((segment) => /^\.{1,2}$/.test(segment)) || /%2e|%2f|%5c|\\|%(?![0-9a-f]{2})/i.test(pathname);
    const api = /^\/v1\/|^\/health$/.test(pathname) && !/[\s#]/.test(path);
    return api && !moves ? null : 'must be a path of the data set\'s API, /v1/... or /health, with no dot segment, escaped dot or slash, space or #';
}


// {{name}}: a capture of an earlier step, substituted into paths, headers, query values and bodies.
export const placeholder = /\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}/g;

const name = Joi.string().pattern(/^[A-Za-z_][\w.-]*$/).max(64);
const headerValue = Joi.string().max(8192);
const caption = visibleText(1000);
const duration = Joi.string().pattern(durationPattern).custom((value: string, helpers) => (parseDurationMs(value) <= maxWaitMs ? value : helpers.error('any.invalid')))
    .messages({ 'string.pattern.base': '{{#label}} must be a duration such as 500ms, 5s or 30s', 'any.invalid': `{{#label}} must be at most ${maxWaitMs / 1000}s` });

// The schemas of a server's rules, built once per list of event types.
const built = new WeakMap<readonly string[], Record<StepKind, Joi.ObjectSchema> & { head: Joi.ObjectSchema }>();

function schemasOf(types: readonly string[]) {

    let schemas = built.get(types);
    if (schemas) {
        return schemas;
    }

    const type = typePatternSchema(types);
    const exactType = Joi.string().valid(...types).messages({ 'any.only': `{{#label}} must be an event type this server writes (${types.join(', ')})` });
    schemas = {
        head: Joi.object({
            name: visibleText(200).required(),
            description: visibleText(4000),
            instance: Joi.object().unknown(),
            actors: Joi.object().pattern(name, Joi.object({ sub: visibleText(200), admin: Joi.boolean() })).max(50),
            webhooks: Joi.array().items(Joi.object({
                types: Joi.array().items(type).min(1).max(50).required(),
                retry_schedule: Joi.array().items(retryDelay).max(maxRetries)
            })).max(maxEndpoints),
            steps: Joi.array().items(Joi.object().unknown()).min(1).max(maxSteps).required()
        }),
        request: Joi.object({
            say: caption,
            as: name,
            request: Joi.object({
                method: Joi.string().uppercase().valid('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS').required(),
                // The data set's API only: an admin route (a scenario that runs scenarios, say) is no step's to call.
                path: Joi.string().max(2000).required().custom((value: string, helpers) => (pathRefusal(value) === null ? value : helpers.error('scenario.path', { why: pathRefusal(value) })))
                    .messages({ 'scenario.path': '{{#label}} {{#why}}' }),
                query: Joi.object().pattern(Joi.string().max(200), Joi.alternatives(Joi.string().max(2000).allow(''), Joi.number(), Joi.boolean())).max(50),
                headers: Joi.object().pattern(Joi.string().pattern(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/).max(200), headerValue).max(50),
                body: Joi.any()
            }).required(),
            expect: Joi.object({
                status: Joi.number().integer().min(100).max(599),
                body: Joi.any(),
                headers: Joi.object().pattern(Joi.string().max(200), headerValue).max(50)
            }),
            capture: Joi.object().pattern(name, jsonPath).max(50)
        }),
        clock: Joi.object({
            say: caption,
            clock: Joi.object({
                advance: Joi.string().pattern(durationPattern).messages({ 'string.pattern.base': '{{#label}} must be a duration such as 90s, 2h or 2d' }),
                now: clockTimestamp()
            }).xor('advance', 'now').required(),
            expect: Joi.object({
                applied: Joi.object().pattern(exactType, Joi.number().integer().min(0)),
                attempted: Joi.number().integer().min(0)
            })
        }),
        event: Joi.object({
            say: caption,
            event: Joi.object({ type: exactType.required(), data: Joi.any() }).required()
        }),
        webhook: Joi.object({
            say: caption,
            webhook: Joi.object({ type: exactType.required(), data: Joi.any(), within: duration.default(`${defaultWaitMs / 1000}s`) }).required()
        }),
        fault: Joi.object({
            say: caption,
            fault: Joi.object({ set: Joi.array(), seed: Joi.any(), clear: Joi.valid(true) }).xor('set', 'clear').oxor('seed', 'clear').required()
        }),
        say: Joi.object({ say: caption.required() })
    };
    built.set(types, schemas);
    return schemas;
}


/** The schema of a scenario file as a document shows it: every step's keys in one map, as a file's reader checks them. */
export function scenarioSchema(types: readonly string[]): Joi.ObjectSchema {

    const schemas = schemasOf(types);
    const part = (kind: StepKind, key: string) => schemas[kind].extract(key).optional();
    const step = Joi.object({
        say: part('say', 'say'),
        as: part('request', 'as'),
        request: part('request', 'request'),
        expect: Joi.object({
            status: part('request', 'expect.status'),
            body: part('request', 'expect.body'),
            headers: part('request', 'expect.headers'),
            applied: part('clock', 'expect.applied'),
            attempted: part('clock', 'expect.attempted')
        }).description('A request step\'s: status, body (a subset of the answer) and headers; a clock step\'s: applied (counts by type) and attempted'),
        capture: part('request', 'capture'),
        clock: part('clock', 'clock'),
        event: part('event', 'event'),
        webhook: part('webhook', 'webhook'),
        fault: part('fault', 'fault')
    }).label('ScenarioStep').description('One of request, clock, event, webhook or fault, with say as its caption; or say alone');
    return schemas.head.keys({ steps: Joi.array().items(step).min(1).max(maxSteps).required() }).label('Scenario');
}


/** The parsed value of a scenario's text (YAML, of which JSON is a part), bounded in size and depth before it is parsed. */
export function parseScenarioText(text: string): unknown {

    if (Buffer.byteLength(text) > maxYamlBytes) {
        throw new ScenarioError(`The scenario is larger than ${maxYamlBytes / 2 ** 10} KiB, the most a scenario may hold as YAML; as JSON (Content-Type: application/json, or a .json file) it may hold ${maxScenarioBytes / 2 ** 20} MiB`, 'scenario');
    }

    let items = 0;
    for (let i = 0; i < text.length; ++i) {
        const code = text.charCodeAt(i);
        // \n , [ {
        items += code === 10 || code === 44 || code === 91 || code === 123 ? 1 : 0;
    }

    if (items > maxYamlItems) {
        throw new ScenarioError(`The scenario holds more than ${maxYamlItems} lines, commas and opening brackets, the most a scenario may hold as YAML; as JSON (Content-Type: application/json, or a .json file) it may hold ${maxScenarioBytes / 2 ** 20} MiB`, 'scenario');
    }

    // The parser reads the text into a tree of tokens without recursion; its depth is measured before anything walks
    // it, and the same tokens make the document.
    const { Composer, Parser } = yaml();
    const tokens = [...new Parser().parse(text)];
    if (tokens.some((token) => tokenDepth(token) > maxJsonDepth)) {
        throw tooDeep();
    }

    let value: unknown;
    try {
        // yaml's own check of unique keys compares each key with every other one of its map: quadratic in a map's
        // size, so keys are counted here, once each.
        const [composed, another] = new Composer({ uniqueKeys: false }).compose(tokens, true, text.length);
        const document = always(composed, 'the document of the text');
        if (another) {
            throw new Error('the text holds more than one document; a scenario is one');
        }

        const [error] = document.errors;
        if (error) {
            throw error;
        }

        refuseRepeatedKeys(document.contents);
        value = document.toJS({ maxAliasCount: 100 });
    }
    catch (err) {
        throw new ScenarioError(`The scenario is not YAML or JSON: ${thrownMessage(err).split('\n')[0]}`, 'scenario');
    }

    // An alias may repeat a deep part deeper again.
    if (nestsDeeperThan(value, maxJsonDepth)) {
        throw tooDeep();
    }

    return value;
}


// Throws at a map that holds a key twice, walking the document with a stack of its own.
function refuseRepeatedKeys(contents: unknown): void {

    const { isMap, isScalar, isSeq } = yaml();
    const open = [contents];
    while (open.length) {
        const node = open.pop();
        if (isMap(node)) {
            const seen = new Set<unknown>();
            for (const { key, value } of node.items) {
                const keyValue = isScalar(key) ? key.value : key;
                if (seen.has(keyValue)) {
                    throw new Error(`Map keys must be unique; ${JSON.stringify(keyValue)} is repeated`);
                }

                seen.add(keyValue);
                open.push(value);
            }
        }
        else if (isSeq(node)) {
            // One at a time: a spread of a long list would be as many arguments on the call stack.
            for (const item of node.items) {
                open.push(item);
            }
        }
    }
}


function tooDeep(): ScenarioError {

    return new ScenarioError(tooDeepMessage, 'scenario', 'body_too_deep');
}


// How deep a parsed document's collections nest, walked with a stack of its own.
function tokenDepth(token: CST.Token): number {

    let deepest = 0;
    const open = [{ token, depth: 0 }];
    let top = open.pop();
    while (top !== undefined && deepest <= maxJsonDepth) {
        const { token: at, depth } = top;
        deepest = Math.max(deepest, depth);
        // A document's value is at its own depth; a collection's keys and values one deeper.
        const parts = at.type === 'document' ? [at.value] : at.type === 'block-map' || at.type === 'block-seq' || at.type === 'flow-collection' ? at.items.flatMap((item) => ['key' in item ? item.key : null, item.value]) : [];
        for (const part of parts.filter((child): child is CST.Token => Boolean(child))) {
            open.push({ token: part, depth: at.type === 'document' ? depth : depth + 1 });
        }

        top = open.pop();
    }

    return deepest;
}


/** The parsed value of a scenario sent as JSON: parsed natively, its depth checked as the scenario is read. */
export function parseScenarioJson(text: string): unknown {

    if (Buffer.byteLength(text) > maxScenarioBytes) {
        throw new ScenarioError(`The scenario is larger than ${maxScenarioBytes / 2 ** 20} MiB, the most a scenario may hold`, 'scenario');
    }

    try {
        const value: unknown = JSON.parse(text);
        return value;
    }
    catch (err) {
        throw new ScenarioError(`The scenario is not JSON: ${thrownMessage(err)}`, 'scenario');
    }
}


/** A scenario file's value, by its name: a .json file as JSON, any other as YAML. */
export function parseScenarioFile(text: string, file: string): unknown {

    return file.toLowerCase().endsWith('.json') ? parseScenarioJson(text) : parseScenarioText(text);
}


/** A scenario from its text or its parsed value, checked whole: a ScenarioError names the first step and field that is wrong. */
export function readScenario(source: unknown, rules: ScenarioRules): Scenario {

    const value = typeof source === 'string' ? parseScenarioText(source) : source;
    if (nestsDeeperThan(value, maxJsonDepth)) {
        throw tooDeep();
    }

    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        throw new ScenarioError('A scenario is a map with name and steps (and instance, actors and webhooks if it needs them)', 'scenario');
    }

    const schemas = schemasOf(rules.types);
    const head = checked<ScenarioInput>(schemas.head, value, '', 'The scenario');
    if (head.instance !== undefined) {
        checked(rules.instance, head.instance, 'instance', 'The scenario\'s instance');
    }

    const actors = Object.fromEntries(Object.entries(head.actors ?? {}).map(([actor, spec]) => [actor, { sub: spec.sub ?? actor, admin: spec.admin ?? false }]));
    const steps = head.steps.map((step, index) => readStep(step, index, schemas, rules, actors));
    checkPlaceholders(steps);
    return { name: head.name, description: head.description, instance: head.instance ?? {}, actors, webhooks: head.webhooks ?? [], steps };
}


function readStep(step: Record<string, unknown>, index: number, schemas: Record<StepKind, Joi.ObjectSchema>, rules: ScenarioRules, actors: Record<string, Actor>): Step {

    const at = `steps[${index}]`;
    const kinds = stepKinds.filter((kind) => kind in step);
    const title = stepTitle(index, step);
    if (kinds.length > 1) {
        throw new ScenarioError(`${title} has ${kinds.length} step kinds (${kinds.join(', ')}): a step does one of request, clock, event, webhook or fault`, at);
    }

    const kind: StepKind | null = kinds[0] ?? ('say' in step ? 'say' : null);
    if (kind === null) {
        const unknown = Object.keys(step).filter((key) => !['as', 'expect', 'capture'].includes(key));
        throw new ScenarioError(`${title} is of no step kind${unknown.length ? ` it knows (${unknown.join(', ')})` : ''}: give one of request, clock, event, webhook or fault, or say alone for a caption`, at);
    }

    const read = { kind, ...checked<object>(schemas[kind], step, at, title) } as Step;
    if (read.kind === 'request' && read.as !== undefined && !(read.as in actors)) {
        const known = Object.keys(actors);
        throw new ScenarioError(`${title}: "as" names the actor "${read.as}", which actors does not hold (${known.length ? known.join(', ') : 'it holds none'})`, `${at}.as`);
    }

    // The data set a step reaches is the run's: the header that names another instance is not taken.
    if (read.kind === 'request' && Object.keys(read.request.headers ?? {}).some((header) => header.toLowerCase() === instanceHeaderName.toLowerCase())) {
        throw new ScenarioError(`${title}: request.headers names another data set with ${instanceHeaderName}: a step sends to the run's own`, `${at}.request.headers`);
    }

    if (read.kind === 'fault' && 'set' in read.fault) {
        checked(faultSchemas(rules.types).faultRulesPayload, { rules: read.fault.set, seed: read.fault.seed }, `${at}.fault`, title, 'set');
    }

    return read;
}


/** How a step is called in a message: its number from 1, and its caption or request where it has one. */
export function stepTitle(index: number, step: object): string {

    const say = fieldOf(step, 'say');
    const request = fieldOf(step, 'request');
    const path = fieldOf(request, 'path');
    const what = typeof say === 'string' ? say : typeof path === 'string' ? `${String(fieldOf(request, 'method'))} ${path}` : null;
    return `Step ${index + 1}${what === null ? '' : ` (${what.length > 80 ? `${what.slice(0, 77)}...` : what})`}`;
}


function checked<T>(schema: Joi.Schema, value: unknown, at: string, title: string, rename?: string): T {

    const { error, value: valid } = schema.validate(value, { errors: { wrap: { label: false } }, abortEarly: true });
    if (error) {
        // A fault step's rules are checked as PUT …/faults checks its body, whose rules are the step's set.
        const detail = firstDetail(error);
        const path = detail.path.map((part, i) => (i === 0 && rename ? rename : part));
        // An empty key is named as the server names it everywhere: "", never an empty field.
        const field = path.map((part) => (part === '' ? '""' : part)).reduce<string>((text, part) => (typeof part === 'number' ? `${text}[${part}]` : text ? `${text}.${part}` : String(part)), '');
        const message = detail.type === 'object.unknown' ? `${field.endsWith('""') ? field : `"${field}"`} is not a field of ${at ? 'this kind of step' : 'a scenario'}` :
            rename ? detail.message.replace(/^rules\b/, `fault.${rename}`) : detail.message;
        throw new ScenarioError(`${title}: ${message}`, [at, field].filter(Boolean).join('.'));
    }

    return valid as T;
}


// Every {{name}} a step uses is captured by a step before it.
function checkPlaceholders(steps: readonly Step[]): void {

    const captured = new Set<string>();
    steps.forEach((step, index) => {

        if (step.kind === 'request' || step.kind === 'event' || step.kind === 'webhook') {
            for (const used of placeholdersIn(step.kind === 'request' ? [step.request, step.expect] : step.kind === 'event' ? step.event : step.webhook)) {
                if (!captured.has(used)) {
                    throw new ScenarioError(`${stepTitle(index, step)}: {{${used}}} is never captured before it (${captured.size ? `captured so far: ${[...captured].join(', ')}` : 'no step before it captures anything'})`, `steps[${index}]`);
                }
            }
        }

        if (step.kind === 'request') {
            for (const key of Object.keys(step.capture ?? {})) {
                captured.add(key);
            }
        }
    });
}


/** The names of the {{name}} placeholders in a value's strings and keys. */
export function placeholdersIn(value: unknown): string[] {

    const found: string[] = [];
    const open: unknown[] = [value];
    while (open.length) {
        const top = open.pop();
        if (typeof top === 'string') {
            for (const match of top.matchAll(placeholder)) {
                found.push(String(match[1]));
            }
        }
        else if (top !== null && typeof top === 'object') {
            for (const [key, child] of Object.entries(top)) {
                open.push(key, child);
            }
        }
    }

    return found;
}
