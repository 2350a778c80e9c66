import type { Request, RouteExtObject, Server } from '@hapi/hapi';
import Joi from 'joi';

import { always } from '../always';
import { mintToken, requireAdmin } from '../auth';
import { DomainError, failure } from '../errors';
import { timestamp } from '../fields';
import { requestIdHeaders } from '../request-id';
import { fieldOf } from '../thrown';
import { scopedOf, scopedRoutes } from '../instances/scoped-routes';
import { maxScenarioBytes, maxSteps, parseScenarioJson, readScenario, scenarioSchema, stepKinds, yaml, type Scenario } from './file';
import { runScenario, type RunOptions, type RunResult } from './run';
import { savedScenario } from './save';
import { answerBody } from './target';
import { scenarioRules, serverTarget } from './target';


// POST /_scenario and /_instances/{instance_id}/scenario: a scenario's steps played on a data set as it stands.

/** The media types a scenario is sent as: JSON, or YAML as text. */
export const scenarioMediaTypes = ['application/json', 'application/yaml', 'application/x-yaml', 'text/yaml', 'text/plain'];

const difference = Joi.object({ path: Joi.string().required(), expected: Joi.any(), got: Joi.any() }).label('ScenarioDifference');

const stepResult = Joi.object({
    step: Joi.number().integer().min(1).required(),
    kind: Joi.string().valid(...stepKinds, 'say').required(),
    say: Joi.string().allow(null).required(),
    line: Joi.string().allow('').required(),
    ok: Joi.boolean().required(),
    ms: Joi.number().integer().min(0).required()
}).label('ScenarioStep');

export const runResultSchema = Joi.object({
    name: Joi.string().required(),
    instance: Joi.string().allow(null).required().description('The instance the steps ran on; null for the default data set, or for a fresh instance deleted after the run'),
    ok: Joi.boolean().required().description('Whether every step met its expectation'),
    steps: Joi.array().items(stepResult).required().description('The steps run, up to the first that failed'),
    failure: Joi.object({
        step: Joi.number().integer().min(1).required(),
        say: Joi.string().allow(null).required(),
        line: Joi.string().allow('').required(),
        reason: Joi.string().required(),
        differences: Joi.array().items(difference).required()
    }).allow(null).required().label('ScenarioFailure'),
    message: Joi.string().allow(null).required().description('The failure as a test fails with it: the step, the reason, each difference on a line'),
    captures: Joi.object().unknown().required().description('What the steps captured, by name'),
    events: Joi.array().items(Joi.object({ id: Joi.string().required(), type: Joi.string().required(), created_at: timestamp.required() }).label('ScenarioEvent')).required()
        .description('The events written to the data set while the run ran, in its order: those its steps caused (and any another client caused meanwhile)')
}).label('ScenarioRun');

function notes(fresh: boolean): string {

    return [
        'Admin token required. The body is a scenario (docs/scenarios.md), as JSON (at most 1 MiB) or as YAML text (Content-Type application/yaml or text/plain, at most 256 KiB), 64 levels deep at most.',
        `Its steps (at most ${maxSteps}) run in order on the data set as it stands, each request through the server's own routes as its actor, until one fails:`,
        'the answer is 200 with ok false and the failure (the step from 1, what was expected and what came), or ok true.',
        'A file that cannot run (a step of no kind, an unknown actor, a {{name}} never captured, a field of the wrong shape) is a 400 invalid_scenario naming the step and field.',
        fresh ? 'The instance is made as POST /_instances makes one from the scenario\'s instance block (its errors are that route\'s), and deleted after the run unless keep=true, when the answer names it.' :
            'The instance block is not applied here: it is what POST /_scenarios/run, `localgate scenario run` and the kit make a fresh instance with.',
        'With webhooks, the run sets the data set\'s webhook endpoints to a receiver of its own for its length (replacing those set), and removes them at its end.'
    ].join(' ');
}


declare module '@hapi/hapi' {
    interface RequestApplicationState {
        // The scenario the body holds, read by the route's step.
        scenario?: Scenario;
    }
}


/**
 * The step that reads the scenario from the body's text, or refuses it with a 400 invalid_scenario naming the step and
 * field: after authentication and before an instance's route looks its instance up, where a parsed body is checked.
 */
function readingStep(server: Server): RouteExtObject {

    const rules = scenarioRules(server);
    return {
        method: (request, h) => {

            const text = String(request.payload);
            const json = /^application\/json\b/i.test(String(request.headers['content-type']));
            request.app.scenario = readScenario(json ? parseScenarioJson(text) : text, rules);
            return h.continue;
        }
    };
}


function scenarioOf(request: Pick<Request, 'app'>): Scenario {

    return always(request.app.scenario, 'the scenario its step read');
}


/** What a run answers: its result, and the instance it ran on. */
export type PlayedScenario = RunResult & { instance: string | null };


/**
 * Plays a scenario on a fresh instance made with its instance block, through POST /_instances; the instance is
 * deleted after the run unless kept. A block the instance cannot be made from is that route's error.
 */
export async function playFresh(server: Server, scenario: Scenario, keep: boolean, options: RunOptions = {}): Promise<PlayedScenario> {

    const authorization = `Bearer ${mintToken(server.app.localgate.secret, 'localgate-scenario', 3600, { admin: true })}`;
    const made = await server.inject({ method: 'POST', url: '/_instances', headers: { authorization }, payload: scenario.instance });
    const answer = answerBody(made.payload, made.headers['content-type']);
    if (made.statusCode !== 201) {
        const details = fieldOf(answer, 'details');
        throw failure(made.statusCode, String(fieldOf(answer, 'code')), `The scenario's instance cannot be made: ${String(fieldOf(answer, 'message'))}`, details ? { details } : {});
    }

    const id = String(fieldOf(answer, 'id'));

    try {
        return { ...await runScenario(scenario, serverTarget(server, id), options), instance: keep ? id : null };
    }
    finally {
        if (!keep) {
            await server.inject({ method: 'DELETE', url: `/_instances/${id}`, headers: { authorization } });
        }
    }
}


