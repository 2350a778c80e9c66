import Joi from 'joi';

import { text, wording } from './fields';


// A client's own key-value pairs on a record, with Stripe's bounds. Lengths are in UTF-16 code units, as every length
// of the API; keys and values refuse what a hosted Postgres would refuse as text, as free text does.

/** Most keys one record's metadata holds. */
export const maxMetadataKeys = 20;

/** Longest metadata key. */
export const maxMetadataKeyLength = 40;

/** Longest metadata value. */
export const maxMetadataValueLength = 500;

/** A record's metadata: string keys to string values, `{}` when a client gave none. */
export type Metadata = Record<string, string>;

// 1 to 40 code units, no NUL, every surrogate paired.
const metadataKey = new RegExp(`^(?=[\\s\\S]{1,${maxMetadataKeyLength}}$)(?:[^\\0\\uD800-\\uDFFF]|[\\uD800-\\uDBFF][\\uDC00-\\uDFFF])+$`);

const valueMessage = `{{#label}} must be a string of at most ${maxMetadataValueLength} characters`;

/**
 * A record's metadata, as a client sends it and as the record answers with it: an object of at most 20 string values
 * under keys of 1 to 40 characters.
 */
export const metadataSchema = wording(Joi.object()
    .pattern(metadataKey, wording(text(maxMetadataValueLength).allow(''), { 'string.base': valueMessage, 'string.max': valueMessage }))
    .max(maxMetadataKeys), {
    'object.base': '{{#label}} must be an object of string values (leave it out for none)',
    'object.max': `{{#label}} must have at most ${maxMetadataKeys} keys`,
    'object.unknown': `{{#label}} is not a metadata key: a key is 1 to ${maxMetadataKeyLength} characters, without NUL characters or unpaired surrogates`
})
    .description(`Your own key-value pairs, kept on the record and carried by its events: at most ${maxMetadataKeys} keys of 1 to ${maxMetadataKeyLength} characters, each value a string of at most ${maxMetadataValueLength}; {} when none were given`);


/** Metadata as a fingerprint sees it: its pairs by key, so that the order a client sent them in does not count. */
export function metadataPairs(metadata: Metadata): [string, string][] {

    // By key as sort() orders text, UTF-16 code unit by code unit; no two keys are equal.
    return Object.entries(metadata).sort(([a], [b]) => Number(a > b) - Number(a < b));
}


/** Metadata as a row stores it: its JSON text. */
export function storedMetadata(metadata: Metadata): string {

    return JSON.stringify(metadata);
}


/** Metadata as a record reads it back from a row's JSON text. */
export function readMetadata(stored: string): Metadata {

    return JSON.parse(stored) as Metadata;
}
