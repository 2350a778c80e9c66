import type { Plugin } from '@hapi/hapi';

import { failure } from './errors';


// Every JSON the server parses from outside (request bodies, fixtures and seed files, equalToJson text) nests at most
// this many arrays and objects. The deepest shape the API takes is a fixture record inside POST /_instances, about six
// levels; code that walks JSON by recursion (JSON.stringify, joi, pattern matching) needs thousands to overflow.
export const maxJsonDepth = 64;

export const tooDeepMessage = `The body nests arrays and objects deeper than ${maxJsonDepth} levels, the most the server accepts`;


/** True when a parsed JSON value nests arrays and objects deeper than limit; walks it once, without recursion, and stops at the first too deep. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {

    if (!isContainer(value)) {
        return false;
    }

    if (limit < 1) {
        return true;
    }

    // The containers open on the way down, each as an iterator over its children: an explicit stack whose height is
    // the depth, so that depth costs no call stack and memory stays within the limit however wide the body.
    const open = [childrenOf(value)];
    let top = open.at(-1);
    while (top) {
        const child = nextContainer(top);
        if (child === undefined) {
            open.pop();
        }
        else if (open.length === limit) {
            return true;
        }
        else {
            open.push(childrenOf(child));
        }

        top = open.at(-1);
    }

    return false;
}


// Past the scalars to the next container among the children, if any.
function nextContainer(children: Iterator<unknown>): object | undefined {

    let step = children.next();
    while (!step.done) {
        if (isContainer(step.value)) {
            return step.value;
        }

        step = children.next();
    }

    return undefined;
}


function isContainer(value: unknown): value is object {

    return typeof value === 'object' && value !== null;
}


function childrenOf(container: object): Iterator<unknown> {

    return (Array.isArray(container) ? container : Object.values(container)).values();
}


/** Throws the 400 `body_too_deep` for a parsed body nested deeper than maxJsonDepth: for a route that parses its own. */
export function refuseDeepBody(value: unknown): void {

    if (nestsDeeperThan(value, maxJsonDepth)) {
        throw failure(400, 'body_too_deep', tooDeepMessage);
    }
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
            Object.assign(request, { payload: null });
            throw failure(400, 'body_too_deep', tooDeepMessage);
        });
    }
};
