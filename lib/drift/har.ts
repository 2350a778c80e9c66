import Fs from 'node:fs';

import Joi from 'joi';

import { maxJsonDepth, nestsDeeperThan } from '../nesting';
import { CallerAliases } from '../record';
import { hidden } from '../secrets';
import { thrownMessage } from '../thrown';


// Reading an HTTP Archive (HAR 1.2): localgate record's, a browser's or Playwright's. Only what a replay needs is read,
// checked with joi; every other field a tool writes is let be. No library is used: the format is small and stable, and
// the packages that checked it against its schema are unmaintained (har-validator is deprecated, har-schema's last
// release was in 2017).

/** The largest HAR read. */
export const maxHarBytes = 64 * 2 ** 20;

/** The most entries a HAR may hold. */
export const maxHarEntries = 10_000;

/** The largest body of an entry that is read; a larger one is read as none. */
export const maxHarBodyBytes = 2 ** 20;

/** One exchange as a replay reads it: the request as sent, as its caller, and the answer as the upstream gave it. */
export interface Exchange {
    /** Its place in the recording, from 1. */
    entry: number;
    method: string;
    /** The path and query, from /v1/ or /health on: the upstream's base path left out. */
    path: string;
    headers: Record<string, string>;
    body: string | null;
    caller: string | null;
    status: number;
    answerHeaders: Record<string, string>;
    /** The answer's body: parsed when it is JSON, its text otherwise, null when there was none or it was not kept. */
    answer: unknown;
}

/** A file that is not a HAR this can read, in one line naming what is wrong. */
export class HarError extends Error { }

const pair = Joi.object({ name: Joi.string().required(), value: Joi.string().allow('').required() }).unknown();

const entrySchema = Joi.object({
    request: Joi.object({
        method: Joi.string().required(),
        url: Joi.string().required(),
        headers: Joi.array().items(pair).required(),
        postData: Joi.object({ mimeType: Joi.string().allow(''), text: Joi.string().allow('') }).unknown()
    }).unknown().required(),
    response: Joi.object({
        status: Joi.number().integer().min(0).max(999).required(),
        headers: Joi.array().items(pair).required(),
        content: Joi.object({ mimeType: Joi.string().allow(''), text: Joi.string().allow(''), encoding: Joi.string() }).unknown().required()
    }).unknown().required(),
    _caller: Joi.string().allow(null)
}).unknown();

const harSchema = Joi.object({
    log: Joi.object({
        entries: Joi.array().max(maxHarEntries).required().messages({ 'array.max': `{{#label}} holds more than ${maxHarEntries} entries, the most a recording may` })
    }).unknown().required()
}).unknown();


/** Reads a HAR file: bounded in size before it is read, in depth before it is walked, and in entries. */
export function readHarFile(file: string): Exchange[] {

    let size: number;
    try {
        size = Fs.statSync(file).size;
    }
    catch (err) {
        throw new HarError(`${file} cannot be read: ${thrownMessage(err)}`);
    }

    if (size > maxHarBytes) {
        throw new HarError(`${file} is larger than ${maxHarBytes / 2 ** 20} MiB, the most a recording may be`);
    }

    return readHar(Fs.readFileSync(file, 'utf8'), file);
}


/** The exchanges of a HAR's text, in the order recorded. */
export function readHar(text: string, name: string): Exchange[] {

    let value: unknown;
    try {
        value = JSON.parse(text);
    }
    catch (err) {
        throw new HarError(`${name} is not a HAR: it is not JSON (${thrownMessage(err)})`);
    }

    if (nestsDeeperThan(value, maxJsonDepth)) {
        throw new HarError(`${name} is not a HAR: it nests deeper than ${maxJsonDepth} levels`);
    }

    const head = harSchema.validate(value, { errors: { label: 'path' } });
    if (head.error) {
        throw new HarError(`${name} is not a HAR: ${head.error.message.replace(/"/g, '')}`);
    }

    const entries = (value as { log: { entries: unknown[] } }).log.entries;
    const aliases = new CallerAliases();
    return entries.map((entry, index) => exchangeOf(entry, index, name, aliases));
}


function exchangeOf(raw: unknown, index: number, name: string, aliases: CallerAliases): Exchange {

    const checked = entrySchema.validate(raw, { errors: { label: 'path' } });
    if (checked.error) {
        throw new HarError(`${name}: log.entries[${index}].${checked.error.message.replace(/"/g, '')}`);
    }

    const entry = checked.value as {
        request: { method: string; url: string; headers: { name: string; value: string }[]; postData?: { text?: string } };
        response: { status: number; headers: { name: string; value: string }[]; content: { mimeType?: string; text?: string; encoding?: string } };
        _caller?: string | null;
    };
    if (!URL.canParse(entry.request.url)) {
        throw new HarError(`${name}: log.entries[${index}].request.url is not a URL: ${entry.request.url.slice(0, 200)}`);
    }

    const url = new URL(entry.request.url);
    const headers = headersOf(entry.request.headers);
    // A hosted API may sit under a base path: the replay's paths are the contract's, from /v1/ or /health.
    const at = url.pathname.search(/\/(?:v1\/|health$)/);
    const { content } = entry.response;
    const text = content.encoding === 'base64' || content.text === undefined || Buffer.byteLength(content.text) > maxHarBodyBytes ? null : content.text;
    return {
        entry: index + 1,
        method: entry.request.method.toUpperCase(),
        path: `${at === -1 ? url.pathname : url.pathname.slice(at)}${url.search}`,
        headers,
        body: entry.request.postData?.text ?? null,
        // localgate record's alias; in a HAR made elsewhere (a browser's), one of the credential it was sent with.
        caller: entry._caller === undefined ? aliases.aliasOf(headers.authorization === hidden ? undefined : headers.authorization) : entry._caller,
        status: entry.response.status,
        answerHeaders: headersOf(entry.response.headers),
        answer: text === null || text === '' ? null : parsed(text, String(content.mimeType))
    };
}


function headersOf(pairs: { name: string; value: string }[]): Record<string, string> {

    return Object.fromEntries(pairs.map(({ name, value }) => [name.toLowerCase(), value]));
}


function parsed(text: string, mimeType: string): unknown {

    if (!/\bjson\b/i.test(mimeType)) {
        return text;
    }

    try {
        const value: unknown = JSON.parse(text);
        // Walked later: a body deeper than any body of the contract is kept as its text.
        return nestsDeeperThan(value, maxJsonDepth) ? text : value;
    }
    catch {
        return text;
    }
}