/** The most runs a server plays at once over HTTP: each may hold a receiver and wait on the wall clock. */
export const maxConcurrentRuns = 8;


/** Runs at most maxConcurrentRuns at once; one more is a 429 scenario_limit_reached. */
class RunGate {

    private running = 0;

    async run<T>(play: () => Promise<T>): Promise<T> {

        if (this.running >= maxConcurrentRuns) {
            throw new DomainError('limit', 'scenario_limit_reached', `${maxConcurrentRuns} scenarios are running on this server, the most it runs at once: try again when one has ended`);
        }

        ++this.running;
        try {
            return await play();
        }
        finally {
            --this.running;
        }
    }
}


// What ends a run when its client has gone: no step starts after the connection closed.
function whileConnected(request: Pick<Request, 'raw'>): RunOptions {

    const stop = new AbortController();
    request.raw.res.once('close', () => stop.abort());
    return { signal: stop.signal };
}


export function scenarioRoutes(server: Server): void {

    const gate = new RunGate();
    const reading = readingStep(server);
    const body = { schema: scenarioSchema(scenarioRules(server).types), types: scenarioMediaTypes };

    server.route<{ Query: { keep: boolean } }>({
        method: 'POST',
        path: '/_scenarios/run',
        options: {
            description: 'Run a scenario on a fresh instance made with its instance block',
            notes: notes(true),
            tags: ['api', 'instances'],
            ext: { onPostAuth: [{ method: requireAdmin }, reading] },
            plugins: { localgate: { body, errors: { 400: 'invalid_scenario: the scenario cannot run (the message names the step and field), or invalid_fixture: its instance block\'s fixture', 422: 'scenario_webhooks_refused: the data set refused the run\'s webhook endpoints (a host WEBHOOK_HOSTS does not allow)', 429: 'instance_limit_reached: MAX_INSTANCES instances are live; scenario_limit_reached: 8 scenarios are running' } } },
            payload: { allow: scenarioMediaTypes, maxBytes: maxScenarioBytes, parse: 'gunzip', output: 'data' },
            validate: { query: Joi.object({ keep: Joi.boolean().default(false).description('Keep the instance after the run, for a demo to go on from') }) },
            response: { status: { 200: runResultSchema } },
            handler: (request) => gate.run(() => playFresh(server, scenarioOf(request), request.query.keep, whileConnected(request)))
        }
    });

    scopedRoutes(server, ({ instance, path, what, route }) => {

        route<{ Params: { instance_id?: string } }>({
            method: 'POST',
            path: path('scenario'),
            options: {
                description: `Run a scenario's steps on ${what}`,
                notes: notes(false),
                plugins: { localgate: { body, errors: { 400: 'invalid_scenario: the scenario cannot run (the message names the step and field)', 422: 'scenario_webhooks_refused: the data set refused the run\'s webhook endpoints (a host WEBHOOK_HOSTS does not allow)', 429: 'scenario_limit_reached: 8 scenarios are running' } } },
                ext: { onPostAuth: reading },
                // Read as text whatever its type (only a gzip encoding undone): JSON is YAML, and the text's depth is measured before it is parsed.
                payload: { allow: scenarioMediaTypes, maxBytes: maxScenarioBytes, parse: 'gunzip', output: 'data' },
                response: { status: { 200: runResultSchema } },
                async handler(request) {

                    const scenario = scenarioOf(request);
                    const id = instance ? String(request.params.instance_id) : null;
                    return { ...await gate.run(() => runScenario(scenario, serverTarget(server, id), whileConnected(request))), instance: id };
                }
            }
        });

        route<{ Params: { instance_id?: string } }>({
            method: 'GET',
            path: path('scenario'),
            options: {
                description: `Save what ${what} saw as a scenario`,
                notes: [
                    'Admin token required. The requests the data set\'s journal holds (JOURNAL_SIZE, from its last clear) and the moves of its clock among them, as a scenario file that replays them on a fresh instance made as this one was:',
                    'each request as its caller, expecting the status it got and the short values of its answer (not its instants), each id an answer gave captured and named wherever a later request or expectation uses it.',
                    'JSON, or YAML (application/yaml) when the Accept header asks for application/yaml or text/yaml. Admin routes (webhook endpoints, fault rules) are not requests of the API and are not in it.'
                ].join(' '),
                plugins: { 'hapi-swagger': { produces: ['application/yaml', 'application/json'], responses: { 200: { description: 'The scenario file', schema: body.schema, headers: requestIdHeaders } } } },
                handler(request, h) {

                    const scoped = scopedOf(request);
                    const { journal } = scoped.scope.services;
                    const label = instance ? `instance ${String(request.params.instance_id)}` : 'the default data set';
                    const saved = savedScenario(journal.list(), journal.clockMoves(), scoped.made?.() ?? null, label);
                    // JSON, as every route answers; YAML, the file as a person keeps it, when the Accept header asks for it.
                    if (/\b(?:application|text)\/(?:x-)?yaml\b/.test(String(request.headers.accept))) {
                        return h.response(yaml().stringify(saved, { lineWidth: 0 })).type('application/yaml; charset=utf-8');
                    }

                    return saved;
                }
            }
        });
    });
}
