import Crypto from 'node:crypto';

import type { Server } from '@hapi/hapi';

import { always, present } from '../always';
import { mintToken } from '../auth';
import { housekeepingHeader, housekeepingValue } from '../console/feed';
import { DomainError, failure } from '../errors';
import { safely } from '../safe-listener';
import { fieldOf } from '../thrown';
import type { FaultStep, Scenario } from './file';
import { playFresh } from './routes';
import { lineOf, Stepper, type Played, type RunFailure } from './run';
import { answerBody, serverTarget } from './target';


// A presentation: a scenario played one step at a time on a fresh instance, for a person to show, with a way back. The
// server holds it (its stepper, captures and receiver) between the calls of the page that presents it.

/** The most presentations a server holds at once: each holds an instance and may hold a receiver's port. */
export const maxPresentations = 8;

/** The most steps a presentation can go back: one snapshot of its instance each, past the one it began with. */
export const maxBackSteps = 40;

/** The longest JSON of a body a step shows; a longer one is shown cut, as text. */
export const maxShownChars = 16_384;

/** The deliveries a presentation shows, the newest. */
export const maxShownDeliveries = 50;

// Where a step can be gone back to: the instance's state before it, what had been captured, and how many deliveries had come.
interface BackPoint {
    snapshot: string;
    captures: Record<string, unknown>;
    deliveries: number;
}

/** A presentation as its routes answer it. */
export interface PresentationView {
    id: string;
    name: string;
    description: string | null;
    file: string | null;
    instance: string;
    actors: { name: string; sub: string; admin: boolean }[];
    steps: { step: number; kind: string; say: string | null; line: string }[];
    position: number;
    played: (Played['result'] & { shown: Played['shown']; reason: string | null; differences: RunFailure['differences'] })[];
    ended: boolean;
    message: string | null;
    back: boolean;
    deliveries: { seq: number; type: string | null; event_id: string | null; verified: boolean; failure: string | null; status: number }[];
    captures: Record<string, unknown>;
    expires_at: string;
}


/** A scenario being presented on its own instance. */
export class Presentation {

    readonly id = Crypto.randomUUID();
    lastUsed = Date.now();
    private played: Played[] = [];
    // By the index of the step they stand before: 0, the start, always; the others for the last maxBackSteps steps.
    private readonly backPoints = new Map<number, BackPoint>();
    private busy = false;

    constructor(private readonly server: Server, readonly scenario: Scenario, readonly file: string | null, readonly instance: string, private readonly stepper: Stepper, private readonly idleTtlMs: number) {}

    /** Makes the instance its scenario's instance block asks for, points its webhooks at a receiver, and keeps its state as the start. */
    static async start(server: Server, scenario: Scenario, file: string | null, idleTtlMs: number): Promise<Presentation> {

        const made = await playFresh(server, { ...scenario, webhooks: [], steps: [] }, true);
        const instance = present(made.instance, 'the kept instance');
        const stepper = new Stepper(scenario, serverTarget(server, instance), { runMs: Number.POSITIVE_INFINITY });
        const presentation = new Presentation(server, scenario, file, instance, stepper, idleTtlMs);
        try {
            await stepper.open();
            presentation.backPoints.set(0, { snapshot: await presentation.snapshot(), captures: {}, deliveries: 0 });
            return presentation;
        }
        catch (err) {
            await presentation.close(false);
            throw err;
        }
    }

    /** Plays the next step; a 409 presentation_ended once every step was played or one failed. */
    next(): Promise<PresentationView> {

        return this.exclusive(async () => {

            const index = this.played.length;
            if (this.ended()) {
                throw new DomainError('conflict', 'presentation_ended', `The presentation has ended${this.played.at(-1)?.failure ? ` at step ${index}, which failed` : ''}: go back, or from the start`);
            }

            // The state before a step is what going back to it restores; past maxBackSteps the oldest is let go.
            if (!this.backPoints.has(index)) {
                this.backPoints.set(index, { snapshot: await this.snapshot(), captures: { ...this.stepper.captures }, deliveries: this.stepper.deliveries().length });
                const oldest = [...this.backPoints.keys()].filter((key) => key > 0).slice(0, -maxBackSteps);
                for (const key of oldest) {
                    await this.forget(key);
                }
            }

            this.played.push(await this.stepper.play(index));
            return this.view();
        });
    }

