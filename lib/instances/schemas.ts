import Joi from 'joi';

import type { Namespace } from '../namespace';
import { maxIdCounter } from '../record-context';
import { transitionTypesOf } from '../transitions';
import { durationPattern } from '../durations';
import { clockTimestamp, optionalBody, recordId, requestBody, timestamp, wording } from '../fields';
import { listSchema, pageQuery } from '../lists';


export const instanceParams = Joi.object({
    instance_id: recordId.required().description('Instance id')
});

export const snapshotParams = instanceParams.keys({
    snapshot_id: recordId.required().description('A snapshot of this instance')
});

export const instanceListQuery = Joi.object(pageQuery);

// A fork copies everything of its source, so nothing else may be asked of it.
function notWithFrom<T extends Joi.Schema>(schema: T): T {

    return wording(schema.when('from', { is: Joi.exist(), then: Joi.forbidden() }), {
        'any.unknown': '{{#label}} cannot go with from: a fork is a copy of its source, data, clock and ids'
    }) as T;
}

/**
 * The body of POST /_instances for these namespaces: a fixture's keys are those that take fixtures and localgate (the
 * header of an export), so that the document lists them; what each holds is checked as the fixture loads.
 */
export function newInstanceSchema(namespaces: readonly Pick<Namespace, 'name' | 'fixture'>[]): Joi.ObjectSchema {

    const names = [...namespaces.filter((namespace) => namespace.fixture).map((namespace) => namespace.name), 'localgate'];
    const keys = Object.fromEntries(names.map((name) => [name, Joi.any()]));
    return optionalBody(requestBody({
        from: recordId.description('Fork: the id of a live instance to copy as it is now (data, clock, id counter; not its faults, journal or snapshots)'),
        seed: notWithFrom(Joi.string().valid('demo', 'none').description('demo: the demo data set; none: empty; unset, demo (none under an exported fixture, which holds the whole world)')),
        fixture: notWithFrom(wording(Joi.object(keys), {
            'object.base': '{{#label}} must be an object keyed by namespace',
            'object.unknown': `{{#label}} names no namespace a fixture fills (${names.join(', ')})`
        }).description(`Records to load, in the API's shape: {"<namespace>": {"<collection>": [records]}}, keyed by ${names.join(', ')} (localgate: the header of an exported file); every record follows the API's rules, and one that breaks them is a 400 invalid_fixture naming it`)),
        clock: notWithFrom(clockTimestamp().description('An ISO 8601 UTC instant at which the instance\'s clock stands still until moved; unset, it follows the wall clock (or stands where an exported fixture carries it)')),
        ids: notWithFrom(Joi.string().valid('random', 'sequential').description('sequential: every new id comes from a counter of the instance; unset, random (or as an exported fixture carries it)')),
        pay: notWithFrom(Joi.boolean().description('true gives the instance a provisioned pay namespace; unset, false (or as an exported fixture carries it, or true when the fixture holds pay records)'))
    }, 'NewInstance'));
}

export const clockSchema = wording(requestBody({
    // Before 1970 is refused as it is sent (the document's pattern says so); an advance past 9999 is a 422
    // clock_out_of_range as the clock moves.
    now: clockTimestamp().description('Freeze the clock at this instant, from 1970 to 9999'),
    advance: wording(Joi.string().pattern(durationPattern), { 'string.pattern.base': '{{#label}} must be a duration such as 500ms, 90s, 30m, 2h or 7d' })
        .description('Move the clock forward by this much (500ms, 90s, 30m, 2h, 7d), freezing it there')
}, 'InstanceClock').xor('now', 'advance'), {
    'object.missing': 'The request body must hold now or advance',
    'object.xor': 'The request body must hold now or advance, not both'
});

export const restoreSchema = requestBody({
    snapshot_id: recordId.required().description('A snapshot of this instance')
}, 'InstanceRestore');

export const instanceSchema = Joi.object({
    id: Joi.string().required(),
    base_path: Joi.string().required().description('Prefix of every API path of the instance: /i/<id>'),
    seed: Joi.string().valid('demo', 'none').required(),
    clock: timestamp.allow(null).required().description('The frozen instant, null while the clock follows the wall clock'),
    ids: Joi.string().valid('random', 'sequential').required(),
    pay: Joi.boolean().required(),
    created_at: timestamp.required(),
    expires_at: timestamp.required().description('When the instance expires unless used before')
}).label('Instance');

export const instanceListSchema = listSchema(instanceSchema, 'InstanceList');

const attemptedSchema = Joi.number().integer().min(0).description('The webhook attempts the move made by its answer, retries included');

const remainingSchema = Joi.number().integer().min(0).description('The deliveries with an attempt due by the new instant still to make when the move answered at its deadline (CLOCK_MOVE_DEADLINE_MS), made after the answer in due order; 0 when the move made them all');


export const defaultClockSchema = Joi.object({
    now: timestamp.required().description('The current instant of the default data set\'s clock'),
    frozen: timestamp.allow(null).required().description('The frozen instant, null while the clock follows the wall clock')
}).label('Clock');

/** What a move of an instance's clock and of the default one answer, for a server whose namespaces make these transitions. */
export interface ClockMoveSchemas {
    instance: Joi.ObjectSchema;
    default: Joi.ObjectSchema;
}

// One pair per list of namespaces.
const moveSchemas = new WeakMap<readonly { readonly transitions?: readonly string[] }[], ClockMoveSchemas>();

/** The answers of a clock's move, their counts keyed by the namespaces' transition types, built once per list. */
export function clockMoveSchemas(namespaces: readonly { readonly transitions?: readonly string[] }[]): ClockMoveSchemas {

    let schemas = moveSchemas.get(namespaces);
    if (!schemas) {
        const types = transitionTypesOf(namespaces);
        // How many transitions of each type a move of a clock applied; a type with none is absent.
        const applied = Joi.object()
            .pattern(Joi.string().valid(...types), Joi.number().integer().min(1))
            .description(`Transitions applied by the move, by type (${types.join(', ')}); a type with none is absent`)
            .label('AppliedTransitions');
        // What a move of a clock answers beside the clock itself.
        const moveKeys = { applied: applied.required(), attempted: attemptedSchema.required(), remaining: remainingSchema.required() };
        schemas = { instance: instanceSchema.keys(moveKeys).label('InstanceClockMove'), default: defaultClockSchema.keys(moveKeys).label('ClockMove') };
        moveSchemas.set(namespaces, schemas);
    }

    return schemas;
}

export const exportSchema = Joi.object({
    localgate: Joi.object({
        format: Joi.number().integer().required().description('The file format: a loader refuses a newer one'),
        migrations: Joi.object().pattern(/^/, Joi.array().items(Joi.string()).label('MigrationNames')).required()
            .description('Per namespace, the migrations its schema had applied').label('ExportMigrations'),
        instance: Joi.object({
            clock: timestamp.allow(null).required(),
            ids: Joi.string().valid('random', 'sequential').required(),
            id_counter: Joi.number().integer().min(0).max(maxIdCounter).required(),
            pay: Joi.boolean().required().description('Whether the instance had pay: an instance made from the file has it too, unless asked otherwise')
        }).description('The instance\'s clock, id counter and pay, which an instance made from the file continues').label('ExportInstance')
    }).required().label('ExportHeader')
}).unknown(true).description('A fixture: the localgate object, then {"<namespace>": {"<collection>": [records]}}').label('InstanceExport');

export const snapshotSchema = Joi.object({
    snapshot_id: Joi.string().required()
}).label('InstanceSnapshot');


