import Joi from 'joi';

import { typePatternSchema } from '../events';
import { recordId, requestBody, wording } from '../fields';


// The longest latency a rule may add: longer than any client timeout a test would set.
export const maxLatencyMs = 60_000;

export const maxRules = 100;

// Milliseconds a rule waits before answering.
const latency = Joi.number().integer().min(0).max(maxLatencyMs);

/** The body of PUT …/faults and what it answers, for a server that writes these event types. */
export interface FaultSchemas {
    faultRulesPayload: Joi.ObjectSchema;
    faultRulesSchema: Joi.ObjectSchema;
}

// One pair per list of types (eventTypesOf answers one list per list of namespaces).
const built = new WeakMap<readonly string[], FaultSchemas>();

/** The fault rules' schemas, an outbound rule's event one of these types or a prefix of one, built once per list. */
export function faultSchemas(types: readonly string[]): FaultSchemas {

    let schemas = built.get(types);
    if (!schemas) {
        schemas = buildSchemas(types);
        built.set(types, schemas);
    }

    return schemas;
}


function buildSchemas(types: readonly string[]): FaultSchemas {

    const ruleKeys = {
        direction: Joi.string().valid('inbound', 'outbound').description('inbound (when left out): the rule acts on the API\'s requests; outbound: on webhook deliveries'),
        method: Joi.string().pattern(/^[A-Za-z]+$/).max(16).description('HTTP method; any when left out'),
        path: wording(Joi.string().pattern(/^\/v1\/[^*?#\s]*\*?$/).max(1000), {
            'string.pattern.base': '{{#label}} must be an API path under /v1/ (without an instance\'s base path), with * only at its end'
        }).description('An API path under /v1; a trailing * matches everything below'),
        after: Joi.number().integer().min(0).description('Let the first N matching requests through'),
        times: Joi.number().integer().min(1).description('Act at most M times'),
        probability: Joi.number().min(0).max(1).description('Chance of acting on a matching request, drawn from the seeded generator'),
        status: wording(Joi.number().integer().min(400).max(599), {
            'number.min': '{{#label}} must be an error status from 400 to 599',
            'number.max': '{{#label}} must be an error status from 400 to 599'
        }).description('Answer with this error status and the usual error body; nothing is written'),
        code: Joi.string().pattern(/^[a-z][a-z0-9_]*$/).max(64).description('The code of the error body (snake_case); the status\'s reason when left out'),
        message: Joi.string().min(1).max(1000).description('The message of the error body'),
        retry_after: Joi.number().integer().min(0).max(86_400).description('Seconds, sent as Retry-After'),
        // One of two forms, which never overlap: a failure of both is one error of the field.
        latency_ms: wording(Joi.alternatives(latency, Joi.array().ordered(latency.required(), latency.required())).match('one').custom((value: number | [number, number], helpers) => {

            return typeof value === 'number' || value[0] <= value[1] ? value : helpers.error('latency.range');
        }), {
            'alternatives.any': `{{#label}} must be milliseconds from 0 to ${maxLatencyMs}, or [min, max] of them`,
            'latency.range': '{{#label}} must be [min, max] with min at most max'
        }).description(`Milliseconds (0 to ${maxLatencyMs}) to wait before answering, or [min, max] drawn from the seeded generator, min at most max`),
        drop: Joi.string().valid('before', 'after').description('before: close the connection with no answer, nothing written; after: carry the request out, then close the connection with no answer. Outbound, before: the attempt is not sent; after: it is sent, and counts failed whatever the receiver answered (a duplicate follows)'),
        event: typePatternSchema(types).description('Outbound rules: the event type of the deliveries they act on, or a prefix ending with *'),
        endpoint_id: recordId.description('Outbound rules: only deliveries to this endpoint')
    };

    // The fields of one direction refused on a rule of the other, in words that say which direction takes them.
    const inboundOnly = wording(Joi.any().forbidden(), { 'any.unknown': '{{#label}} is for inbound rules: an outbound rule matches event and endpoint_id, and has latency_ms or drop' });
    const outboundOnly = wording(Joi.any().forbidden(), { 'any.unknown': '{{#label}} is for outbound rules (direction: outbound)' });

    const { direction, method, path, status, code, message, retry_after: retryAfter, event, endpoint_id: endpointId, ...shared } = ruleKeys;

    // The document describes an inbound rule; an outbound rule (direction: outbound) takes its own fields instead, which
    // the fields' descriptions say.
    const outboundFields = Joi.object({
        direction: direction.valid(Joi.override, 'outbound'),
        method: inboundOnly,
        path: inboundOnly,
        status: inboundOnly,
        code: inboundOnly,
        message: inboundOnly,
        retry_after: inboundOnly,
        event: event.required(),
        endpoint_id: endpointId.optional()
    });

    const faultRuleSchema = wording(Joi.object({
        direction: direction.valid(Joi.override, 'inbound'),
        method,
        path: path.required(),
        status,
        code,
        message,
        retry_after: retryAfter,
        ...shared,
        event: outboundOnly,
        endpoint_id: outboundOnly
    })
        .when('.direction', { is: 'outbound', then: outboundFields })
        .or('status', 'latency_ms', 'drop')
        .oxor('status', 'drop')
        .with('code', 'status')
        .with('message', 'status')
        .with('retry_after', 'status'), {
        'object.missing': '{{#label}} has no effect: give it status, latency_ms or drop',
        'object.oxor': '{{#label}} cannot both answer with a status and drop the connection',
        'object.with': '{{#label}} sets {{#main}}, which goes with status only'
    });

    const faultRulesPayload = requestBody({
        seed: Joi.number().integer().min(0).max(2 ** 32 - 1).default(0).description('Seeds the generator behind probability and latency ranges: the same seed and requests give the same faults'),
        rules: Joi.array().items(faultRuleSchema).max(maxRules).required().description('Tried in order; at most one acts on a request')
    }, 'FaultRulesInput');

    const faultRulesSchema = Joi.object({
        seed: Joi.number().integer().required(),
        rules: Joi.array().items(Joi.object({
            id: Joi.string().required(),
            description: Joi.string().required().description('The rule in words, as the live log and the console name it'),
            hits: Joi.number().integer().min(0).required().description('How many requests the rule acted on'),
            ...ruleKeys
        }).label('FaultRule')).required()
    }).label('FaultRules');

    return { faultRulesPayload, faultRulesSchema };
}
