import Fs from 'node:fs';

import Joi from 'joi';

import { maxIdCounter, type IdMode, type RecordContext } from './record-context';
import { firstDetail, recordId, utcTimestamp } from './fields';
import { maxJsonDepth, nestsDeeperThan } from './nesting';
import { thrownMessage } from './thrown';


// Fixtures hold records in the API's own shape, {"<namespace>": {"<collection>": [records]}}, checked with the
// API's rules before an engine stores them.

/**
 * Rows of a collection that may not overlap: two rows with the same `key` whose [from, to) ranges overlap, neither with
 * `unless` set to its value, break the API's rule (a vehicle's bookings that are not cancelled, say).
 */
export interface FixtureExclusion {
    key: string;
    from: string;
    to: string;
    unless: [field: string, value: string];
}

/** A stored row a new one overlaps: its id, and its value of the exclusion's `unless` field. */
export interface OverlappedRow {
    id: string;
    state: string;
}

/** Throws the FixtureError naming a record of the namespace (collection, index) and its field. */
export type FixtureRefusal = (collection: string, index: number, field: string, message: string) => never;

/**
 * One collection a fixture may fill: its records' schema, the collections its fields refer to, and the row stored. `R`
 * is a record as its schema validates it, with the id and created_at a load gives it; the functions are declared as
 * methods, whose parameters TypeScript compares both ways, so that a collection of typed records (and of typed earlier collections and tables) is one of a FixtureSpec.
 */
export interface FixtureCollection<R extends object = Record<string, unknown>, Earlier extends object = FixtureTables, Tables extends object = FixtureTables> {
    schema: Joi.ObjectSchema<R>;
    references: Record<string, FixtureReference<R>>;
    toRow(record: R): Record<string, unknown>;

    /** The record as the API shows it, from a row as either engine reads it back, with the further tables it reads. */
    fromRow(row: Record<string, unknown>, tables: Tables): Record<string, unknown>;

    /** Further tables an export reads for this collection's records (pay's ledger accounts, for balances). */
    reads?: string[];

    /** Rows that may not overlap one another, nor rows already stored. */
    exclusion?: FixtureExclusion;

    /** True when a record whose id is stored already must hold what is stored, not be left as it is (the ledger counts it). */
    matchStored?: boolean;

    /** Fields that no two records hold alike (together, for a list of several); a record with one of them null is exempt. */
    unique?: [string, ...string[]][];

    /** Checks the collection's records as a whole, with the namespace's collections loaded before it. */
    check?(records: R[], earlier: Earlier, refuse: FixtureRefusal): void;
}

/** Records or rows by collection or table: what a check reads of the collections loaded before, and an export of further tables. */
export type FixtureTables = Record<string, Record<string, unknown>[]>;

/** The collection a field of a record refers to, by the record (a scam report's target_type says which). */
export type FixtureReference<R> = { table(record: R): string }['table'];

/** A record every collection's schema gives: the id and created_at a load fills in when the fixture leaves them out. */
export type FixtureRecord = { id: string; created_at: string };

/** The schema of a collection's records: the id and created_at every record may give, and the collection's own keys. */
export function recordSchema<R extends object = Record<string, unknown>>(keys: Joi.PartialSchemaMap<R>): Joi.ObjectSchema<R> {

    return Joi.object<R>({ id: recordId.min(1), created_at: utcTimestamp(), ...keys });
}


/** A collection as it is declared, its record type taken from its schema's. */
export function fixtureCollection<R extends object, Earlier extends object = FixtureTables, Tables extends object = FixtureTables>(collection: FixtureCollection<R, Earlier, Tables>): FixtureCollection<R, Earlier, Tables> {

    return collection;
}


/** The collections of one namespace, in the order they are loaded (a record refers only to earlier collections). */
export type FixtureSpec = Record<string, FixtureCollection>;

/** A namespace's validated records, as rows ready to store, collection by collection. */
export type FixtureRows = { collection: string; exclusion?: FixtureExclusion; matchStored?: boolean; rows: FixtureRow[] }[];

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