    /** Puts the world back as it was before the last step played; a 409 when there is none, or it can no longer be. */
    back(): Promise<PresentationView> {

        return this.exclusive(async () => {

            const index = this.played.length - 1;
            const point = this.backPoints.get(index);
            if (point === undefined) {
                throw new DomainError('conflict', 'presentation_cannot_go_back', index < 0 ? 'The presentation is at its start: there is no step to go back from' : `Step ${index + 1} can no longer be gone back from (a presentation keeps the state before its last ${maxBackSteps} steps): start again from the start`);
            }

            await this.rewind(point, index);
            return this.view();
        });
    }

    /** Puts the world back as it was when the presentation began: data, clock, events, fault rules, captures and inbox. */
    restart(): Promise<PresentationView> {

        return this.exclusive(async () => {

            await this.rewind(always(this.backPoints.get(0), 'the start'), 0);
            return this.view();
        });
    }

    /** Stops the receiver and removes the endpoints pointing at it; deletes the instance unless kept. */
    async close(keep: boolean): Promise<void> {

        await this.stepper.close();
        if (!keep) {
            await this.admin('DELETE', '');
        }
    }

    /** The presentation as its routes answer it. */
    view(): PresentationView {

        this.lastUsed = Date.now();
        const { scenario } = this;
        const deliveries = this.stepper.deliveries();
        return {
            id: this.id,
            name: scenario.name,
            description: scenario.description ?? null,
            file: this.file,
            instance: this.instance,
            actors: Object.entries(scenario.actors).map(([name, actor]) => ({ name, sub: actor.sub, admin: actor.admin })),
            steps: scenario.steps.map((step, index) => ({ step: index + 1, kind: step.kind, say: step.say ?? null, line: lineOf(step) })),
            position: this.played.length,
            played: this.played.map(({ result, shown, failure: failed }) => ({ ...result, shown: shown && bounded(shown), reason: failed?.reason ?? null, differences: failed?.differences ?? [] })),
            ended: this.ended(),
            message: this.played.at(-1)?.message ?? null,
            back: this.backPoints.has(this.played.length - 1),
            deliveries: deliveries.map((delivery, index) => ({ seq: index + 1, type: delivery.event?.type ?? null, event_id: delivery.event?.id ?? null, verified: delivery.verified, failure: delivery.failure, status: delivery.status })).slice(-maxShownDeliveries),
            captures: this.stepper.captures,
            expires_at: new Date(this.lastUsed + this.idleTtlMs).toISOString()
        };
    }

    private ended(): boolean {

        return this.played.length === this.scenario.steps.length || Boolean(this.played.at(-1)?.failure);
    }

    // One call at a time: a step played while another runs would interleave their requests.
    private async exclusive(call: () => Promise<PresentationView>): Promise<PresentationView> {

        if (this.busy) {
            throw new DomainError('conflict', 'presentation_busy', 'The presentation is playing a step: wait for its answer');
        }

        this.busy = true;
        try {
            return await call();
        }
        finally {
            this.busy = false;
        }
    }

    // Back to the state before a step: the snapshot restored, the fault rules the steps before it set, what was captured.
    private async rewind(point: BackPoint, index: number): Promise<void> {

        await this.admin('POST', '/restore', { snapshot_id: point.snapshot });
        // Fault rules are no part of a snapshot: those in force are the last the steps before it set (none at the start).
        const last = this.scenario.steps.slice(0, index).filter((step): step is FaultStep => step.kind === 'fault').at(-1);
        await this.admin('PUT', '/faults', last && 'set' in last.fault ? { rules: last.fault.set, seed: last.fault.seed } : { rules: [] });
        this.stepper.rewind(point.captures, point.deliveries);
        for (const key of [...this.backPoints.keys()].filter((candidate) => candidate > index)) {
            await this.forget(key);
        }

        this.played = this.played.slice(0, index);
    }

