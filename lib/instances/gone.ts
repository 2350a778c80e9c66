import { DomainError } from '../errors';


/** The refusal of an instance that was deleted or expired, also to a request that reached it before. */
export function instanceGone(id: string): DomainError {

    return new DomainError('not_found', 'instance_not_found', `There is no instance ${JSON.stringify(id)}: it was deleted, it expired, or it never existed (POST /_instances makes one)`);
}
