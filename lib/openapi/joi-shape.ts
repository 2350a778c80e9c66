import Joi from 'joi';


export interface SchemaShape {
    keys: string[];
    // A key named *_id that the schema does not forbid: the body names another record.
    referencesIds: boolean;
}


// Reads joi's extension API ($_terms, $_getFlag) rather than describe(), which walks and validates a whole schema: a
// tenth of a second at every start for the schemas of all the routes. test/openapi.ts checks it against the joi installed.

/** The keys of an object schema and whether one names another record. */
export function shapeOf(schema: unknown): SchemaShape {

    const children: { key: string; schema: Joi.Schema }[] = Joi.isSchema(schema) ? schema.$_terms.keys ?? [] : [];
    return {
        keys: children.map((child) => child.key),
        referencesIds: children.some((child) => child.key.endsWith('_id') && child.schema.$_getFlag('presence') !== 'forbidden')
    };
}
