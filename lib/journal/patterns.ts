import Joi from 'joi';
import { JSONPath } from 'jsonpath-plus';
import { RE2JS } from 're2js';

import { failure } from '../errors';
import { optionalBody, requestBody, wording } from '../fields';
import { maxJsonDepth, nestsDeeperThan } from '../nesting';
import type { Recorded } from './entry';


// WireMock's request-matching JSON, the part that verifies what a client sent.

interface ValueMatcher {
    equalTo?: string;
    contains?: string;
    matches?: string;
    absent?: boolean;
    caseInsensitive?: boolean;
}

interface JsonMatcher {
    equalToJson?: unknown;
    ignoreExtraElements?: boolean;
    ignoreArrayOrder?: boolean;
}

// WireMock's matchesJsonPath with a sub-matcher: the values the expression finds, each matched on its own.
interface JsonPathMatcher extends ValueMatcher, JsonMatcher {
    expression: string;
}

interface BodyPattern extends JsonMatcher {
    matchesJsonPath?: string | JsonPathMatcher;
    contains?: string;
}

/** A request pattern as WireMock writes it. */
export interface RequestPattern {
    method?: string;
    url?: string;
    urlPath?: string;
    urlPathPattern?: string;
    urlPattern?: string;
    headers?: Record<string, ValueMatcher>;
    queryParameters?: Record<string, ValueMatcher>;
    bodyPatterns?: BodyPattern[];
}


// The compiled size RE2 gives a pattern, in instructions: matching costs at most this many steps a character.
export const maxRegexProgram = 200;

// Regular expressions run on RE2's engine, which never backtracks: matching is linear in the text. It has no
// backreferences or lookaround, and refuses a pattern it cannot compile.
const regex = wording(Joi.string().max(1000).custom((value: string, helpers) => {

    let compiled: RE2JS;
    try {
        compiled = RE2JS.compile(value);
    }
    catch {
        return helpers.error('regex.invalid');
    }

    return compiled.programSize() > maxRegexProgram ? helpers.error('regex.large', { limit: maxRegexProgram }) : value;
}), {
    'regex.invalid': '{{#label}} must be a regular expression RE2 accepts: no backreferences or lookaround',
    'regex.large': '{{#label}} compiles to more than {{#limit}} instructions: use a shorter pattern or fewer repetitions'
}).description(`A regular expression in RE2's syntax that must compile: no backreferences or lookaround, at most ${maxRegexProgram} instructions`);

// Limits that keep evaluating an expression linear in the body: one recursive descent (a second multiplies the work
// by the body's size), unions whose sizes multiply to a bounded fan-out, and no function calls in a filter or script
// (a string's match() would run a backtracking regex, its repeat() fill the memory).
export const maxUnionFanOut = 16;

const quoted = /'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"/g;

