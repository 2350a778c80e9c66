import Assert from 'node:assert';

import type { Lifecycle, ReqRef, ReqRefDefaults, Request, ResponseToolkit, RouteExtObject, RouteOptions, RouteOptionsValidate, Server, ServerRoute } from '@hapi/hapi';
import type Joi from 'joi';

import { requireAdmin } from '../auth';
import type { ClockMoved } from '../data-set';
import type { Scope } from '../scope';
import type { InstanceMade, InstanceRecord } from './instance';
import { instanceParams } from './schemas';


// Scoped routes: an admin feature (journal, faults, events, webhooks, clock) declares its routes once, and gets them
// for the default data set (/_<name>) and for an instance (/_instances/{instance_id}/<name>). The instance's route
// finds its data set in a step of its own, through the request decoration the instances plugin gives, so that no
// feature looks instances up itself.

/** The data set an admin route acts on, as its step found it. */
export interface ScopedData {
    scope: Scope;
    // How GET /_instances/{instance_id} reads the instance now; null for the default data set.
    describe: (() => InstanceRecord) | null;
    // How the instance was made; null for the default data set.
    made: (() => InstanceMade) | null;
    // Moves the data set's clock: an instance's move is one of its operations, which a deletion waits for.
    moveClock(to: { now: Date } | { advance: number }): Promise<ClockMoved>;
}

declare module '@hapi/hapi' {
    interface RequestApplicationState {
        // Beside scope, which stays the data set the path reached: the log line and the live log read that one.
        scoped?: ScopedData;
    }

    interface Request<Refs extends ReqRef = ReqRefDefaults> {
        /** The live instance an id names, or a 404 instance_not_found: a decoration of the instances plugin. */
        instanceNamed(this: Request<Refs>, id: string): ScopedData;
    }
}

/** A route of a feature, its options an object: the helper adds the admin step, the tags, instance_id and the data set. */
export type ScopedRoute<Refs extends ReqRef = ReqRefDefaults> = Omit<ServerRoute<Refs>, 'options'> & {
    options: Omit<RouteOptions<Refs>, 'tags' | 'ext' | 'validate'> & {
        // A step of the route's own after the admin step (reading a body the route parses itself, say).
        ext?: { onPostAuth: RouteExtObject };
        // The route's own params: an instance's route has instance_id before them.
        validate?: Omit<RouteOptionsValidate, 'params'> & { params?: Joi.ObjectSchema };
    };
};

/** Where a feature's routes are declared: once for the default data set, once for an instance. */
export interface ScopedTarget {
    /** Whether the routes are an instance's, under /_instances/{instance_id}. */
    readonly instance: boolean;
    /** The data set in the words of a description: "the default data set" or "an instance". */
    readonly what: string;
    /** The same, owning: "the default data set's" or "an instance's". */
    readonly whose: string;
    /** A route's path: path('faults') is /_faults, or /_instances/{instance_id}/faults. */
    path(name: string): string;
    /** Adds a route for this data set: admin only, tagged, its params with instance_id where the path has it. */
    route<Refs extends ReqRef = ReqRefDefaults>(route: ScopedRoute<Refs>): void;
}

const tags = ['api', 'instances'];

// Right after authentication, so that a token without the role learns nothing of the body's rules; the document
// shows a 403 on every route with this step.
const onPostAuth = { method: requireAdmin };

const targets = [
    {
        instance: false,
        what: 'the default data set',
        whose: 'the default data set\'s',
        path: (name: string) => `/_${name}`,
        params: undefined,
        found(request: Request): ScopedData {

            const { scope } = request.app;
            return { scope, describe: null, made: null, moveClock: (to) => scope.services.moveClock(to) };
        }
    },
    {
        instance: true,
        what: 'an instance',
        whose: 'an instance\'s',
        path: (name: string) => `/_instances/{instance_id}/${name}`,
        params: instanceParams,
        found: (request: Request): ScopedData => request.instanceNamed((request.params as { instance_id: string }).instance_id)
    }
];


/** Declares a feature's routes once: declare runs for the default data set and for an instance. */
export function scopedRoutes(server: Server, declare: (target: ScopedTarget) => void): void {

    for (const { found, params, ...words } of targets) {
        // After validation, as the handler would: a malformed instance_id is a 400, an unknown one a 404.
        const onPreHandler = {
            method: (request: Request, h: ResponseToolkit): Lifecycle.ReturnValue => {

                request.app.scoped = found(request);
                return h.continue;
            }
        };

        declare({
            ...words,
            route(route) {

                const { validate = {} } = route.options;
                const own = validate.params;
                server.route({
                    ...route,
                    options: {
                        ...route.options,
                        tags,
                        ext: { onPostAuth: route.options.ext ? [onPostAuth, route.options.ext.onPostAuth] : onPostAuth, onPreHandler },
                        validate: { ...validate, params: params && own ? params.concat(own) : params ?? own }
                    }
                });
            }
        });
    }
}


/** The data set a scoped route acts on. */
export function scopeOf(request: Pick<Request, 'app'>): Scope {

    return scopedOf(request).scope;
}


/** What a scoped route acts on, with how an instance reads. */
export function scopedOf(request: Pick<Request, 'app'>): ScopedData {

    Assert.ok(request.app.scoped, 'A scoped route is read before its step found its data set');
    return request.app.scoped;
}
