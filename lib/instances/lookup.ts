import { failure } from '../errors';
import { instanceGone } from './gone';
import type { Instance } from './instance';


/** What finds a live instance by id, marking it used: the registry. */
export interface InstanceFinder {
    find(id: string): Instance | undefined;
}


/**
 * The live instance with this id, or a 404 instance_not_found. The error is made here as the client sees it, because
 * the lookup also runs before routing (an instance named by the path or a header), where only such an error keeps its body.
 */
export function liveInstance(instances: InstanceFinder, id: string): Instance {

    const instance = instances.find(id);
    if (!instance) {
        const gone = instanceGone(id);
        throw failure(404, gone.code, gone.message);
    }

    return instance;
}