const call = /[\w$\].)]\s*\(|`/;

// jsonpath-plus keeps every expression and script it parses in its JSONPath.cache, for ever: a client sending new
// expressions would grow it without end. It is emptied when it holds more than this many.
export const maxCachedJsonPaths = 1000;

// The comparison steps one request may spend pairing array items under ignoreExtraElements with ignoreArrayOrder: a
// pairing is a bipartite matching, whose cost grows with the product of the arrays' lengths.
export const maxMatchingSteps = 1_000_000;

// jsonpath-plus parses a filter or script step only as it evaluates it: each runs once here, on an empty item. An
// error it reports as its own ("jsonPath: ...") comes from evaluating a well-formed expression, not from its syntax.
const jsonPath = wording(Joi.string().max(1000).custom((value: string, helpers) => {

    if (Object.keys(JSONPath.cache as object).length > maxCachedJsonPaths) {
        JSONPath.cache = {};
    }

    const steps = JSONPath.toPathArray(value);
    if (steps.filter((step) => step === '..').length > 1) {
        return helpers.error('jsonpath.descent');
    }

    const fanOut = steps.reduce((product, step) => product * (/^\??\(/.test(step) ? 1 : step.split(',').length), 1);
    if (fanOut > maxUnionFanOut) {
        return helpers.error('jsonpath.union', { limit: maxUnionFanOut });
    }

    for (const step of steps.filter((part) => /^\??\(/.test(part))) {
        if (call.test(step.replace(quoted, '""'))) {
            return helpers.error('jsonpath.call');
        }

        try {
            JSONPath({ path: `$[${step}]`, json: [{}], eval: 'safe' });
        }
        catch (err) {
            if (!(err as Error).message.startsWith('jsonPath:')) {
                return helpers.error('jsonpath.invalid');
            }
        }
    }

    return value;
}), {
    'jsonpath.invalid': '{{#label}} must be a valid JSONPath expression such as $.amount or $.items[?(@.price > 1)]',
    'jsonpath.descent': '{{#label}} may hold one recursive descent (..) at most',
    'jsonpath.union': '{{#label}} selects too many branches: the sizes of its unions ([a,b]) multiply to more than {{#limit}}',
    'jsonpath.call': '{{#label}} calls a function in a filter or script: only comparisons and property reads are allowed'
}).description(`A JSONPath expression that must parse, such as $.amount or $.items[?(@.price > 1)], with one recursive descent (..) at most, unions whose sizes multiply to ${maxUnionFanOut} at most, and no function calls`);

const valueMatcher = wording(Joi.object({
    equalTo: Joi.string().allow(''),
    contains: Joi.string().allow(''),
    matches: regex,
    absent: Joi.boolean(),
    caseInsensitive: Joi.boolean()
}).xor('equalTo', 'contains', 'matches', 'absent'), {
    'object.missing': '{{#label}} must hold one of equalTo, contains, matches or absent',
    'object.xor': '{{#label}} must hold only one of equalTo, contains, matches or absent'
});

// equalToJson takes JSON or its text, as WireMock does; text that is no JSON is refused here, not at match time.
const expectedJson = wording(Joi.any().custom((value: unknown, helpers) => {

    if (typeof value !== 'string') {
        return value;
    }

    let parsed: unknown;
    try {
        parsed = JSON.parse(value);
    }
    catch {
        return helpers.error('json.invalid');
    }

    // Its text is parsed here, not with the body: it meets the bound a body meets.
    return nestsDeeperThan(parsed, maxJsonDepth) ? helpers.error('json.deep') : value;
}), {
    'json.invalid': '{{#label}} must be JSON, or a string holding JSON',
    'json.deep': `{{#label}} nests arrays and objects deeper than ${maxJsonDepth} levels, the most the server accepts`
}).description(`Any JSON value, or a string holding JSON (a string that is not JSON is refused), nested ${maxJsonDepth} levels at most`);

const jsonPathMatcher = wording(Joi.object({
    expression: jsonPath.required(),
    equalTo: Joi.string().allow(''),
    contains: Joi.string().allow(''),
    matches: regex,
    absent: Joi.boolean(),
    caseInsensitive: Joi.boolean(),
    equalToJson: expectedJson,
    ignoreExtraElements: Joi.boolean(),
    ignoreArrayOrder: Joi.boolean()
}).xor('equalTo', 'contains', 'matches', 'absent', 'equalToJson').with('ignoreExtraElements', 'equalToJson').with('ignoreArrayOrder', 'equalToJson'), {
    'object.base': '{{#label}} must be a JSONPath expression, or an object with an expression and a sub-matcher',
    'object.missing': '{{#label}} must hold one of equalTo, contains, matches, absent or equalToJson beside its expression',
    'object.xor': '{{#label}} must hold only one of equalTo, contains, matches, absent or equalToJson',
    'object.with': '{{#label}} sets {{#main}}, which goes with equalToJson only'
});

const bodyPattern = wording(Joi.object({
    equalToJson: expectedJson,
    ignoreExtraElements: Joi.boolean(),
    ignoreArrayOrder: Joi.boolean(),
    // hapi-swagger cannot describe an object among alternatives: the document says the type of the first form, and the
    // description gives both.
    matchesJsonPath: Joi.any().when(Joi.string(), { then: jsonPath, otherwise: jsonPathMatcher }).description('A JSONPath expression that must parse and find something, or {expression} with one sub-matcher: equalTo, contains, matches, absent or equalToJson'),
    contains: Joi.string()
}).xor('equalToJson', 'matchesJsonPath', 'contains').with('ignoreExtraElements', 'equalToJson').with('ignoreArrayOrder', 'equalToJson'), {
    'object.missing': '{{#label}} must hold one of equalToJson, matchesJsonPath or contains',
    'object.xor': '{{#label}} must hold only one of equalToJson, matchesJsonPath or contains',
    'object.with': '{{#label}} sets {{#main}}, which goes with equalToJson only'
});

export const requestPatternSchema = optionalBody(wording(requestBody({
    method: Joi.string().pattern(/^[A-Za-z]+$/).max(16).description('An HTTP method, or ANY'),
    url: Joi.string().max(4000).description('The path and query exactly as sent, without an instance\'s base path'),
    urlPath: Joi.string().max(4000).description('The path exactly'),
    urlPathPattern: regex.description('A regular expression the whole path matches'),
    urlPattern: regex.description('A regular expression the whole path and query match'),
    headers: Joi.object().pattern(Joi.string(), valueMatcher).description('Header name (any case) to matcher; credentials read [hidden]'),
    queryParameters: Joi.object().pattern(Joi.string(), valueMatcher).description('Query parameter to matcher'),
    bodyPatterns: Joi.array().items(bodyPattern).max(20).description('Every pattern must match the JSON body')
}, 'RequestPattern').oxor('url', 'urlPath', 'urlPathPattern', 'urlPattern'), {
    'object.oxor': 'The request pattern may hold only one of url, urlPath, urlPathPattern and urlPattern'
}));


// What a test reads of one recorded request; the body is parsed once, when a body pattern first asks for it.
interface Candidate {
    head: Recorded['head'];
    url: string;
    bodyText: string | null;
    // The parsed body; undefined when the body was cut, so that no JSON pattern matches a part of one.
    json(): unknown;
}


/** Compiles a pattern the schema accepted into a test of journal records. */
export function compilePattern(pattern: RequestPattern): (recorded: Recorded) => boolean {

    const tests: ((candidate: Candidate) => boolean)[] = [];
    const method = pattern.method?.toUpperCase();
    if (method !== undefined && method !== 'ANY') {
        tests.push(({ head }) => head.method === method);
    }

    const { url, urlPath, urlPathPattern, urlPattern } = pattern;
    if (url !== undefined) {
        tests.push((candidate) => candidate.url === url);
    }
    else if (urlPath !== undefined) {
        tests.push(({ head }) => head.path === urlPath);
    }
    else if (urlPathPattern !== undefined) {
        const whole = wholeMatch(urlPathPattern, false);
        tests.push(({ head }) => whole(head.path));
    }
    else if (urlPattern !== undefined) {
        const whole = wholeMatch(urlPattern, false);
        tests.push((candidate) => whole(candidate.url));
    }

    for (const [name, matcher] of Object.entries(pattern.headers ?? {})) {
        const key = name.toLowerCase();
        const test = valueTest(matcher);
        tests.push(({ head }) => test(head.headers[key]));
    }

    for (const [name, matcher] of Object.entries(pattern.queryParameters ?? {})) {
        const test = valueTest(matcher);
        tests.push(({ head }) => {

            const value = head.query[name];
            return Array.isArray(value) ? value.some(test) : test(value);
        });
    }

    // One budget for the whole request, however many records and patterns it compares.
    const budget = matchingBudget();
    for (const [index, body] of (pattern.bodyPatterns ?? []).entries()) {
        tests.push(bodyTest(body, { budget, field: `bodyPatterns.${index}` }));
    }

    return (recorded) => {

        let parsed: { value: unknown } | null = null;
        const candidate: Candidate = {
            head: recorded.head,
            url: recorded.url,
            bodyText: recorded.bodyText,
            json() {

                parsed ??= { value: candidate.head.body_truncated || candidate.bodyText === null ? undefined : JSON.parse(candidate.bodyText) as unknown };
                return parsed.value;
            }
        };

        return tests.every((test) => test(candidate));
    };
}


// WireMock's patterns match the whole value, as Java's String.matches does; RE2's matches() does the same.
function wholeMatch(source: string, caseInsensitive: boolean): (text: string) => boolean {

    const compiled = RE2JS.compile(source, caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
    return (text) => compiled.matches(text);
}


function valueTest(matcher: ValueMatcher): (value: string | undefined) => boolean {

    if (matcher.absent !== undefined) {
        return (value) => (value === undefined) === matcher.absent;
    }

    const fold = matcher.caseInsensitive ? (text: string) => text.toLowerCase() : (text: string) => text;
    if (matcher.equalTo !== undefined) {
        const expected = fold(matcher.equalTo);
        return (value) => value !== undefined && fold(value) === expected;
    }

    if (matcher.contains !== undefined) {
        const expected = fold(matcher.contains);
        return (value) => value !== undefined && fold(value).includes(expected);
    }

    const whole = wholeMatch(matcher.matches!, Boolean(matcher.caseInsensitive));
    return (value) => value !== undefined && whole(value);
}


// Where a JSON comparison spends its steps, and the field a refusal names.
interface Metering {
    budget: MatchingBudget;
    field: string;
}


function jsonTest(pattern: JsonMatcher, metering: Metering): (actual: unknown) => boolean {

    const expected = typeof pattern.equalToJson === 'string' ? JSON.parse(pattern.equalToJson) as unknown : pattern.equalToJson;
    const options = { extra: Boolean(pattern.ignoreExtraElements), anyOrder: Boolean(pattern.ignoreArrayOrder) };
    return (actual) => {

        const equal = jsonEqual(expected, actual, options, metering.budget);
        if (metering.budget.left < 0) {
            const message = `${metering.field} takes more than ${maxMatchingSteps} comparison steps to pair array items under ignoreExtraElements with ignoreArrayOrder, the most one request may spend: compare fewer or smaller items, or drop one of the two`;
            throw failure(400, 'validation_failed', `Invalid payload: ${message}`, { details: [{ field: metering.field, message }] });
        }

        return equal;
    };
}


function bodyTest(pattern: BodyPattern, metering: Metering): (candidate: Candidate) => boolean {

    if (pattern.contains !== undefined) {
        const expected = pattern.contains;
        return ({ bodyText }) => bodyText !== null && bodyText.includes(expected);
    }

    const path = pattern.matchesJsonPath;
    if (typeof path === 'string') {
        return (candidate) => {

            const json = candidate.json();
            return json !== undefined && jsonPathFinds(path, json).some(isFound);
        };
    }

    if (path !== undefined) {
        return jsonPathTest(path, { ...metering, field: `${metering.field}.matchesJsonPath` });
    }

    const test = jsonTest(pattern, metering);
    return (candidate) => candidate.head.body_truncated === false && test(candidate.json() ?? null);
}


// WireMock's matchesJsonPath with a sub-matcher: it matches when one of the values found does; a value that is an
// object or an array is matched as its JSON text, except by equalToJson, which compares it as JSON.
function jsonPathTest(matcher: JsonPathMatcher, metering: Metering): (candidate: Candidate) => boolean {

    const { expression } = matcher;
    if (matcher.equalToJson !== undefined) {
        const test = jsonTest(matcher, metering);
        return (candidate) => {

            const json = candidate.json();
            return json !== undefined && jsonPathFinds(expression, json).some(test);
        };
    }

    const test = valueTest(matcher);
    return (candidate) => {

        const json = candidate.json();
        if (json === undefined) {
            return false;
        }

        const found = jsonPathFinds(expression, json);
        return found.length === 0 ? test(undefined) : found.some((value) => test(typeof value === 'string' ? value : JSON.stringify(value)));
    };
}


// As WireMock counts a result: a value other than null, an empty object or an empty array.
function isFound(value: unknown): boolean {

    return value !== null && (typeof value !== 'object' || Object.keys(value).length > 0);
}


// A filter on the root of an object body ($[?(@.price > 2)]) tests the object itself, as WireMock's JSONPath does;
// jsonpath-plus would test the object's values. A filter that fails on a body (a property of a missing object) finds
// nothing there, as it would in WireMock.
function jsonPathFinds(path: string, json: unknown): unknown[] {

    // A body is never null here: a request without one has none to match.
    const rootFilter = /^\$\[\s*\?/.test(path) && typeof json === 'object' && !Array.isArray(json);
    try {
        return JSONPath({ path, json: (rootFilter ? [json] : json) as object, eval: 'safe', wrap: true }) as unknown[];
    }
    catch {
        return [];
    }
}


interface MatchingBudget {
    // Steps left; below 0 once spent, when every comparison under way answers false.
    left: number;
    // Above 0 while array items are being paired, the only comparisons that spend steps.
    pairing: number;
}


function matchingBudget(): MatchingBudget {

    return { left: maxMatchingSteps, pairing: 0 };
}


interface JsonOptions {
    extra: boolean;
    anyOrder: boolean;
}


/**
 * Whether a JSON value equals the expected one; extra object keys and array items, and array order, may be ignored.
 * Pairing array items under both spends the budget's steps; once it is spent, the answer is false and budget.left < 0.
 */
export function jsonEqual(expected: unknown, actual: unknown, options: JsonOptions, budget: MatchingBudget = matchingBudget()): boolean {

    if (budget.pairing > 0 && --budget.left < 0) {
        return false;
    }

    if (Array.isArray(expected)) {
        if (!Array.isArray(actual) || (options.extra ? actual.length < expected.length : actual.length !== expected.length)) {
            return false;
        }

        if (!options.anyOrder) {
            return expected.every((item, index) => jsonEqual(item, actual[index], options, budget));
        }

        return options.extra ? pairs(expected, actual, options, budget) : sameItems(expected, actual);
    }

    if (expected !== null && typeof expected === 'object') {
        if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) {
            return false;
        }

        const keys = Object.keys(expected);
        if (!options.extra && keys.length !== Object.keys(actual).length) {
            return false;
        }

        return keys.every((key) => Object.hasOwn(actual, key) && jsonEqual((expected as Record<string, unknown>)[key], (actual as Record<string, unknown>)[key], options, budget));
    }

    return expected === actual;
}


// The items of each expected array, counted by canonical key: made once per pattern, not once per record.
const expectedCounts = new WeakMap<unknown[], Map<string, number>>();


// Without extra items, two arrays in any order are equal when they hold the same items as many times: a count of
// canonical keys, linear in the arrays.
function sameItems(expected: unknown[], actual: unknown[]): boolean {

    let counts = expectedCounts.get(expected);
    if (!counts) {
        counts = new Map();
        for (const item of expected) {
            const key = canonicalKey(item);
            counts.set(key, (counts.get(key) ?? 0) + 1);
        }

        expectedCounts.set(expected, counts);
    }

    const left = new Map(counts);
    for (const item of actual) {
        const key = canonicalKey(item);
        const count = left.get(key);
        if (!count) {
            return false;
        }

        left.set(key, count - 1);
    }

    // As many items on each side, and none more than expected: every count is 0.
    return true;
}


// JSON with object keys sorted and array items sorted by their own keys: equal for values equal in any order.
function canonicalKey(value: unknown): string {

    if (Array.isArray(value)) {
        return `[${value.map(canonicalKey).sort().join(',')}]`;
    }

    if (value !== null && typeof value === 'object') {
        const record = value as Record<string, unknown>;
        return `{${Object.keys(record).sort().map((key) => `${JSON.stringify(key)}:${canonicalKey(record[key])}`).join(',')}}`;
    }

    return JSON.stringify(value);
}


// With extra items, each expected item needs an actual item of its own that it matches: a bipartite matching, found
// by augmenting paths (Kuhn's algorithm) walked with an explicit stack, every comparison spending the budget.
function pairs(expected: unknown[], actual: unknown[], options: JsonOptions, budget: MatchingBudget): boolean {

    ++budget.pairing;
    try {
        // The expected item each actual item is paired with, and the search that last visited it.
        const pairedWith = new Array<number>(actual.length).fill(-1);
        const visitedBy = new Array<number>(actual.length).fill(-1);
        for (let i = 0; i < expected.length; ++i) {
            // The path from the free expected item: an expected item each step, and the next actual item it tries.
            const path = [i];
            const next = [0];
            let paired = false;
            while (path.length && !paired) {
                const top = path.length - 1;
                const candidate = next[top]!;
                if (candidate === actual.length) {
                    path.pop();
                    next.pop();
                    continue;
                }

                next[top] = candidate + 1;
                // Every candidate tried is a step, a visited one too: the search stops within the budget.
                if (--budget.left < 0) {
                    return false;
                }

                if (visitedBy[candidate] === i || !jsonEqual(expected[path[top]!], actual[candidate], options, budget)) {
                    continue;
                }

                visitedBy[candidate] = i;
                const owner = pairedWith[candidate]!;
                if (owner === -1) {
                    // Each expected item on the path takes the actual item it tried last.
                    for (let j = 0; j < path.length; ++j) {
                        pairedWith[next[j]! - 1] = path[j]!;
                    }

                    paired = true;
                }
                else {
                    path.push(owner);
                    next.push(0);
                }
            }

            if (!paired) {
                return false;
            }
        }

        return true;
    }
    finally {
        --budget.pairing;
    }
}
