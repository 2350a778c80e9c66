import type { Plugin } from '@hapi/hapi';

import { failure } from './errors';


// Every JSON the server parses from outside (request bodies, fixtures and seed files, equalToJson text) nests at most
// this many arrays and objects. The deepest shape the API takes is a fixture record inside POST /_instances, about six
// levels; code that walks JSON by recursion (JSON.stringify, joi, pattern matching) needs thousands to overflow.
export const maxJsonDepth = 64;

export const tooDeepMessage = `The body nests arrays and objects deeper than ${maxJsonDepth} levels, the most the server accepts`;


/** True when a parsed JSON value nests arrays and objects deeper than limit; walks it once, without recursion, and stops at the first too deep. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {

    // Containers still to open, each with the depth it sits at: an explicit stack, so that depth costs no call stack.
    const pending: unknown[] = [value];
    const depths: number[] = [1];
    while (pending.length) {
        const item = pending.pop();
        const depth = depths.pop()!;
        if (item === null || typeof item !== 'object') {
            continue;
        }

        if (depth > limit) {
            return true;
        }

        for (const child of Array.isArray(item) ? item : Object.values(item)) {
            pending.push(child);
            depths.push(depth + 1);
        }
    }

    return false;
}


/**
 * Refuses a body nested deeper than maxJsonDepth. hapi parses a body (iteratively, so the parse itself is safe) between
 * authentication and onPostAuth, and nothing of ours reads it before then: onPostAuth is the first step every route
 * runs with the body parsed, before joi, the handler or a response listener (the journal, the live log) walks it.
 */
export const nestingPlugin: Plugin<void> = {
    name: 'localgate-nesting',
    register(server) {

        server.ext('onPostAuth', (request, h) => {

            if (!nestsDeeperThan(request.payload, maxJsonDepth)) {
                return h.continue;
            }

            // The journal records what the request carries: the refused body is dropped here, never walked again.
            (request as { payload: unknown }).payload = null;
            throw failure(400, 'body_too_deep', tooDeepMessage);
        });
    }
};
