import Boom from '@hapi/boom';
import type { AuthSettings, RequestRoute, Server } from '@hapi/hapi';
import Joi from 'joi';

import { requireAdmin } from '../auth';
import { errorStatuses } from './error-responses';
import { shapeOf } from './joi-shape';


// What a route may declare about errors its rules produce that its config cannot show (409, 422, 501 ...):
// `plugins: { localgate: { errors: { 409: 'booking_overlap: ...' } } }`, a plain list of statuses, or for a status
// the Boom error itself (`{ 501: notProvisioned() }`), whose body is then the example.
export type DeclaredErrors = number[] | Record<number, string | Boom.Boom>;

declare module '@hapi/hapi' {
    interface PluginSpecificConfiguration {
        localgate?: {
            errors?: DeclaredErrors;
        };
    }
}


// Facts about a route, read from its own config: what the error rules below decide on.
export interface RouteFacts {
    auth: 'none' | 'required' | 'optional';
    validates: boolean;
    hasParams: boolean;
    admin: boolean;
    maxBytes: number | undefined;
    referencesIds: boolean;
    declared: Map<number, string | Boom.Boom>;
}

const errorStatus = Joi.number().valid(...errorStatuses);

const declaredSchema = Joi.alternatives(
    Joi.array().items(errorStatus),
    Joi.object().pattern(errorStatus, Joi.alternatives(Joi.string().min(1), Joi.object().instance(Boom.Boom)))
);



/** What the document says of a route, read from its config; throws on a declaration it cannot describe. */
export function routeFacts(server: Server, route: RequestRoute): RouteFacts {

    const { settings } = route;
    const auth = (settings.auth as AuthSettings | false | undefined) === false ? null : settings.auth ?? server.auth.settings.default;
    const validate = settings.validate!;
    const declared: DeclaredErrors = Joi.attempt(settings.plugins?.localgate?.errors ?? [], declaredSchema, `Invalid plugins.localgate.errors of ${route.method.toUpperCase()} ${route.path}:`);

    return {
        auth: auth ? auth.mode as 'required' | 'optional' : 'none',
        validates: Boolean(validate.params || validate.query || validate.payload || validate.headers),
        hasParams: route.path.includes('{'),
        // hapi keeps a route's extensions as lists of methods.
        admin: Boolean((settings.ext as { onPostAuth?: { method: unknown[] }[] } | undefined)?.onPostAuth?.some((step) => step.method.includes(requireAdmin))),
        // hapi reads a body on every method but GET (settings.payload is null there).
        maxBytes: settings.payload?.maxBytes,
        referencesIds: shapeOf(validate.payload).referencesIds,
        declared: new Map(Array.isArray(declared) ? declared.map((status) => [status, '']) : Object.entries(declared).map(([status, error]) => [Number(status), error]))
    };
}
