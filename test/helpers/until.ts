import { setTimeout as sleep } from 'node:timers/promises';


/** How long `until` waits, and how often it looks. */
export interface UntilOptions {
    /** The most it waits, in milliseconds, before it fails naming what it awaited (5000 when left out). */
    timeoutMs?: number;
    /** The pause between two looks, in milliseconds (10 when left out); 0 looks again on the next turn of the event loop. */
    everyMs?: number;
}


/**
 * Waits until the condition holds, looking again every few milliseconds: timers fire late and logs are written
 * asynchronously, so a test waits for what it needs rather than for a time. Resolves to the milliseconds it waited;
 * rejects naming what it awaited once the timeout passes.
 */
export async function until(what: string, condition: () => boolean | Promise<boolean>, { timeoutMs = 5000, everyMs = 10 }: UntilOptions = {}): Promise<number> {

    const started = performance.now();
    for (;;) {
        // A condition that answers at once is read at once: no turn passes between it holding and the test going on.
        const held = condition();
        if (typeof held === 'boolean' ? held : await held) {
            return Math.round(performance.now() - started);
        }

        const waited = performance.now() - started;
        if (waited > timeoutMs) {
            throw new Error(`Waited ${Math.round(waited)} ms for ${what}, more than the ${timeoutMs} ms allowed`);
        }

        await (everyMs === 0 ? new Promise((resolve) => setImmediate(resolve)) : sleep(everyMs));
    }
}