/** Reads a JSON fixture file, naming the file when it cannot be read, is not valid JSON or nests too deep. */
export function readFixtureFile(file: string): unknown {

    let fixture: unknown;
    try {
        fixture = JSON.parse(Fs.readFileSync(file, 'utf8'));
    }
    catch (err) {
        throw new FixtureError(`Cannot read fixture ${file}: ${thrownMessage(err)}`);
    }

    // Before any check walks it: the same bound a request body meets.
    if (nestsDeeperThan(fixture, maxJsonDepth)) {
        throw new FixtureError(`Cannot read fixture ${file}: it nests arrays and objects deeper than ${maxJsonDepth} levels, the most the server accepts`);
    }

    return fixture;
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
        // A collection left out is checked as empty: a wallet's balances still need the transactions that make them.
        const records = collections[collection] ?? [];
        const where = `${origin}: ${namespace}.${collection}`;
        if (!Array.isArray(records)) {
            throw new FixtureError(`${where} must be an array of records`);
        }

        const complete: Record<string, unknown>[] = records.map((record: unknown, index) => {

            const { error, value } = definition.schema.validate(record, { abortEarly: true, errors: { wrap: { label: false } } });
            if (error) {
                const detail = firstDetail(error);
                const field = `${namespace}.${collection}[${index}]${detail.path.length ? `.${detail.path.join('.')}` : ''}`;
                throw new FixtureError(`${origin}: ${field}: ${detail.message}`, field);
            }

            return { ...value, id: value.id ?? context.ids.next(), created_at: value.created_at ?? context.clock.now().toISOString() };
        });

        const refuse: FixtureRefusal = (name, index, field, message) => {

            const place = `${namespace}.${name}[${index}].${field}`;
            throw new FixtureError(`${origin}: ${place}: ${message}`, place);
        };

        const keys: [string, ...string[]][] = [['id'], ...definition.unique ?? []];
        for (const fields of keys) {
            refuseRepeats(collection, complete, fields, refuse);
        }

        definition.check?.(complete, loaded, refuse);

        loaded[collection] = complete;
        rows.push({
            collection,
            exclusion: definition.exclusion,
            matchStored: definition.matchStored,
            rows: complete.map((record, index) => {

                const references = Object.entries(definition.references).flatMap(([field, target]): [string, string, string][] => {

                    const id = record[field];
                    return id === null || id === undefined ? [] : [[field, target(record), String(id)]];
                });

                return { where: `${namespace}.${collection}[${index}]`, origin, row: definition.toRow(record), references };
            })
        });
    }

    return rows;
}


// Refuses the second record holding the same values of the fields as an earlier one of its collection.
function refuseRepeats(collection: string, records: Record<string, unknown>[], fields: [string, ...string[]], refuse: FixtureRefusal): void {

    const seen = new Map<string, number>();
    records.forEach((record, index) => {

        const values = fields.map((field) => record[field]);
        if (values.includes(null)) {
            return;
        }

        const key = JSON.stringify(values);
        const first = seen.get(key);
        if (first !== undefined) {
            const what = fields.length === 1 ? `${JSON.stringify(values[0])} is already the ${fields[0]}` : `${fields.join(', ')} ${JSON.stringify(values)} are already those`;
            refuse(collection, index, fields[0], `${what} of ${collection}[${first}]: no two records of ${collection} share ${fields.length === 1 ? 'it' : 'them'}`);
        }

        seen.set(key, index);
    });
}


/** A record read back from a row: these fields in this order, each as its reader (if any) gives it from the row. */
export function recordOf(row: Record<string, unknown>, fields: string[], readers: Record<string, (row: Record<string, unknown>) => unknown> = {}): Record<string, unknown> {

    return Object.fromEntries(fields.map((field) => [field, readers[field] ? readers[field](row) : row[field]]));
}


/**
 * The refusal of a record the database turned down, named by where it is in the fixture: a unique key another stored
 * record holds (the fields, when the engine names them), or another rule of the stored data. The engine's own message
 * is not repeated: it can hold SQL.
 */
