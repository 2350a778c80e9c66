interface SchemaObject {
    $ref?: string;
    additionalProperties?: boolean;
    [keyword: string]: unknown;
}

export interface OpenApiDocument {
    paths: Record<string, Record<string, { requestBody?: { required?: boolean; content: Record<string, { schema: SchemaObject }> } }>>;
    components: { schemas: Record<string, SchemaObject> };
}

const componentRef = '#/components/schemas/';

// hapi-swagger names a component after the key it first met it under (status, type, string, Model1) unless it has a
// label; a label would rename the field in the joi errors of a request body, so such components are inlined instead.
const unnamedComponent = /^(?:[a-z].*|Model\d*)$/;


/** A copy of a schema where every reference to an unnamed component is replaced by that component. */
function inlineUnnamed(node: unknown, schemas: Record<string, SchemaObject>): unknown {

    if (Array.isArray(node)) {
        return node.map((item) => inlineUnnamed(item, schemas));
    }

    if (!(node instanceof Object)) {
        return node;
    }

    const { $ref } = node as SchemaObject;
    const name = $ref?.slice(componentRef.length);
    if (name && unnamedComponent.test(name)) {
        return inlineUnnamed(schemas[name], schemas);
    }

    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inlineUnnamed(value, schemas)]));
}


/**
 * Completes what hapi-swagger leaves out: the body of an operation that takes one is required (hapi refuses a missing
 * one) and has no properties beyond its own (joi refuses them), and no component is named after a field.
 */
export function completeDocument(document: OpenApiDocument): void {

    const { schemas } = document.components;
    for (const item of Object.values(document.paths)) {
        for (const operation of Object.values(item)) {
            if (operation.requestBody) {
                operation.requestBody.required = true;
                const { $ref } = operation.requestBody.content['application/json']!.schema;
                schemas[$ref!.slice(componentRef.length)]!.additionalProperties = false;
            }
        }
    }

    document.paths = inlineUnnamed(document.paths, schemas) as OpenApiDocument['paths'];
    const named = Object.entries(schemas).filter(([name]) => !unnamedComponent.test(name));
    document.components.schemas = inlineUnnamed(Object.fromEntries(named), schemas) as Record<string, SchemaObject>;
}
