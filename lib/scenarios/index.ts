import type { Plugin } from '@hapi/hapi';

import { presentationRoutes } from './present-routes';
import { scenarioRoutes } from './routes';


export { readScenario, type Scenario } from './file';
export { runScenario, type RunResult, type StepResult } from './run';
export { scenarioRules, serverTarget } from './target';


/** The scenarios plugin: POST /_scenario and /_instances/{instance_id}/scenario, the catalogue and presentations. */
export const scenariosPlugin: Plugin<void> = {
    name: 'localgate-scenarios',
    register(server) {

        scenarioRoutes(server);
        presentationRoutes(server);
    }
};
