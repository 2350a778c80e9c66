import type { Request } from '@hapi/hapi';


/** Where a failure is told: tags and data, as hapi's server.log and request.log take them. */
export type FailureLog = (tags: string[], data: object) => void;


/** What a failure's log line holds: its type and where it happened. Its message stays out: a parser's can quote the bytes a client sent. */
export function failureOf(err: unknown): { type: string; at: string[] } {

    const stack = err instanceof Error ? err.stack ?? '' : '';
    const frames = stack.split('\n').filter((line) => /^\s+at /.test(line)).slice(0, 5);
    return { type: err instanceof Error ? err.name : typeof err, at: frames.map((line) => line.trim()) };
}


// Runs the listener; a failure, thrown or rejected, goes to failed instead of the emitter or timer that called it,
// where nothing would catch it and the process would end.
function guarded<A extends unknown[]>(listener: (...args: A) => unknown, failed: (err: unknown, args: A) => void): (...args: A) => void {

    return (...args: A) => {

        try {
            const result = listener(...args);
            if (result instanceof Promise) {
                result.catch((err: unknown) => failed(err, args));
            }
        }
        catch (err) {
            failed(err, args);
        }
    };
}


/** A listener, timer callback or background task that cannot take the process down: its failure is logged under its name. */
export function safely<A extends unknown[]>(task: string, log: FailureLog, listener: (...args: A) => unknown): (...args: A) => void {

    return guarded(listener, (err) => log(['error', 'listener'], { task, ...failureOf(err) }));
}


/** A listener of answered requests that cannot take the process down: its failure is logged with the request's id. */
export function safelyPerRequest(task: string, listener: (request: Request) => unknown): (request: Request) => void {

    return guarded(listener, (err, [request]) => request.log(['error', 'listener'], { task, ...failureOf(err) }));
}