export function storedRefusal({ where, origin }: FixtureRow, unique: string[] | null, collection: string): FixtureError {

    if (unique) {
        const place = `${where}.${unique[0]}`;
        return new FixtureError(`${origin}: ${place}: another stored record of ${collection} already has this ${unique.join(', ')}`, place);
    }

    return new FixtureError(`${origin}: ${where}: the stored data refuses this record (it breaks a rule of ${collection}, or of what it moves)`, where);
}


/** True when a stored row holds what a fixture row would store, as text (PostgreSQL reads a bigint as text). */
export function sameRow(row: Record<string, unknown>, stored: Record<string, unknown>): boolean {

    return Object.keys(row).every((field) => String(row[field]) === String(stored[field]));
}


/** The refusal of a record whose id is stored already with other contents: loading it would not give what the fixture says. */
export function refuseChanged({ where, origin, row }: FixtureRow, collection: string): never {

    throw new FixtureError(`${origin}: ${where}.id: ${JSON.stringify(row.id)} is already the id of a stored record of ${collection} with other contents`, `${where}.id`);
}


/** True when a row is held to its collection's exclusion: it has one, and the row is not exempt from it. */
export function excludes(exclusion: FixtureExclusion | undefined, row: Record<string, unknown>): exclusion is FixtureExclusion {

    return exclusion !== undefined && row[exclusion.unless[0]] !== exclusion.unless[1];
}


/** Refuses a row that overlaps another (one found by the overlap query), naming both and the other's state. */
export function refuseOverlap({ where, origin, row }: FixtureRow, { key, from, to }: FixtureExclusion, other: OverlappedRow | undefined): void {

    if (other !== undefined) {
        throw new FixtureError(`${origin}: ${where}.${from}: [${String(row[from])}, ${String(row[to])}) overlaps ${JSON.stringify(other.id)}, another ${other.state} record of ${key} ${JSON.stringify(row[key])}`, `${where}.${from}`);
    }
}


/** True for a plain JSON object: not null, not an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {

    return typeof value === 'object' && value !== null && !Array.isArray(value);
}


/** The format of the files an export writes; a loader reads this one and refuses newer ones. */
export const fixtureFormat = 1;

/**
 * What the `localgate` object that opens an export file says: its format, each namespace's migrations, and of the
 * instance it came from its clock, ids and whether it had pay.
 */
export interface FixtureHeader {
    format: number;
    migrations: Record<string, string[]>;
    instance?: { clock: string | null; ids: IdMode; id_counter: number; pay?: boolean };
}

const headerSchema = Joi.object<FixtureHeader>({
    format: Joi.number().integer().min(1).required(),
    migrations: Joi.object().pattern(/^/, Joi.array().items(Joi.string())).default({}),
    instance: Joi.object({
        clock: utcTimestamp().allow(null).required(),
        ids: Joi.string().valid('random', 'sequential').required(),
        id_counter: Joi.number().integer().min(0).max(maxIdCounter).required(),
        pay: Joi.boolean()
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
    if (Number.isInteger(format) && Number(format) > fixtureFormat) {
        throw new FixtureError(`${origin}: localgate.format ${format} is newer than this localgate reads (format ${fixtureFormat}): load the file with the localgate that wrote it, or a newer one`, 'localgate.format');
    }

    const { error, value } = headerSchema.validate(localgate, { abortEarly: true, errors: { wrap: { label: false } } });
    if (error) {
        const detail = firstDetail(error);
        const field = ['localgate', ...detail.path].join('.');
        throw new FixtureError(`${origin}: ${field}: ${detail.message} (an export opens with {"localgate": {"format": ${fixtureFormat}, "migrations": {...}}})`, field);
    }

    const header = value;
    for (const [namespace, names] of Object.entries(header.migrations)) {
        const known = Object.hasOwn(shipped, namespace) ? shipped[namespace] : undefined;
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
