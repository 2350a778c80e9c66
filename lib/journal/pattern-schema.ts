import Joi from 'joi';
import { JSONPath } from 'jsonpath-plus';
import { RE2JS } from 're2js';

import { errorMessage } from '../errno';
import { optionalBody, requestBody, wording } from '../fields';
import { maxJsonDepth, nestsDeeperThan } from '../nesting';


// WireMock's request-matching JSON, the part that verifies what a client sent: its types, its schema and the limits
// the schema holds a pattern to.

/** A header's, query parameter's or found value's matcher. */
export interface ValueMatcher {
    equalTo?: string;
    contains?: string;
    matches?: string;
    absent?: boolean;
    caseInsensitive?: boolean;
}

/** A JSON comparison, equal or with extra elements and any array order ignored. */
export interface JsonMatcher {
    equalToJson?: unknown;
    ignoreExtraElements?: boolean;
    ignoreArrayOrder?: boolean;
}

/** WireMock's matchesJsonPath with a sub-matcher: the values the expression finds, each matched on its own. */
export interface JsonPathMatcher extends ValueMatcher, JsonMatcher {
    expression: string;
}

/** One of a pattern's bodyPatterns. */
export interface BodyPattern extends JsonMatcher {
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
});

// What every regular expression of a pattern must be, which no schema keyword says: the document gives it in words.
export const regexRule = `in RE2's syntax, that must compile (no backreferences or lookaround) to at most ${maxRegexProgram} instructions, else a 400 validation_failed naming the field`;

// Limits that keep evaluating an expression linear in the body: one recursive descent (a second multiplies the work
// by the body's size), unions whose sizes multiply to a bounded fan-out, and no function calls in a filter or script
// (a string's match() would run a backtracking regex, its repeat() fill the memory).
export const maxUnionFanOut = 16;

const quoted = /'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"/g;

const call = /[\w$\].)]\s*\(|`/;

// jsonpath-plus keeps every expression and script it parses in its JSONPath.cache, for ever: a client sending new
// expressions would grow it without end. It is emptied when it holds more than this many.
export const maxCachedJsonPaths = 1000;

// jsonpath-plus parses a filter or script step only as it evaluates it: each runs once here, on an empty item. An
// error it reports as its own ("jsonPath: ...") comes from evaluating a well-formed expression, not from its syntax.
export const jsonPath = wording(Joi.string().max(1000).custom((value: string, helpers) => {

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
            if (!errorMessage(err).startsWith('jsonPath:')) {
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
    matches: regex.description(`A regular expression ${regexRule}`),
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
    matches: regex.description(`A regular expression ${regexRule}`),
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
    urlPathPattern: regex.description(`A regular expression the whole path matches, ${regexRule}`),
    urlPattern: regex.description(`A regular expression the whole path and query match, ${regexRule}`),
    headers: Joi.object().pattern(Joi.string(), valueMatcher).description('Header name (any case) to matcher; credentials read [hidden]'),
    queryParameters: Joi.object().pattern(Joi.string(), valueMatcher).description('Query parameter to matcher'),
    bodyPatterns: Joi.array().items(bodyPattern).max(20).description('Every pattern must match the JSON body')
}, 'RequestPattern').oxor('url', 'urlPath', 'urlPathPattern', 'urlPattern'), {
    'object.oxor': 'The request pattern may hold only one of url, urlPath, urlPathPattern and urlPattern'
}));
