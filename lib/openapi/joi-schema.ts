import { isDeepStrictEqual } from 'node:util';

import Joi from 'joi';

import { utcTimestampPattern } from '../fields';


/** A schema object of the document (OpenAPI 3.0's dialect of JSON Schema). */
export type JsonSchema = Record<string, unknown>;

// What joi's describe() gives for a schema: the parts read here, as joi documents them.
interface Description {
    type?: string;
    flags?: { label?: string; description?: string; presence?: string; default?: unknown; only?: boolean; unknown?: boolean; unsafe?: boolean };
    allow?: unknown[];
    rules?: { name: string; args?: { limit?: number; regex?: string } }[];
    keys?: Record<string, Description>;
    patterns?: { rule: Description }[];
    dependencies?: Dependency[];
    whens?: When[];
    items?: Description[];
    ordered?: Description[];
    matches?: { schema: Description }[];
}

// A dependency between keys as joi describes it: `with` names its key, the others (xor, or, oxor) only their peers.
type Dependency = { rel: 'with'; key: string; peers: string[] } | { rel: 'xor' | 'or' | 'oxor'; key: null; peers: string[] };

// A condition on a reference (a schema condition has no ref): the reference names at least one key.
interface When {
    ref?: { type?: string; ancestor?: number; path: [string, ...string[]] };
    is: Description;
    then?: Description;
    otherwise?: Description;
}


// What describe() gives for a schema, read as the parts above.
function descriptionOf(schema: Joi.Schema): Description {

    return schema.describe();
}


// A joi pattern as describe() prints it: /source/flags.
const regexText = /^\/(.*)\/([a-z]*)$/s;


function required(...keys: string[]): JsonSchema {

    return { required: keys };
}


// Exactly one of the keys: each branch names its key and refuses the others, so that a reader that takes oneOf for
// anyOf (as some request generators do) still reads two of them as refused.
function exactlyOne(keys: string[]): JsonSchema {

    return {
        oneOf: keys.map((key) => {

            const others = keys.filter((other) => other !== key).map((other) => required(other));
            return { ...required(key), not: others.length === 1 ? others[0] : { anyOf: others } };
        })
    };
}


// The rule between keys of an object that each of joi's dependencies among peers says, in JSON Schema.
const peerRules: Record<Exclude<Dependency['rel'], 'with'>, (peers: string[]) => JsonSchema> = {
    xor: exactlyOne,
    or: (peers) => ({ anyOf: peers.map((peer) => required(peer)) }),
    oxor: (peers) => ({ not: { anyOf: peers.flatMap((peer, index) => peers.slice(index + 1).map((other) => required(peer, other))) } })
};


// The rule a dependency says: a key that comes with its peers, or one of the rules among peers.
function dependencyRule(dependency: Dependency): JsonSchema {

    return dependency.rel === 'with' ? { anyOf: [{ not: required(dependency.key) }, required(dependency.key, ...dependency.peers)] } : peerRules[dependency.rel](dependency.peers);
}


// A key that must be absent, or present, as a sibling is present or not: joi's when(sibling, { is: exist(), ... }).
function whenRules(key: string, whens: When[]): JsonSchema[] {

    const rules: JsonSchema[] = [];
    for (const { ref, is, then, otherwise } of whens) {
        // Only a sibling's presence: describe() leaves out a sibling reference's type and ancestor (value, 1).
        if (ref === undefined || ref.type !== undefined || ref.ancestor !== undefined || ref.path.length !== 1) {
            continue;
        }

        // Joi.exist(): required, with no value of its own.
        if (is.flags?.presence !== 'required' || is.allow) {
            continue;
        }

        const sibling = ref.path[0];
        const forbidden = then?.flags?.presence === 'forbidden';
        const requiredOtherwise = otherwise?.flags?.presence === 'required';
        if (forbidden && requiredOtherwise) {
            rules.push(exactlyOne([key, sibling]));
        }
        else if (forbidden) {
            rules.push({ not: required(key, sibling) });
        }
        else if (requiredOtherwise) {
            rules.push({ anyOf: [required(key), required(sibling)] });
        }
    }

    return rules;
}


/** Turns joi schemas into the document's schemas: labelled ones become components named by their label, once. */
export class SchemaConverter {

    readonly components: Record<string, JsonSchema> = {};

    private readonly cache = new WeakMap<Joi.Schema, JsonSchema>();

    /** The document's schema for a joi schema: a $ref where it carries a label. */
    schemaOf(schema: Joi.Schema): JsonSchema {

        let converted = this.cache.get(schema);
        if (!converted) {
            converted = this.convert(descriptionOf(schema));
            this.cache.set(schema, converted);
        }

        return converted;
    }

    /** The parameters an object schema of params, query or headers describes, each with its schema. */
    parametersOf(schema: Joi.Schema, location: 'path' | 'query' | 'header'): JsonSchema[] {

        const { keys = {} } = descriptionOf(schema);
        return Object.entries(keys).filter(([, key]) => key.flags?.presence !== 'forbidden').map(([name, key]) => {

            const converted = this.convert(key);
            return {
                name,
                in: location,
                ...(key.flags?.description ? { description: key.flags.description } : {}),
                required: location === 'path' || key.flags?.presence === 'required',
                schema: converted
            };
        });
    }

    private convert(description: Description): JsonSchema {

        const converted = this.inline(description);
        const label = description.flags?.label;
        if (!label) {
            return converted;
        }

        // The same label for another shape stays inline: a component says one thing.
        const known = this.components[label];
        if (known && !isDeepStrictEqual({ ...known, description: undefined }, { ...converted, description: undefined })) {
            return converted;
        }

        this.components[label] ??= converted;
        return { $ref: `#/components/schemas/${label}` };
    }

