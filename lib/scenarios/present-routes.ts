import type { Request, Server } from '@hapi/hapi';
import Joi from 'joi';

import { requireAdmin } from '../auth';
import { noContent, recordId, timestamp } from '../fields';
import { listResponse, listSchema } from '../lists';
import { catalogueFolders, catalogueScenario, listScenarios } from './catalogue';
import { maxScenarioBytes, parseScenarioFile, readScenario } from './file';
import { maxBackSteps, maxPresentations, Presentations, type PresentationView } from './present';
import { scenarioRules } from './target';


// GET /_scenarios and /_presentations: the scenarios a server can present, and presentations played step by step.

const tags = ['api', 'instances'];

const listingSchema = Joi.object({
    id: Joi.string().required().description('What POST /_presentations takes as scenario: the source and the file name'),
    source: Joi.string().valid('builtin', 'example', 'data').required().description('builtin: one per event type, as `localgate trigger` runs them; example: the docs\' walk-throughs; data: the files of DATA_DIR/scenarios'),
    file: Joi.string().required(),
    name: Joi.string().allow(null).required(),
    description: Joi.string().allow(null).required(),
    steps: Joi.number().integer().min(0).allow(null).required(),
    error: Joi.string().allow(null).required().description('Why the file cannot be presented, in the words a run would refuse it with; null when it can')
}).label('ScenarioListing');

const shownSchema = Joi.object({
    request: Joi.object({ method: Joi.string().required(), path: Joi.string().required(), as: Joi.string().allow(null).required(), body: Joi.any() }).required(),
    answer: Joi.object({ status: Joi.number().integer().required(), body: Joi.any() }).required()
}).allow(null).label('PresentedExchange').description('What a request step sent (as its actor, never a token) and what came; a body of more than 16 KiB of JSON is cut, as text');

const presentationSchema = Joi.object({
    id: Joi.string().required(),
    name: Joi.string().required(),
    description: Joi.string().allow(null).required(),
    file: Joi.string().allow(null).required().description('The catalogue id, or the name a dropped file was sent with'),
    instance: Joi.string().required().description('The instance the presentation plays on: its world views read /i/{instance}'),
    actors: Joi.array().items(Joi.object({ name: Joi.string().required(), sub: Joi.string().required(), admin: Joi.boolean().required() }).label('PresentationActor')).required(),
    steps: Joi.array().items(Joi.object({ step: Joi.number().integer().min(1).required(), kind: Joi.string().required(), say: Joi.string().allow(null).required(), line: Joi.string().required() }).label('PresentationStep')).required(),
    position: Joi.number().integer().min(0).required().description('How many steps have been played'),
    played: Joi.array().items(Joi.object({
        step: Joi.number().integer().min(1).required(),
        kind: Joi.string().required(),
        say: Joi.string().allow(null).required(),
        line: Joi.string().allow('').required(),
        ok: Joi.boolean().required(),
        ms: Joi.number().integer().min(0).required(),
        shown: shownSchema.required(),
        reason: Joi.string().allow(null).required(),
        differences: Joi.array().items(Joi.object().unknown()).required()
    }).label('PresentationPlayed')).required(),
    ended: Joi.boolean().required().description('Every step was played, or the last one failed'),
    message: Joi.string().allow(null).required(),
    back: Joi.boolean().required().description('Whether POST …/back can put the world back before the last step played'),
    deliveries: Joi.array().items(Joi.object({ seq: Joi.number().integer().required(), type: Joi.string().allow(null).required(), event_id: Joi.string().allow(null).required(), verified: Joi.boolean().required(), failure: Joi.string().allow(null).required(), status: Joi.number().integer().required() }).label('PresentationDelivery')).required()
        .description('The webhook deliveries the presentation\'s receiver got for the steps played, the newest 50'),
    captures: Joi.object().unknown().required(),
    expires_at: timestamp.required().description('When it ends if left idle, with its instance')
}).label('Presentation');

const params = Joi.object({ presentation_id: recordId.required() });

const newPresentation = Joi.object({
    scenario: Joi.string().max(300).description('A catalogue id (GET /_scenarios)'),
    text: Joi.string().max(maxScenarioBytes).description('A scenario file\'s text (YAML, or JSON when file ends in .json), for a file of the presenter\'s own'),
    file: Joi.string().max(300).default('scenario.yaml').description('The name of the file text holds')
}).xor('scenario', 'text').label('NewPresentation');

const errors = {
    404: 'presentation_not_found: no presentation of that id is open (ended, idle past INSTANCE_IDLE_TTL, or the server restarted)',
    409: 'presentation_busy: a step is being played; presentation_ended (next), presentation_cannot_go_back (back); an instance route\'s own conflict (snapshot_limit_reached)'
};


