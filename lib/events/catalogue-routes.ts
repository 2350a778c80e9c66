import type { Plugin } from '@hapi/hapi';
import Joi from 'joi';

import { requireAdmin } from '../auth';
import { listResponse } from '../lists';
import type { Namespace } from '../namespace';
import { asyncApiPath } from './asyncapi';
import { eventCatalogue } from './catalogue';
import { eventTypeListSchema } from './schemas';


// The event catalogue over HTTP: every type with the JSON Schema of its data (the AsyncAPI document, made from the
// same schemas, is served beside the OpenAPI document).

export interface CatalogueOptions {
    namespaces: readonly Namespace[];
}

const optionsSchema = Joi.object<CatalogueOptions>({
    namespaces: Joi.array().required()
});


/** The catalogue's route: GET /_events/types (admin token). */
export const cataloguePlugin: Plugin<CatalogueOptions> = {
    name: 'localgate-event-catalogue',
    register(server, options) {

        const settings = Joi.attempt(options, optionsSchema, 'Invalid event catalogue options');

        server.route({
            method: 'GET',
            path: '/_events/types',
            options: {
                description: 'The event types, with the JSON Schema of each one\'s data',
                notes: `Admin token required. Every type the server writes, in the order of its namespaces, with what it says happened and the JSON Schema (draft 7) of its data: the response schema of the record it announces, so that a delivery's or a stream's data validates against it. The same schemas make the AsyncAPI document at ${asyncApiPath}.`,
                tags: ['api', 'instances'],
                ext: { onPostAuth: { method: requireAdmin } },
                response: { status: { 200: eventTypeListSchema } },
                handler(request, h) {

                    // The catalogue is built with the first request that reads it: a start converts no schema.
                    const data = eventCatalogue(settings.namespaces).types.map(({ type, description, delivered, data: schema }) => ({ type, description, delivered, data_schema: schema }));
                    return listResponse(h, { data, total: data.length });
                }
            }
        });
    }
};
