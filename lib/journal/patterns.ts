import Joi from 'joi';
import { JSONPath } from 'jsonpath-plus';

import { optionalBody, requestBody, wording } from '../fields';
import type { Recorded } from './entry';


// WireMock's request-matching JSON, the part that verifies what a client sent.

interface ValueMatcher {
    equalTo?: string;
    contains?: string;
    matches?: string;
    absent?: boolean;
    caseInsensitive?: boolean;
}

interface BodyPattern {
    equalToJson?: unknown;
    ignoreExtraElements?: boolean;
    ignoreArrayOrder?: boolean;
    matchesJsonPath?: string;
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


const regex = wording(Joi.string().max(1000).custom((value: string, helpers) => {

    try {
        new RegExp(value);
        return value;
    }
    catch {
        return helpers.error('regex.invalid');
    }
}), { 'regex.invalid': '{{#label}} must be a valid regular expression' }).description('A JavaScript regular expression, which must compile');

// jsonpath-plus parses a filter or script step only as it evaluates it: each runs once here, on an empty item. An
// error it reports as its own ("jsonPath: ...") comes from evaluating a well-formed expression, not from its syntax.
const jsonPath = wording(Joi.string().max(1000).custom((value: string, helpers) => {

    for (const step of JSONPath.toPathArray(value).filter((part) => /^\??\(/.test(part))) {
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
}), { 'jsonpath.invalid': '{{#label}} must be a valid JSONPath expression such as $.amount or $.items[?(@.price > 1)]' }).description('A JSONPath expression that must parse, such as $.amount or $.items[?(@.price > 1)]');

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

    try {
        JSON.parse(value);
        return value;
    }
    catch {
        return helpers.error('json.invalid');
    }
}), { 'json.invalid': '{{#label}} must be JSON, or a string holding JSON' }).description('Any JSON value, or a string holding JSON (a string that is not JSON is refused)');

const bodyPattern = wording(Joi.object({
    equalToJson: expectedJson,
    ignoreExtraElements: Joi.boolean(),
    ignoreArrayOrder: Joi.boolean(),
    matchesJsonPath: jsonPath,
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


/** Compiles a pattern the schema accepted into a test of journal records. */
export function compilePattern(pattern: RequestPattern): (recorded: Recorded) => boolean {

    const tests: ((recorded: Recorded) => boolean)[] = [];
    const method = pattern.method?.toUpperCase();
    if (method !== undefined && method !== 'ANY') {
        tests.push(({ entry }) => entry.method === method);
    }

    const { url, urlPath, urlPathPattern, urlPattern } = pattern;
    if (url !== undefined) {
        tests.push((recorded) => recorded.url === url);
    }
    else if (urlPath !== undefined) {
        tests.push(({ entry }) => entry.path === urlPath);
    }
    else if (urlPathPattern !== undefined) {
        const whole = wholeMatch(urlPathPattern);
        tests.push(({ entry }) => whole.test(entry.path));
    }
    else if (urlPattern !== undefined) {
        const whole = wholeMatch(urlPattern);
        tests.push((recorded) => whole.test(recorded.url));
    }

    for (const [name, matcher] of Object.entries(pattern.headers ?? {})) {
        const key = name.toLowerCase();
        const test = valueTest(matcher);
        tests.push(({ entry }) => test(entry.headers[key]));
    }

    for (const [name, matcher] of Object.entries(pattern.queryParameters ?? {})) {
        const test = valueTest(matcher);
        tests.push(({ entry }) => {

            const value = entry.query[name];
            return Array.isArray(value) ? value.some(test) : test(value);
        });
    }

    for (const body of pattern.bodyPatterns ?? []) {
        tests.push(bodyTest(body));
    }

    return (recorded) => tests.every((test) => test(recorded));
}


// WireMock's patterns match the whole value, as Java's String.matches does.
function wholeMatch(source: string, flags = ''): RegExp {

    return new RegExp(`^(?:${source})$`, flags);
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

    const whole = wholeMatch(matcher.matches!, matcher.caseInsensitive ? 'i' : '');
    return (value) => value !== undefined && whole.test(value);
}


function bodyTest(pattern: BodyPattern): (recorded: Recorded) => boolean {

    if (pattern.contains !== undefined) {
        const expected = pattern.contains;
        return ({ bodyText }) => bodyText !== null && bodyText.includes(expected);
    }

    if (pattern.matchesJsonPath !== undefined) {
        const path = pattern.matchesJsonPath;
        return ({ entry }) => !entry.body_truncated && entry.body !== null && jsonPathFinds(path, entry.body as object);
    }

    const expected = typeof pattern.equalToJson === 'string' ? JSON.parse(pattern.equalToJson) as unknown : pattern.equalToJson;
    const options = { extra: Boolean(pattern.ignoreExtraElements), anyOrder: Boolean(pattern.ignoreArrayOrder) };
    return ({ entry }) => !entry.body_truncated && jsonEqual(expected, entry.body, options);
}


// A filter that fails on a body (a property of a missing object) finds nothing there, as it would in WireMock.
function jsonPathFinds(path: string, json: object): boolean {

    try {
        return JSONPath({ path, json, eval: 'safe', wrap: true }).length > 0;
    }
    catch {
        return false;
    }
}


/** Whether a JSON value equals the expected one; extra object keys and array items, and array order, may be ignored. */
export function jsonEqual(expected: unknown, actual: unknown, options: { extra: boolean; anyOrder: boolean }): boolean {

    if (Array.isArray(expected)) {
        if (!Array.isArray(actual) || (options.extra ? actual.length < expected.length : actual.length !== expected.length)) {
            return false;
        }

        if (!options.anyOrder) {
            return expected.every((item, index) => jsonEqual(item, actual[index], options));
        }

        const used = new Set<number>();
        return expected.every((item) => {

            const index = actual.findIndex((candidate, at) => !used.has(at) && jsonEqual(item, candidate, options));
            used.add(index);
            return index !== -1;
        });
    }

    if (expected !== null && typeof expected === 'object') {
        if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) {
            return false;
        }

        const keys = Object.keys(expected);
        if (!options.extra && keys.length !== Object.keys(actual).length) {
            return false;
        }

        return keys.every((key) => Object.hasOwn(actual, key) && jsonEqual((expected as Record<string, unknown>)[key], (actual as Record<string, unknown>)[key], options));
    }

    return expected === actual;
}