    private inline(description: Description): JsonSchema {

        const { flags = {} } = description;
        const allowed = description.allow ?? [];
        const schema: JsonSchema = { ...this.typed(description, allowed) };
        if (flags.only) {
            schema.enum = allowed.filter((value) => value !== null);
            delete schema.minLength;
        }

        if (allowed.includes(null) && schema.type) {
            schema.nullable = true;
        }

        if (flags.description) {
            schema.description = flags.description;
        }

        if (flags.default !== undefined && !(flags.default instanceof Object && 'special' in flags.default)) {
            schema.default = flags.default;
        }

        return schema;
    }

    private typed(description: Description, allowed: unknown[]): JsonSchema {

        switch (description.type) {
            case 'string':
                return stringSchema(description, allowed);
            case 'number':
                return numberSchema(description);
            case 'boolean':
                return { type: 'boolean' };
            case 'date':
                return { type: 'string', format: 'date-time' };
            case 'object':
                return this.objectSchema(description);
            case 'array':
                return this.arraySchema(description);
            case 'alternatives':
                return this.alternativesSchema(description);
            default:
                // any: every JSON value.
                return {};
        }
    }

    private objectSchema(description: Description): JsonSchema {

        const schema: JsonSchema = { type: 'object' };
        const rules: JsonSchema[] = [];
        if (description.keys) {
            const properties: Record<string, JsonSchema> = {};
            const requiredKeys: string[] = [];
            for (const [key, child] of Object.entries(description.keys)) {
                if (child.flags?.presence === 'forbidden') {
                    continue;
                }

                properties[key] = this.convert(child);
                if (child.flags?.presence === 'required') {
                    requiredKeys.push(key);
                }

                rules.push(...whenRules(key, child.whens ?? []));
            }

            schema.properties = properties;
            if (requiredKeys.length) {
                schema.required = requiredKeys;
            }
        }

        const [pattern] = description.patterns ?? [];
        if (pattern) {
            // OpenAPI 3.0 has no patternProperties: the values' schema, whatever the key.
            schema.additionalProperties = this.convert(pattern.rule);
        }
        else if (description.keys && !description.flags?.unknown) {
            schema.additionalProperties = false;
        }

        const most = description.rules?.find(({ name }) => name === 'max');
        if (most) {
            schema.maxProperties = most.args?.limit;
        }

        rules.push(...(description.dependencies ?? []).map(dependencyRule));
        if (rules.length === 1) {
            Object.assign(schema, rules[0]);
        }
        else if (rules.length) {
            schema.allOf = rules;
        }

        return schema;
    }

    private arraySchema(description: Description): JsonSchema {

        const schema: JsonSchema = { type: 'array' };
        // The same schema at several places of a tuple is said once.
        const converted = [...description.ordered ?? [], ...description.items ?? []].map((item) => this.convert(item));
        const items = [...new Map(converted.map((item) => [JSON.stringify(item), item])).values()];
        schema.items = items.length === 1 ? items[0] : items.length ? { anyOf: items } : {};
        if (description.ordered && !description.items) {
            schema.minItems = description.ordered.length;
            schema.maxItems = description.ordered.length;
        }

        for (const { name, args } of description.rules ?? []) {
            if (name === 'min') {
                schema.minItems = args?.limit;
            }

            if (name === 'max') {
                schema.maxItems = args?.limit;
            }
        }

        return schema;
    }

    private alternativesSchema(description: Description): JsonSchema {

        // joi takes the first alternative that matches: any of them.
        const { matches = [] } = description;
        return { anyOf: matches.map((match) => this.convert(match.schema)) };
    }
}


function stringSchema(description: Description, allowed: unknown[]): JsonSchema {

    const schema: JsonSchema = { type: 'string' };
    const patterns: string[] = [];
    // joi refuses an empty string unless it is allowed.
    let minLength = allowed.includes('') ? 0 : 1;
    for (const { name, args } of description.rules ?? []) {
        if (name === 'min' || name === 'length') {
            minLength = Math.max(minLength, Number(args?.limit));
        }

        if (name === 'max' || name === 'length') {
            schema.maxLength = args?.limit;
        }

        if (name === 'guid') {
            schema.format = 'uuid';
        }

        const match = name === 'pattern' ? regexText.exec(String(args?.regex)) : null;
        const source = match?.[1];
        const flags = match?.[2];
        // A flag (i, u ...) changes what a pattern means in a way the document's patterns cannot say: the description does.
        if (source !== undefined && !flags) {
            patterns.push(source);
            // A timestamp of fields.ts: a date-time, in the one form the pattern says.
            if (source === utcTimestampPattern.source) {
                schema.format = 'date-time';
            }
        }
    }

    if (minLength) {
        schema.minLength = minLength;
    }

    if (patterns.length) {
        schema.pattern = patterns[0];
    }

    if (patterns.length > 1) {
        schema.allOf = patterns.slice(1).map((pattern) => ({ pattern }));
    }

    return schema;
}


function numberSchema(description: Description): JsonSchema {

    const schema: JsonSchema = { type: 'number' };
    for (const { name, args } of description.rules ?? []) {
        const limit = args?.limit;
        switch (name) {
            case 'integer':
                schema.type = 'integer';
                break;
            case 'min':
                schema.minimum = limit;
                break;
            case 'max':
                schema.maximum = limit;
                break;
        }
    }

    // joi refuses numbers beyond the integers a double holds exactly, unless told otherwise.
    if (!description.flags?.unsafe) {
        schema.minimum = Math.max(Number(schema.minimum ?? -Infinity), Number.MIN_SAFE_INTEGER);
        schema.maximum = Math.min(Number(schema.maximum ?? Infinity), Number.MAX_SAFE_INTEGER);
    }

    return schema;
}
