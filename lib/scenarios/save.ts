import { always } from '../always';
import type { ClockNote } from '../data-set/journal';
import type { Recorded } from '../data-set/journal-entry';
import { durationTextMs } from '../durations';
import type { InstanceMade } from '../instances/instance';


// Save as scenario: what a data set saw (the requests its journal holds, with what it kept of each answer, and the
// moves of its clock among them) as a scenario file that plays it again on a fresh instance. Every id an answer gave
// is captured by its step and stands as {{name}} wherever a later request or expectation names it, so the file replays
// with random ids too; each step expects the status it got and the short values of its answer.

/** A scenario file as a saved one is written: the shape readScenario reads. */
export interface SavedScenario {
    name: string;
    description: string;
    instance: Record<string, unknown>;
    actors: Record<string, { sub: string; admin?: true }>;
    steps: Record<string, unknown>[];
}

// The headers a replay needs sent again: a key that makes a request once.
const keptHeaders = ['idempotency-key'];

const safeName = /^[A-Za-z_][\w.-]*$/;


/** The scenario that replays what a data set saw; made, how the instance was made (null for the default data set). */
export function savedScenario(requests: readonly Recorded[], moves: readonly ClockNote[], made: InstanceMade | null, label: string): SavedScenario {

    const saving = new Saving();
    let next = 0;
    const movesBefore = (arrival: number) => {

        let move = moves[next];
        while (move !== undefined && move.after < arrival) {
            saving.move(move);
            move = moves[++next];
        }
    };

    for (const recorded of requests) {
        movesBefore(recorded.arrival);
        saving.request(recorded);
    }

    movesBefore(Infinity);
    const notes = [`What ${label} saw, saved as a scenario: ${saving.steps.length} steps, each expecting the status its request got and the short values of its answer.`];
    if (made?.fixture || made?.forked) {
        notes.push(`The instance was made ${made.fixture ? 'with a fixture' : 'as a fork'}, which the file does not carry: give instance.fixture (an export of the instance as it was made) for a replay to start from the same world.`);
    }

    const instance = made ? { seed: made.seed, ids: made.ids, pay: made.pay, ...(made.clock === null ? {} : { clock: made.clock }) } : {};
    const steps = saving.steps.length ? saving.steps : [{ say: `${label} had seen no request and no move of its clock` }];
    return { name: `Saved from ${label}`, description: notes.join(' '), instance, actors: saving.actors, steps };
}


class Saving {

    readonly steps: Record<string, unknown>[] = [];
    readonly actors: SavedScenario['actors'] = {};
    // Each id an answer gave, by the capture that names it.
    private readonly captured = new Map<string, string>();
    private readonly captures = new Map<string, number>();
    private readonly actorNames = new Map<string, string>();

    move({ to, applied }: ClockNote): void {

        const counts = Object.fromEntries(Object.entries(applied).filter((entry) => entry[1] !== undefined));
        this.steps.push({ clock: 'now' in to ? { now: to.now.toISOString() } : { advance: durationTextMs(to.advance) }, expect: { applied: counts } });
    }

    request(recorded: Recorded): void {

        const { head } = recorded;
        const step: Record<string, unknown> = {};
        const notes: string[] = [];
        if (head.caller !== null) {
            step.as = this.actor(head.caller, recorded.admin);
        }

        const request: Record<string, unknown> = { method: head.method, path: this.named(recorded.url) };
        const headers = Object.fromEntries(Object.entries(head.headers).filter(([name]) => keptHeaders.includes(name)));
        if (Object.keys(headers).length) {
            request.headers = headers;
        }

        const text = recorded.bodyText;
        if (head.body_truncated) {
            notes.push('its body was longer than the journal keeps (JOURNAL_BODY_BYTES) and is left out');
        }
        else if (text !== null) {
            request.body = this.substituted(JSON.parse(text));
        }

        step.request = request;
        // What a fault rule did to it is no outcome of the API: a replay, which sets no rule, is held to nothing of it.
        const expect: Record<string, unknown> = {};
        const { answer } = recorded;
        if (head.fault !== null) {
            notes.push('a fault rule acted on it, so its answer is not expected (the file sets no fault rule)');
        }
        else {
            expect.status = head.status;
            if (answer) {
                expect.body = this.substituted(answer.fields);
            }
        }

        step.expect = expect;
        if (answer?.id && !this.captured.has(answer.id)) {
            const name = this.captureName(head.path);
            this.captured.set(answer.id, name);
            step.capture = { [name]: '$.id' };
        }

        this.steps.push(notes.length ? { say: `${head.method} ${head.path}: ${notes.join('; ')}`, ...step } : step);
    }

    // The actor a caller sends as: its subject where that is a name a scenario takes, one for each role it had.
    private actor(sub: string, admin: boolean): string {

        const key = `${admin}\0${sub}`;
        let name = this.actorNames.get(key);
        if (name === undefined) {
            const base = `${safeName.test(sub) && sub.length <= 50 ? sub : 'caller'}${admin ? '_admin' : ''}`;
            name = base;
            for (let i = 2; Object.hasOwn(this.actors, name); ++i) {
                name = `${base}_${i}`;
            }

            this.actorNames.set(key, name);
            this.actors[name] = admin ? { sub, admin: true } : { sub };
        }

        return name;
    }

    // A capture's name: the last part of the path that is a word (a namespace's name is one), numbered.
    private captureName(path: string): string {

        const word = always(path.split('/').filter((part) => /^[a-z][\w-]*$/i.test(part)).at(-1), 'a word of the path');
        const base = word.replace(/-/g, '_');
        const count = (this.captures.get(base) ?? 0) + 1;
        this.captures.set(base, count);
        return `${base}_${count}`;
    }

    // A URL with every segment or query value that is an id captured before it as its {{name}}.
    private named(url: string): string {

        return url.split(/([/?&=])/).map((part) => {

            const name = this.captured.get(part);
            return name === undefined ? part : `{{${name}}}`;
        }).join('');
    }

    // A value with every string that is a captured id as its {{name}}.
    private substituted(value: unknown): unknown {

        if (typeof value === 'string') {
            const name = this.captured.get(value);
            return name === undefined ? value : `{{${name}}}`;
        }

        if (Array.isArray(value)) {
            return value.map((item) => this.substituted(item));
        }

        if (value !== null && typeof value === 'object') {
            return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, this.substituted(child)]));
        }

        return value;
    }
}