export function presentationRoutes(server: Server): void {

    const { settings } = server.app.localgate;
    const rules = scenarioRules(server);
    const folders = catalogueFolders(settings.dataDir);
    const presentations = new Presentations(server, settings.instanceIdleTtlMs);
    server.ext('onPreStop', () => presentations.closeAll());
    const admin = { ext: { onPostAuth: { method: requireAdmin } } };
    const opened = (request: Pick<Request, 'params'>) => presentations.get(String(request.params.presentation_id));

    server.route({
        method: 'GET',
        path: '/_scenarios',
        options: {
            description: 'List the scenarios this server can present',
            notes: 'Admin token required. The built-in scenarios (one per event type, as `localgate trigger` runs them), the examples of the docs, and the *.yaml, *.yml and *.json files of DATA_DIR/scenarios, each read and checked as a run would read it: a file that cannot run is listed with the reason.',
            tags,
            ...admin,
            response: { status: { 200: listSchema(listingSchema, 'ScenarioList') } },
            async handler(_request, h) {

                const data = await listScenarios(folders, rules);
                return listResponse(h, { data, total: data.length });
            }
        }
    });

    server.route<{ Payload: { scenario?: string; text?: string; file: string } }>({
        method: 'POST',
        path: '/_presentations',
        options: {
            description: 'Present a scenario: play it one step at a time',
            notes: [
                'Admin token required. Makes a fresh instance from the scenario\'s instance block (kept as its start), points the scenario\'s webhooks at a receiver of the server\'s own, and answers the presentation with no step played.',
                `POST …/next plays the next step, …/back puts the world back as it was before the last one played (the last ${maxBackSteps}), …/restart as it was at the start; DELETE ends it.`,
                `At most ${maxPresentations} are open at once; one idle for INSTANCE_IDLE_TTL ends with its instance. A presentation lives in the process that made it.`
            ].join(' '),
            tags,
            ...admin,
            plugins: { localgate: { errors: { 400: 'invalid_scenario: the text cannot run (the message names the step and field), or the instance block\'s own error', 404: 'scenario_not_found: scenario names no file GET /_scenarios lists', 409: 'snapshot_limit_reached: the start cannot be kept (MAX_SNAPSHOT_MIB)', 422: 'scenario_webhooks_refused: WEBHOOK_HOSTS refuses the receiver', 429: `presentation_limit_reached: ${maxPresentations} presentations are open; instance_limit_reached` } } },
            payload: { maxBytes: 2 * maxScenarioBytes },
            validate: { payload: newPresentation },
            response: { status: { 201: presentationSchema } },
            async handler(request, h) {

                const { scenario: id, text, file } = request.payload;
                const chosen = id === undefined ? { scenario: readScenario(parseScenarioFile(String(text), file), rules), file } : await catalogueScenario(id, folders, rules);
                const presentation = await presentations.start(chosen.scenario, chosen.file);
                return h.response(presentation.view()).code(201).location(`/_presentations/${presentation.id}`);
            }
        }
    });

    const stepping = (action: 'next' | 'back' | 'restart', description: string, notes: string) => {

        server.route({
            method: 'POST',
            path: `/_presentations/{presentation_id}/${action}`,
            options: {
                description,
                notes: `Admin token required. ${notes}`,
                tags,
                ...admin,
                plugins: { localgate: { errors } },
                validate: { params },
                response: { status: { 200: presentationSchema } },
                handler: (request): Promise<PresentationView> => opened(request)[action]()
            }
        });
    };

    stepping('next', 'Play the next step of a presentation', 'The step runs as a run runs it (its request as its actor, its expectation checked); a step whose expectation is not met ends the presentation there, with its reason and differences. Its state before the step is kept for back.');
    stepping('back', 'Go back one step of a presentation', 'Restores the instance as it was before the last step played (data, events, clock, ids), with the fault rules the steps before it set and what they had captured; the deliveries the undone step brought leave the inbox.');
    stepping('restart', 'Start a presentation from the start', 'Restores the instance as it was made, clears its fault rules, its captures and its inbox.');

    server.route({
        method: 'GET',
        path: '/_presentations/{presentation_id}',
        options: {
            description: 'Read a presentation',
            notes: 'Admin token required. The steps, those played with what they sent and got, and the deliveries come so far.',
            tags,
            ...admin,
            plugins: { localgate: { errors: { 404: errors[404] } } },
            validate: { params },
            response: { status: { 200: presentationSchema } },
            handler: (request) => opened(request).view()
        }
    });

    server.route<{ Query: { keep: boolean } }>({
        method: 'DELETE',
        path: '/_presentations/{presentation_id}',
        options: {
            description: 'End a presentation',
            notes: 'Admin token required. Stops its receiver and removes the webhook endpoints pointing at it; deletes its instance unless keep=true.',
            tags,
            ...admin,
            plugins: { localgate: { errors: { 404: errors[404] } } },
            validate: { params, query: Joi.object({ keep: Joi.boolean().default(false).description('Keep the instance, to go on from where the presentation left it') }) },
            response: { status: { 204: noContent } },
            async handler(request, h) {

                await presentations.end(String(request.params.presentation_id), request.query.keep);
                return h.response().code(204);
            }
        }
    });
}
