import type HapiSwagger from 'hapi-swagger';

import type { Namespace } from '../namespace';
import { readPackage } from '../paths';
import { securityScheme } from './route-responses';


/** hapi-swagger's options for this service. */
export function swaggerOptions(paths: { documentPath: string; docsPath: string; docsAssetsPath: string; asyncApiPath: string }, namespaces: readonly Namespace[]): Omit<HapiSwagger.RegisterOptions, 'validatorUrl'> & { validatorUrl: null } {

    const pack = readPackage();
    return {
        OAS: 'v3.0',
        info: {
            title: pack.name,
            version: pack.version,
            description: `${pack.description} Mint a token with \`npx localgate token <subject>\` and give it to Authorize. ` +
                'A padlock marks a route that reads the token: required where a 401 is listed without a token, optional on the reads ' +
                'of commerce and logistics, which answer the same with or without one. Swagger UI draws the padlock of an optional ' +
                'route open even once you authorized: the token is sent all the same. Routes without a padlock take none. ' +
                `What the server sends unasked, its webhooks and event streams, is the AsyncAPI 3.0 document at ${paths.asyncApiPath}.`
        },
        jsonPath: paths.documentPath,
        documentationPath: paths.docsPath,
        swaggerUIPath: paths.docsAssetsPath,
        routesBasePath: paths.docsAssetsPath,
        auth: false,
        grouping: 'tags',
        definitionPrefix: 'useLabel',
        // Only standard keywords: no x-format, x-constraint or x-meta beside them.
        xProperties: false,
        tags: [
            ...namespaces.map(({ name, description }) => ({ name, description })),
            { name: 'health', description: 'The state of each namespace database' },
            { name: 'instances', description: 'Isolated, disposable data sets for test suites (admin token): every endpoint above also answers under an instance\'s base path /i/<id>' },
            { name: 'console', description: 'Console only: persona and admin tokens and the live request log, mounted on a loopback address or with CONSOLE_API=on' }
        ],
        securityDefinitions: {
            [securityScheme]: {
                type: 'http',
                scheme: 'bearer',
                bearerFormat: 'JWT',
                description: 'A JWT signed by this localgate: `npx localgate token <subject>` prints one'
            }
        },
        // No call leaves the machine: no online validator badge.
        validatorUrl: null,
        uiOptions: { persistAuthorization: true }
    };
}
