import Joi from 'joi';


// Longest accepted id in a path, a query or a body, in UTF-16 code units.
export const maxIdLength = 100;

/** The id of a record as a client sends it: a string of up to 100 characters. */
export const recordId = Joi.string().max(maxIdLength);

/** An ISO 8601 timestamp, as every record's created_at (a date in joi's terms, so the document says date-time). */
export const timestamp = Joi.date().iso();

// The wording a schema gives its own error codes (see wording()), by the error function joi carries for the schema.
const wordings = new WeakMap<Joi.ValidationErrorFunction, Record<string, unknown>>();

// The reports a schema already worded: the schemas around it (a body around its field) leave them as they are, as a
// field's own .messages() took precedence over those it inherited from the body.
const worded = new WeakSet<Joi.ErrorReport>();


/**
 * Gives a schema its own wording for some error codes, as `.messages()` would. `.messages()` is a preference, and joi
 * merges a schema's preferences into those of the schema around it again on every validation, copying the messages
 * the outer schema set: that was half of the time a request body took to validate. Here the wording is compiled once
 * and handed to joi's error reports only when the schema fails: its own, and those of the schemas inside it that do
 * not word the same code themselves, as inherited messages were. A second call adds to the first.
 */
export function wording<T extends Joi.Schema>(schema: T, messages: Record<string, string>): T {

    const templates = new Map(Object.entries(wordings.get(schema.$_getFlag('error')) ?? {}));
    for (const [code, message] of Object.entries(messages)) {
        templates.set(code, Joi.expression(message));
    }

    const word: Joi.ValidationErrorFunction = (reports) => {

        for (const report of reports) {
            const template = templates.get(report.code);
            if (template && !worded.has(report)) {
                worded.add(report);
                // joi reads a report's messages as compiled templates, as it keeps its own: its types name only text.
                report.messages = { ...report.messages, [report.code]: template } as Joi.LanguageMessages;
            }
        }

        return reports;
    };

    wordings.set(word, Object.fromEntries(templates));
    // joi types error() as returning its own schema type, which the union of schemas T extends loses.
    return schema.error(word) as T;
}


/** The first problem a joi error names: with abortEarly, the only one. */
export function firstDetail(error: Joi.ValidationError): Joi.ValidationErrorItem {

    const [first] = error.details;
    if (!first) {
        // joi makes no error without a detail: one made otherwise is thrown on as it is.
        throw error;
    }

    return first;
}


// Text is stored exactly as sent; only what a hosted Postgres would refuse as text is refused here too: NUL and a
// surrogate that is not half of a pair. Said as a pattern without flags, so that the document carries it as it is: it
// means the same to a reader of UTF-16 units and to one of code points (where a pair is one character).
export const storablePattern = /^(?:[^\u0000\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])*$/;


/** Free text of at most max UTF-16 code units, refusing NUL characters and unpaired surrogates. */
export function text(max: number): Joi.StringSchema {

    return wording(Joi.string().max(max).pattern(storablePattern, { name: 'storable' }), {
        'string.pattern.name': '{{#label}} must not contain NUL characters or unpaired surrogates'
    });
}


/** Text that must show something: white space alone is refused (and kept as sent when there is more). */
export function visibleText(max: number): Joi.StringSchema {

    return wording(text(max).pattern(/\S/), {
        'string.pattern.base': '{{#label}} must contain at least one character that is not white space'
    });
}


/** A body field the service sets itself: sending it is a 400 that names the field and says where its value comes from. */
export function setByService(source: string): Joi.AnySchema {

    return wording(Joi.any().forbidden(), { 'any.unknown': `{{#label}} is set by the service (${source}) and cannot be sent` });
}


// hapi parses a body of no bytes and the body `null` alike, into null: the headers tell them apart.
const noBodySent = Joi.object({ 'content-length': Joi.valid('0'), 'transfer-encoding': Joi.forbidden() }).unknown(true).required();


/**
 * A request body that may be left out, which stands for its defaults; a body of `null` is refused as every body that
 * is not a JSON object is. Outside a request (no headers in joi's context) null is refused too.
 */
export function optionalBody(schema: Joi.ObjectSchema): Joi.ObjectSchema {

    return schema.when('$headers', { is: noBodySent, then: Joi.any().empty(null) }).default();
}


/** A request body: a JSON object taken as sent, without type conversion, so that "12" is not a number. */
export function requestBody(keys: Joi.PartialSchemaMap, label: string): Joi.ObjectSchema {

    return wording(Joi.object(keys).prefs({ convert: false }), { 'object.base': 'The request body must be a JSON object' }).label(label);
}


const currencyCodes = new Set(Intl.supportedValuesOf('currency'));


/** True for an ISO 4217 code in upper case that the platform knows (USD, EUR, JPY, KWD ...). */
export function isCurrencyCode(code: string): boolean {

    return currencyCodes.has(code);
}


/** An ISO 4217 currency code, upper case, as commerce and logistics records carry it: one the platform knows. */
export const currency = wording(Joi.string().valid(...currencyCodes), {
    'any.only': '{{#label}} must be an ISO 4217 currency code in upper case, such as USD, EUR, JPY or KWD'
}).description('ISO 4217 currency code, upper case: one the platform knows as a current currency (USD, EUR, JPY, KWD)');


// The stored form is always toISOString()'s; clients may omit the milliseconds but must say UTC with Z.
export const utcTimestampPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?Z$/;

export const timestampExample = '2030-06-01T10:00:00Z';


/** A further rule on a normalized timestamp: the value to keep, or an error report. */
export type TimestampRule = (normalized: string, helpers: Joi.CustomHelpers) => string | Joi.ErrorReport;


/** An ISO 8601 UTC timestamp, normalized to millisecond precision, then held to an optional further rule. */
export function utcTimestamp(rule: TimestampRule = (normalized) => normalized): Joi.StringSchema {

    return wording(Joi.string()
        .max(30)
        .pattern(utcTimestampPattern)
        .custom((value: string, helpers) => {

            // joi runs every rule: one that failed the pattern is already reported.
            if (!utcTimestampPattern.test(value)) {
                return value;
            }

            // Date rolls 2030-02-30 over into March: only a timestamp that survives the round trip is real.
            const time = Date.parse(value);
            const normalized = Number.isNaN(time) ? '' : new Date(time).toISOString();
            return normalized.slice(0, 19) === value.slice(0, 19) ? rule(normalized, helpers) : helpers.error('timestamp.real');
        }), {
        'string.pattern.base': `{{#label}} must be an ISO 8601 UTC timestamp ending in Z, such as ${timestampExample}`,
        'timestamp.real': '{{#label}} is not a real calendar date and time'
    });
}


// The years a clock can stand in, 1970 to 9999, as a pattern: the document carries the bound with the field.
const clockYears = /^(?:19[7-9]\d|[2-9]\d{3})-/;

/** An instant a data set's clock can stand at: from 1970 on (the pattern's four-digit years end it at 9999). */
export function clockTimestamp(): Joi.StringSchema {

    return wording(utcTimestamp().pattern(clockYears, { name: 'clock range' }), {
        'string.pattern.name': '{{#label}} must be 1970-01-01T00:00:00Z or later: a clock stands between 1970 and the year 9999, which records can hold'
    });
}


/** The response schema of a route that answers 204: no body at all. */
export const noContent = Joi.valid(null);
