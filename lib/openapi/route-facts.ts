import Boom from '@hapi/boom';
import type { RequestRoute, Server } from '@hapi/hapi';
import Joi from 'joi';

import { requireAdmin } from '../auth';
import { errorStatuses, type DeclaredErrors, type RouteFacts } from './error-responses';
import { shapeOf } from './joi-shape';


// A route declares the errors its rules produce that its config cannot show in plugins.localgate.errors.
declare module '@hapi/hapi' {
    interface PluginSpecificConfiguration {
        localgate?: {
            errors?: DeclaredErrors;
            // A body that a step of the route reads itself (not hapi's validation): its schema and media types, for the document.
            body?: { schema: Joi.ObjectSchema; types: readonly string[] };
        };
    }
}


const errorStatus = Joi.number().valid(...errorStatuses);

const declaredSchema = Joi.alternatives(
    Joi.array().items(errorStatus),
    Joi.object().pattern(errorStatus, Joi.alternatives(Joi.string().min(1), Joi.object().instance(Boom.Boom)))
);



/** What the document says of a route, read from its config; throws on a declaration it cannot describe. */
export function routeFacts(server: Server, route: RequestRoute): RouteFacts {

    const { settings } = route;
    // hapi's types leave out the false a route's auth setting holds when it is off.
    const configured: unknown = settings.auth;
    const auth = configured === false ? null : settings.auth ?? server.auth.settings.default;
    const { validate } = settings;
    const declared: DeclaredErrors = Joi.attempt(settings.plugins?.localgate?.errors ?? [], declaredSchema, `Invalid plugins.localgate.errors of ${route.method.toUpperCase()} ${route.path}:`);

    return {
        auth: auth ? auth.mode as 'required' | 'optional' : 'none',
        validates: Boolean(validate?.params || validate?.query || validate?.payload || validate?.headers),
        hasParams: route.path.includes('{'),
        // hapi keeps a route's extensions as lists of methods.
        admin: Boolean((settings.ext as { onPostAuth?: { method: unknown[] }[] } | undefined)?.onPostAuth?.some((step) => step.method.includes(requireAdmin))),
        // hapi reads a body on every method but GET (settings.payload is null there).
        maxBytes: settings.payload?.maxBytes,
        referencesIds: shapeOf(validate?.payload).referencesIds,
        declared: new Map(Array.isArray(declared) ? declared.map((status) => [status, '']) : Object.entries(declared).map(([status, error]) => [Number(status), error]))
    };
}