    private async snapshot(): Promise<string> {

        return String(fieldOf(await this.admin('POST', '/snapshots'), 'snapshot_id'));
    }

    // Lets a back point go, and the memory of its snapshot.
    private async forget(index: number): Promise<void> {

        const point = always(this.backPoints.get(index), 'a back point');
        this.backPoints.delete(index);
        await this.admin('DELETE', `/snapshots/${point.snapshot}`);
    }

    // An admin route of the presentation's instance; an answer other than 2xx is thrown as the route's own error.
    private async admin(method: string, path: string, payload?: unknown): Promise<unknown> {

        const authorization = `Bearer ${mintToken(this.server.app.localgate.secret, 'localgate-presentation', 3600, { admin: true })}`;
        // Its own bookkeeping, not a step of the story: the console's live log leaves it out unless asked.
        const headers = { authorization, [housekeepingHeader]: housekeepingValue };
        const res = await this.server.inject({ method, url: `/_instances/${this.instance}${path}`, headers, ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }) });
        const body = answerBody(res.payload, res.headers['content-type']);
        if (res.statusCode >= 300) {
            throw failure(res.statusCode, String(fieldOf(body, 'code')), `The presentation's instance ${this.instance}: ${String(fieldOf(body, 'message'))}`);
        }

        return body;
    }
}


// What a step shows, each body cut to maxShownChars of its JSON.
function bounded(shown: NonNullable<Played['shown']>): NonNullable<Played['shown']> {

    const cut = (value: unknown): unknown => {

        const text = JSON.stringify(value);
        return text.length > maxShownChars ? `${text.slice(0, maxShownChars)} … (cut: ${text.length} characters in all)` : value;
    };

    return { request: { ...shown.request, body: cut(shown.request.body) }, answer: { ...shown.answer, body: cut(shown.answer.body) } };
}


/** The presentations a server holds: at most maxPresentations, each closed once idle for the instances' idle time. */
export class Presentations {

    private readonly live = new Map<string, Presentation>();
    private starting = 0;
    private sweeper: NodeJS.Timeout | null = null;

    constructor(private readonly server: Server, private readonly idleTtlMs: number) {}

    async start(scenario: Scenario, file: string | null): Promise<Presentation> {

        await this.expire();
        // Those being made count: a start takes a while, and others may ask meanwhile.
        if (this.live.size + this.starting >= maxPresentations) {
            throw new DomainError('limit', 'presentation_limit_reached', `${maxPresentations} presentations are open on this server, the most it holds: end one (DELETE /_presentations/{id})`);
        }

        ++this.starting;
        const presentation = await Presentation.start(this.server, scenario, file, this.idleTtlMs).finally(() => --this.starting);
        this.live.set(presentation.id, presentation);
        // A failed sweep is logged and the next one runs: thrown from a timer, it would end the process.
        this.sweeper ??= setInterval(safely('presentations sweep', this.server.log.bind(this.server), () => this.expire()), Math.min(this.idleTtlMs, 60_000)).unref();
        return presentation;
    }

    /** The presentation an id names; a 404 presentation_not_found when none is open. */
    get(id: string): Presentation {

        const presentation = this.live.get(id);
        if (!presentation) {
            throw new DomainError('not_found', 'presentation_not_found', `No presentation ${id} is open: it ended, went idle for too long, or the server restarted`);
        }

        return presentation;
    }

    async end(id: string, keep: boolean): Promise<void> {

        const presentation = this.get(id);
        this.live.delete(id);
        await presentation.close(keep).catch(() => undefined);
    }

    /** Ends every presentation idle for the whole idle time (its instance expires with it); a failure is left to the next sweep. */
    async expire(now = Date.now()): Promise<void> {

        const idle = [...this.live.values()].filter((presentation) => now - presentation.lastUsed >= this.idleTtlMs);
        await Promise.all(idle.map((presentation) => this.end(presentation.id, false)));
    }

    /** Ends them all, as the server stops. */
    async closeAll(): Promise<void> {

        if (this.sweeper) {
            clearInterval(this.sweeper);
        }

        await Promise.all([...this.live.keys()].map((id) => this.end(id, true)));
    }
}
