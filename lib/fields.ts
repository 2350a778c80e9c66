import Joi from 'joi';


// Longest accepted id in a path, a query or a body, in UTF-16 code units.
export const maxIdLength = 100;

/** The id of a record as a client sends it: a string of up to 100 characters. */
export const recordId = Joi.string().max(maxIdLength);

/** An ISO 8601 timestamp, as every record's created_at (a date in joi's terms, so the document says date-time). */
export const timestamp = Joi.date().iso();

// Text is stored exactly as sent; only what a hosted Postgres would refuse as text is refused here too.
const unstorable = /[\0\p{Cs}]/u;


/** Free text of at most max UTF-16 code units, refusing NUL characters and unpaired surrogates. */
export function text(max: number): Joi.StringSchema {

    return Joi.string().max(max).custom((value: string, helpers) => {

        return unstorable.test(value) ? helpers.error('string.unstorable') : value;
    }).messages({
        'string.unstorable': '{{#label}} must not contain NUL characters or unpaired surrogates'
    });
}


/** Text that must show something: white space alone is refused (and kept as sent when there is more). */
export function visibleText(max: number): Joi.StringSchema {

    return text(max).pattern(/\S/).messages({
        'string.pattern.base': '{{#label}} must contain at least one character that is not white space'
    });
}


/** A body field the service sets itself: sending it is a 400 that names the field and says where its value comes from. */
export function setByService(source: string): Joi.AnySchema {

    return Joi.any().forbidden().messages({ 'any.unknown': `{{#label}} is set by the service (${source}) and cannot be sent` });
}


/** A request body: a JSON object taken as sent, without type conversion, so that "12" is not a number. */
export function requestBody(keys: Joi.PartialSchemaMap, label: string): Joi.ObjectSchema {

    return Joi.object(keys).prefs({ convert: false }).messages({ 'object.base': 'The request body must be a JSON object' }).label(label);
}
