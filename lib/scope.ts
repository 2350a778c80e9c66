import type { Request } from '@hapi/hapi';

import type { DataSetRuntime } from './data-set';
import type { DataSetDatabases } from './storage/engine';


/**
 * What a request runs against: the default data set, or an instance's, with the path prefix it was reached by. Its
 * databases (data) and what it carries beside them (services: clock, ids, journal, faults, scheduler, sender).
 */
export interface Scope {
    data: DataSetDatabases;
    readonly services: DataSetRuntime;
    readonly basePath: string;
}

declare module '@hapi/hapi' {
    interface RequestApplicationState {
        scope: Scope;
    }
}


/** The data set of the request's scope, which the instances plugin sets as the request arrives. */
export function dataOf(request: Pick<Request, 'app'>): DataSetDatabases {

    return request.app.scope.data;
}


/** The services of the request's data set. */
export function servicesOf(request: Pick<Request, 'app'>): DataSetRuntime {

    return request.app.scope.services;
}
