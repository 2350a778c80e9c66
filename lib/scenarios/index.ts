import type { Plugin } from '@hapi/hapi';

import { scenarioRoutes } from './routes';


export { readScenario, type Scenario } from './file';
export { runScenario, type RunResult, type StepResult } from './run';
export { scenarioRules, serverTarget } from './target';


/** The scenarios plugin: POST /_scenario and /_instances/{instance_id}/scenario. */
export const scenariosPlugin: Plugin<void> = {
    name: 'localgate-scenarios',
    register: scenarioRoutes
};
