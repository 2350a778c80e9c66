import { JSONPath } from 'jsonpath-plus';
import { RE2JS } from 're2js';

import { failure } from '../errors';
import type { Recorded } from '../data-set/journal-entry';
import { jsonEqual, matchingBudget, maxMatchingSteps, type MatchingBudget } from './json-match';
import type { BodyPattern, JsonMatcher, JsonPathMatcher, RequestPattern, ValueMatcher } from './pattern-schema';
import { always } from '../always';


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

    const whole = wholeMatch(always(matcher.matches, 'a text matcher\'s pattern'), Boolean(matcher.caseInsensitive));
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
        return JSONPath<unknown[]>({ path, json: (rootFilter ? [json] : json) as object, eval: 'safe', wrap: true });
    }
    catch {
        return [];
    }
}
