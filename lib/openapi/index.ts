import Path from 'node:path';

import Hapi, { type Plugin, type Request, type Server } from '@hapi/hapi';
import Inert from '@hapi/inert';

import { asyncApiDocument, asyncApiPath, type AsyncApiDocument } from '../events/asyncapi';
import { eventCatalogue } from '../events/catalogue';
import { eventTypesOf } from '../outbox';
import { eventSchemas } from '../events/schemas';
import type { Namespace } from '../namespace';
import { readPackage } from '../paths';
import { swaggerUiFolder } from '../swagger-ui';
import { completeDocument, type OpenApiDocument } from './document';
import { SchemaConverter } from './joi-schema';
import { inlined, jsonSchemaOf } from './json-schema';
import { routeFacts } from './route-facts';
import { describeRoutes } from './route-responses';
import { swaggerOptions } from './swagger-options';


declare module '@hapi/hapi' {
    interface PluginProperties {
        // hapi-swagger's exposed builder: the one its own document route calls, given the service's request.
        'hapi-swagger': { getJSON(options: null, request: Request): Promise<OpenApiDocument> };
    }
}


export const documentPath = '/openapi.json';

export const docsPath = '/docs';

export const docsAssetsPath = '/docs/assets/';


// The files of the docs page, as hapi-swagger serves them: swagger-ui's own, and hapi-swagger's extend.js.
const uiFiles = [
    'favicon-16x16.png', 'favicon-32x32.png', 'index.html', 'oauth2-redirect.html',
    'swagger-ui-bundle.js', 'swagger-ui-bundle.js.map', 'swagger-ui-standalone-preset.js', 'swagger-ui-standalone-preset.js.map',
    'swagger-ui.css', 'swagger-ui.css.map', 'swagger-ui.js', 'swagger-ui.js.map'
];

const extendFolder = Path.join(Path.dirname(require.resolve('hapi-swagger/package.json')), 'public');


interface Documentation {
    // A server of its own for hapi-swagger, vision and handlebars: it renders the docs page, and builds the document
    // of the service's routes from a request to the service (hapi-swagger reads the routes from request.server).
    server: Server;
    document(request: Request): Promise<OpenApiDocument>;
}


/** Loads hapi-swagger and its page renderer, on a server of their own; the routes are described once, here. */
async function loadDocumentation(service: Server, namespaces: readonly Namespace[]): Promise<Documentation> {

    // The stand-in for swagger-ui-dist goes first (see lib/swagger-ui.ts).
    await import('../swagger-ui');
    const [{ default: HapiSwagger }, { default: Vision }] = await Promise.all([import('hapi-swagger'), import('@hapi/vision')]);
    const server = Hapi.server();
    await server.register([Inert, Vision, { plugin: HapiSwagger, options: swaggerOptions({ documentPath, docsPath, docsAssetsPath, asyncApiPath }, namespaces) }]);
    await server.initialize();
    describeRoutes(service, pluginName);
    const { getJSON } = server.plugins['hapi-swagger'];
    return { server, document: (request) => getJSON(null, request) };
}


/** The AsyncAPI document of the namespaces' events, from the event catalogue: built once, with its first request. */
function eventsDocument(namespaces: readonly Namespace[]): AsyncApiDocument {

    const { name, version } = readPackage();
    const converter = new SchemaConverter();
    const streamQuery = jsonSchemaOf(inlined(converter.schemaOf(eventSchemas(eventTypesOf(namespaces)).streamQuery), converter.components));
    return asyncApiDocument(eventCatalogue(namespaces), { title: name, version, streamQuery });
}


const pluginName = 'localgate-openapi';

/** The namespaces whose tags the document lists, handed down by the server. */
export interface OpenapiOptions {
    namespaces: readonly Namespace[];
}

export const openapiPlugin: Plugin<OpenapiOptions> = {
    name: pluginName,
    async register(server, options) {

        // hapi-swagger, vision and handlebars take a fifth of a start: they load with the first request for the
        // document or the docs page, which are the only ones that need them.
        const { namespaces } = options;
        let documentation: Promise<Documentation> | undefined;
        const loaded = () => {

            documentation ??= loadDocumentation(server, namespaces);
            return documentation;
        };

        let events: AsyncApiDocument | undefined;

        await server.register(Inert);
        server.ext('onPreStart', () => {

            // A declaration the document cannot describe stops the start, not the first request for the document.
            for (const route of server.table()) {
                routeFacts(server, route);
            }
        });
        server.ext('onPostStop', async () => {

            await (await documentation)?.server.stop();
        });

        const own: { auth: false; tags: string[] } = { auth: false, tags: [] };
        server.route([
            {
                method: 'GET',
                path: documentPath,
                options: {
                    ...own,
                    async handler(request) {

                        const document = await (await loaded()).document(request);
                        completeDocument(document, server.table(), asyncApiPath);
                        return document;
                    }
                }
            },
            {
                method: 'GET',
                path: asyncApiPath,
                options: {
                    ...own,
                    handler() {

                        events ??= eventsDocument(namespaces);
                        return events;
                    }
                }
            },
            {
                method: 'GET',
                path: docsPath,
                options: {
                    ...own,
                    async handler(request) {

                        // The page as hapi-swagger renders it (its type is hapi's for a string: text/html, utf-8).
                        const page = await (await loaded()).server.inject({ url: request.url.pathname + request.url.search });
                        return page.payload;
                    }
                }
            },
            ...uiFiles.map((file) => ({ method: 'GET' as const, path: docsAssetsPath + file, options: { ...own, files: { relativeTo: swaggerUiFolder }, handler: { file } } })),
            { method: 'GET' as const, path: `${docsAssetsPath}extend.js`, options: { ...own, files: { relativeTo: extendFolder }, handler: { file: 'extend.js' } } }
        ]);
    }
};
