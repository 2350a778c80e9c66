import Fs from 'node:fs';

import Joi from 'joi';

import type { RecordContext } from './clock';


// Fixtures hold records in the API's own shape, {"<namespace>": {"<collection>": [records]}}, checked with the
// API's rules before an engine stores them.

/** One collection a fixture may fill: its records' schema, the collections its fields refer to, and the row stored. */
export interface FixtureCollection {
    schema: Joi.ObjectSchema;
    references: Record<string, (record: Record<string, unknown>) => string>;
    toRow(record: Record<string, unknown>): Record<string, unknown>;
}

/** The collections of one namespace, in the order they are loaded (a record refers only to earlier collections). */
export type FixtureSpec = Record<string, FixtureCollection>;

/** A namespace's validated records, as rows ready to store, collection by collection. */
export type FixtureRows = { collection: string; rows: { where: string; origin: string; row: Record<string, unknown>; references: [string, string, string][] }[] }[];

export class FixtureError extends Error {

    override name = 'FixtureError';

    /** The place in the fixture, such as commerce.products[3].price, when the problem is in one record. */
    constructor(message: string, public readonly field?: string) {

        super(message);
    }
}


/** Reads a JSON fixture file, naming the file when it cannot be read or is not valid JSON. */
export function readFixtureFile(file: string): unknown {

    try {
        return JSON.parse(Fs.readFileSync(file, 'utf8'));
    }
    catch (err) {
        throw new FixtureError(`Cannot read fixture ${file}: ${(err as Error).message}`);
    }
}


/** The namespaces of a fixture, each checked to be a known namespace holding an object of collections. */
export function fixtureNamespaces(fixture: unknown, origin: string, specs: Record<string, FixtureSpec>): [string, Record<string, unknown>][] {

    if (!isRecord(fixture)) {
        throw new FixtureError(`${origin} must hold an object keyed by namespace`);
    }

    return Object.entries(fixture).map(([namespace, collections]) => {

        if (!Object.hasOwn(specs, namespace)) {
            throw new FixtureError(`${origin}: unknown namespace "${namespace}" (fixtures fill ${Object.keys(specs).join(', ')})`);
        }

        if (!isRecord(collections)) {
            throw new FixtureError(`${origin}: ${namespace} must hold an object keyed by collection`);
        }

        return [namespace, collections];
    });
}


/**
 * Validates a namespace's records with the API's rules and turns them into rows: a record without an id gets the next
 * id of the context, one without created_at the context's clock. The first problem throws, naming the origin, the
 * namespace, the collection, the record's index and the field.
 */
export function fixtureRows(namespace: string, collections: Record<string, unknown>, spec: FixtureSpec, origin: string, context: RecordContext): FixtureRows {

    for (const name of Object.keys(collections)) {
        if (!Object.hasOwn(spec, name)) {
            throw new FixtureError(`${origin}: ${namespace} has no collection "${name}" a fixture can fill (expected ${Object.keys(spec).join(', ')})`);
        }
    }

    const rows: FixtureRows = [];
    for (const [collection, definition] of Object.entries(spec)) {
        const records = collections[collection];
        if (records === undefined) {
            continue;
        }

        const where = `${origin}: ${namespace}.${collection}`;
        if (!Array.isArray(records)) {
            throw new FixtureError(`${where} must be an array of records`);
        }

        rows.push({
            collection,
            rows: records.map((record: unknown, index) => {

                const { error, value } = definition.schema.validate(record, { abortEarly: true, errors: { wrap: { label: false } } });
                if (error) {
                    const detail = error.details[0]!;
                    const field = `${namespace}.${collection}[${index}]${detail.path.length ? `.${detail.path.join('.')}` : ''}`;
                    throw new FixtureError(`${origin}: ${field}: ${detail.message}`, field);
                }

                const complete = { ...value, id: value.id ?? context.ids.next(), created_at: value.created_at ?? context.clock.now().toISOString() };
                const references = Object.entries(definition.references).flatMap(([field, target]) => {

                    const id = complete[field];
                    return id === null || id === undefined ? [] : [[field, target(complete), String(id)] as [string, string, string]];
                });

                return { where: `${namespace}.${collection}[${index}]`, origin, row: definition.toRow(complete), references };
            })
        });
    }

    return rows;
}


/** True for a plain JSON object: not null, not an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {

    return typeof value === 'object' && value !== null && !Array.isArray(value);
}
