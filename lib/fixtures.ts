import Fs from 'node:fs';

import Joi from 'joi';

import type { IdMode, RecordContext } from './clock';
import { utcTimestamp } from './fields';


// Fixtures hold records in the API's own shape, {"<namespace>": {"<collection>": [records]}}, checked with the
// API's rules before an engine stores them.

/**
 * Rows of a collection that may not overlap: two rows with the same `key` whose [from, to) ranges overlap, both with
 * `when` set to its value, break the API's rule (a vehicle's confirmed bookings, say).
 */
export interface FixtureExclusion {
    key: string;
    from: string;
    to: string;
    when: [field: string, value: string];
}

/** Throws the FixtureError naming a record of the namespace (collection, index) and its field. */
export type FixtureRefusal = (collection: string, index: number, field: string, message: string) => never;

/** One collection a fixture may fill: its records' schema, the collections its fields refer to, and the row stored. */
export interface FixtureCollection {
    schema: Joi.ObjectSchema;
    references: Record<string, (record: Record<string, unknown>) => string>;
    toRow(record: Record<string, unknown>): Record<string, unknown>;

    /** The record as the API shows it, from a row as either engine reads it back, with the further tables it reads. */
    fromRow(row: Record<string, unknown>, tables: Record<string, Record<string, unknown>[]>): Record<string, unknown>;

    /** Further tables an export reads for this collection's records (pay's ledger accounts, for balances). */
    reads?: string[];

    /** Rows that may not overlap one another, nor rows already stored. */
    exclusion?: FixtureExclusion;

    /** Checks the collection's records as a whole, with the namespace's collections loaded before it. */
    check?(records: Record<string, unknown>[], earlier: Record<string, Record<string, unknown>[]>, refuse: FixtureRefusal): void;
}

/** The collections of one namespace, in the order they are loaded (a record refers only to earlier collections). */
export type FixtureSpec = Record<string, FixtureCollection>;

/** A namespace's validated records, as rows ready to store, collection by collection. */
export type FixtureRows = { collection: string; exclusion?: FixtureExclusion; rows: FixtureRow[] }[];

/** One record of a fixture as the row to store, where it is in the fixture, and the ids it refers to (field, table, id). */
export interface FixtureRow {
    where: string;
    origin: string;
    row: Record<string, unknown>;
    references: [string, string, string][];
}

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
    const loaded: Record<string, Record<string, unknown>[]> = {};
    for (const [collection, definition] of Object.entries(spec)) {
        const records = collections[collection];
        if (records === undefined) {
            continue;
        }

        const where = `${origin}: ${namespace}.${collection}`;
        if (!Array.isArray(records)) {
            throw new FixtureError(`${where} must be an array of records`);
        }

        const complete = records.map((record: unknown, index) => {

            const { error, value } = definition.schema.validate(record, { abortEarly: true, errors: { wrap: { label: false } } });
            if (error) {
                const detail = error.details[0]!;
                const field = `${namespace}.${collection}[${index}]${detail.path.length ? `.${detail.path.join('.')}` : ''}`;
                throw new FixtureError(`${origin}: ${field}: ${detail.message}`, field);
            }

            return { ...value, id: value.id ?? context.ids.next(), created_at: value.created_at ?? context.clock.now().toISOString() } as Record<string, unknown>;
        });

        definition.check?.(complete, loaded, (name, index, field, message) => {

            const place = `${namespace}.${name}[${index}].${field}`;
            throw new FixtureError(`${origin}: ${place}: ${message}`, place);
        });

        loaded[collection] = complete;
        rows.push({
            collection,
            exclusion: definition.exclusion,
            rows: complete.map((record, index) => {

                const references = Object.entries(definition.references).flatMap(([field, target]) => {

                    const id = record[field];
                    return id === null || id === undefined ? [] : [[field, target(record), String(id)] as [string, string, string]];
                });

                return { where: `${namespace}.${collection}[${index}]`, origin, row: definition.toRow(record), references };
            })
        });
    }

    return rows;
}


/** Refuses a row that overlaps another (one found by the overlap query), naming both. */
export function refuseOverlap({ where, origin, row }: FixtureRow, { key, from, to, when }: FixtureExclusion, other: string | undefined): void {

    if (other !== undefined) {
        throw new FixtureError(`${origin}: ${where}.${from}: [${String(row[from])}, ${String(row[to])}) overlaps ${JSON.stringify(other)}, another ${when[1]} record of ${key} ${JSON.stringify(row[key])}`, `${where}.${from}`);
    }
}


/** True for a plain JSON object: not null, not an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {

    return typeof value === 'object' && value !== null && !Array.isArray(value);
}


/** The format of the files an export writes; a loader reads this one and refuses newer ones. */
export const fixtureFormat = 1;

/** What the `localgate` object that opens an export file says: its format, each namespace's migrations, the instance's clock and ids. */
export interface FixtureHeader {
    format: number;
    migrations: Record<string, string[]>;
    instance?: { clock: string | null; ids: IdMode; id_counter: number };
}

const headerSchema = Joi.object({
    format: Joi.number().integer().min(1).required(),
    migrations: Joi.object().pattern(/^/, Joi.array().items(Joi.string())).default({}),
    instance: Joi.object({
        clock: utcTimestamp().allow(null).required(),
        ids: Joi.string().valid('random', 'sequential').required(),
        id_counter: Joi.number().integer().min(0).required()
    })
});


/**
 * Takes the `localgate` object off a fixture and checks it against the migrations this version ships, per namespace:
 * a newer format, or a migration this version does not know (a newer schema), is refused before any record is read.
 * A fixture without one is read as the current format. An older schema's file is read: the format, not the schema,
 * decides how records are shaped.
 */
export function fixtureBody(fixture: unknown, origin: string, shipped: Record<string, string[]>): { records: unknown; header: FixtureHeader | null } {

    if (!isRecord(fixture) || !Object.hasOwn(fixture, 'localgate')) {
        return { records: fixture, header: null };
    }

    const { localgate, ...records } = fixture;
    const format = isRecord(localgate) ? localgate.format : undefined;
    if (typeof format === 'number' && format > fixtureFormat) {
        throw new FixtureError(`${origin}: localgate.format ${format} is newer than this localgate reads (format ${fixtureFormat}): load the file with the localgate that wrote it, or a newer one`, 'localgate.format');
    }

    const { error, value } = headerSchema.validate(localgate, { abortEarly: true, errors: { wrap: { label: false } } });
    if (error) {
        const detail = error.details[0]!;
        const field = ['localgate', ...detail.path].join('.');
        throw new FixtureError(`${origin}: ${field}: ${detail.message} (an export opens with {"localgate": {"format": ${fixtureFormat}, "migrations": {...}}})`, field);
    }

    const header = value as FixtureHeader;
    for (const [namespace, names] of Object.entries(header.migrations)) {
        const known = shipped[namespace];
        if (!known) {
            throw new FixtureError(`${origin}: localgate.migrations.${namespace}: no namespace of that name keeps data (known: ${Object.keys(shipped).join(', ')})`, `localgate.migrations.${namespace}`);
        }

        const unknown = names.find((name) => !known.includes(name));
        if (unknown !== undefined) {
            throw new FixtureError(`${origin}: localgate.migrations.${namespace}: ${JSON.stringify(unknown)} is not a migration this localgate ships: the file comes from a newer schema (load it with a newer localgate)`, `localgate.migrations.${namespace}`);
        }
    }

    return { records, header };
}
