import { JSONPath } from 'jsonpath-plus';

import { parseDurationMs } from '../durations';
import { DomainError } from '../errors';
import { always } from '../always';
import { fieldOf, thrownMessage } from '../thrown';
import type { ReceivedWebhook, WebhookReceiver } from '../webhook-receiver';
import { pathRefusal, placeholder, stepTitle, type Actor, type ClockStep, type EventStep, type FaultStep, type RequestStep, type Scenario, type Step, type StepKind, type WebhookStep } from './file';


// Plays a scenario's steps, in order, through a server's own routes: every request as an HTTP request (injected or
// sent), as its actor, with the answers checked, captured and substituted. It stops at the first step whose
// expectation is not met, and says which step, what was expected and what came.

/** A request the run makes, and what came back: the body parsed when it is JSON, else its text. */
export interface Exchange {
    method: string;
    url: string;
    headers: Record<string, string>;
    payload?: string;
}

export interface Answer {
    status: number;
    headers: Record<string, string | string[] | number | undefined>;
    body: unknown;
}

/** Where a run plays: how it sends a request, where the data set's API and admin routes are, and who it sends as. */
export interface RunTarget {
    send(exchange: Exchange): Promise<Answer>;
    /** The data set's base path: '' for the default one, /i/<id> for an instance. */
    basePath: string;
    /** An admin route of the data set: admin('clock') is /_clock, or /_instances/<id>/clock. */
    admin(name: string): string;
    /** A bearer token for an actor, minted with the server's secret. */
    token(actor: Actor): string;
    /** The receiver the run's webhook endpoints point at, started when the scenario has some. */
    receiver(): Promise<WebhookReceiver>;
}

/** One difference between what a step expected and what came: where (a JSONPath), and both values. */
export interface Difference {
    path: string;
    expected: unknown;
    got: unknown;
}

export interface StepResult {
    step: number;
    kind: StepKind;
    say: string | null;
    /** What the step did in one line: `GET /v1/pay/wallet 200`, `clock +2d: pay.transaction.completed 1`. */
    line: string;
    ok: boolean;
    ms: number;
}

export interface RunFailure {
    step: number;
    say: string | null;
    line: string;
    /** Why, in one line, and the differences below it. */
    reason: string;
    differences: Difference[];
}

export interface RunResult {
    name: string;
    ok: boolean;
    steps: StepResult[];
    failure: RunFailure | null;
    /** What a test that ran the scenario fails with: the step, the reason and the differences, one a line. */
    message: string | null;
    /** What the steps captured, by name. */
    captures: Record<string, unknown>;
    /** The events written to the data set while the run ran, in its order: those its steps caused. */
    events: EventSeen[];
}

export interface EventSeen {
    id: string;
    type: string;
    created_at: string;
}

/** A step's expectation not met: the run stops there. */
class Unmet extends Error {

    constructor(reason: string, readonly line: string, readonly differences: Difference[] = []) {

        super(reason);
    }
}

// The most differences a failure lists: the first are what a reader needs.
const maxDifferences = 20;

/** The longest a run may take, of the wall clock: a step that would start after it fails instead. */
export const maxRunMs = 5 * 60_000;

/** How a run reads and when it stops: the events it asks for a page (1 to 1000), its deadline, and a signal that ends it. */
export interface RunOptions {
    eventPage?: number;
    runMs?: number;
    /** Aborted when whoever asked for the run has gone: no step starts after it. */
    signal?: AbortSignal;
}


/** Runs a scenario's steps on a target; resolves to what each did, stopping at the first that failed. */
export async function runScenario(scenario: Scenario, target: RunTarget, options: RunOptions = {}): Promise<RunResult> {

    const stepper = new Stepper(scenario, target, options);
    const steps: StepResult[] = [];
    try {
        await stepper.open();
        for (const index of scenario.steps.keys()) {
            const played = await stepper.play(index);
            steps.push(played.result);
            if (played.failure) {
                return { name: scenario.name, ok: false, steps, failure: played.failure, message: played.message, captures: stepper.captures, events: await stepper.caused() };
            }
        }

        return { name: scenario.name, ok: true, steps, failure: null, message: null, captures: stepper.captures, events: await stepper.caused() };
    }
    finally {
        await stepper.close();
    }
}


/** What a request step sent and what came, as a presenter shows them: the actor's name, never their token. */
export interface Shown {
    request: { method: string; path: string; as: string | null; body: unknown };
    answer: { status: number; body: unknown };
}

/** One step played: its result, why it failed (null when it did not), and for a request what it sent and got. */
export interface Played {
    result: StepResult;
    failure: RunFailure | null;
    message: string | null;
    shown: Shown | null;
}


/**
 * A scenario played one step at a time on a target: runScenario plays every step in a row, a presentation one at
 * each call. open() sets the run's webhook endpoints to a receiver of its own; close() removes them and stops it.
 */
export class Stepper {

    /** What the steps captured, by name. */
    captures: Record<string, unknown> = {};
    private readonly run: Run;
    private mark: { last: string | null } | null | undefined;
    // The deliveries the run's steps count (a rewind drops those of the steps it undid), and how many of the
    // receiver's it has taken.
    private inbox: ReceivedWebhook[] = [];
    private pulled = 0;

    constructor(readonly scenario: Scenario, target: RunTarget, private readonly options: RunOptions = {}) {

        this.run = { scenario, target, stepper: this, receiver: null, eventPage: options.eventPage ?? 1000, runMs: options.runMs ?? maxRunMs, deadline: Date.now() + (options.runMs ?? maxRunMs) };
    }

    /** Marks the event log's end, and points the scenario's webhooks at a receiver of the run's own. */
    async open(): Promise<void> {

        const { run, scenario } = this;
        this.mark = await eventsAfter(run, null);
        if (scenario.webhooks.length) {
            const receiver = await run.target.receiver();
            run.receiver = receiver;
            const endpoints = scenario.webhooks.map((endpoint) => ({ ...endpoint, url: receiver.url, secret: receiver.secret }));
            await admin(run, 'PUT', 'webhooks', { endpoints }, 'webhooks').catch((err: Error) => {

                // What the data set refuses of the endpoints (a host WEBHOOK_HOSTS does not allow) is the file's to change.
                throw new DomainError('unprocessable', 'scenario_webhooks_refused', `The scenario's webhooks cannot be set: ${err.message}`, 'webhooks');
            });
        }
    }

    /** Plays the step at an index (from 0): what it did, or where its expectation was not met. */
    async play(index: number): Promise<Played> {

        const { run, options } = this;
        const step = always(this.scenario.steps[index], 'the step played');
        const started = Date.now();
        const say = step.say ?? null;
        const shown: { value: Shown | null } = { value: null };
        try {
            if (options.signal?.aborted) {
                throw new Unmet('the run was stopped before this step: whoever asked for it went away', lineOf(step));
            }

            if (started > run.deadline) {
                throw new Unmet(`the run took longer than ${run.runMs / 1000} s, the most a run may, before this step began`, lineOf(step));
            }

            const line = await play(run, step, shown);
            return { result: { step: index + 1, kind: step.kind, say, line, ok: true, ms: Date.now() - started }, failure: null, message: null, shown: shown.value };
        }
        catch (err) {
            const unmet = err instanceof Unmet ? err : new Unmet(thrownMessage(err), lineOf(step));
            const failure = { step: index + 1, say, line: unmet.line, reason: unmet.message, differences: unmet.differences };
            return { result: { step: index + 1, kind: step.kind, say, line: unmet.line, ok: false, ms: Date.now() - started }, failure, message: failureMessage(index, step, failure), shown: shown.value };
        }
    }

    /** The deliveries the run's steps count, in arrival order. */
    deliveries(): ReceivedWebhook[] {

        const fresh = this.run.receiver?.deliveries.slice(this.pulled) ?? [];
        this.pulled += fresh.length;
        this.inbox.push(...fresh);
        return this.inbox;
    }

    /** Puts the run back as it stood before a step: its captures, and the first deliveries it had counted. */
    rewind(captures: Record<string, unknown>, deliveries: number): void {

        this.deliveries();
        this.inbox = this.inbox.slice(0, deliveries);
        this.captures = { ...captures };
    }

    /** The events written to the data set since open(), in its order. */
    async caused(): Promise<EventSeen[]> {

        const after = this.mark && await eventsAfter(this.run, this.mark.last);
        return after ? after.events : [];
    }

    /** Removes the run's endpoints and stops its receiver, so that nothing is sent to a port that closed. */
    async close(): Promise<void> {

        const { run } = this;
        if (run.receiver) {
            await admin(run, 'PUT', 'webhooks', { endpoints: [] }, 'remove the run\'s webhook endpoints').catch(() => undefined);
            await run.receiver.close();
            run.receiver = null;
        }
    }
}


interface Run {
    scenario: Scenario;
    target: RunTarget;
    stepper: Stepper;
    receiver: WebhookReceiver | null;
    eventPage: number;
    runMs: number;
    deadline: number;
}


function play(run: Run, step: Step, shown: { value: Shown | null }): Promise<string> | string {

    switch (step.kind) {
        case 'request': return request(run, step, shown);
        case 'clock': return clock(run, step);
        case 'event': return event(run, step);
        case 'webhook': return webhook(run, step);
        case 'fault': return fault(run, step);
        case 'say': return lineOf(step);
    }
}


/**
 * The data set's events after one (null: from the oldest kept), every page, and the last of them (the one given when
 * none follows); null when the log cannot be read (an instance deleted as the run ran), which no step depends on.
 */
async function eventsAfter(run: Run, after: string | null): Promise<{ events: EventSeen[]; last: string | null } | null> {

    const events: EventSeen[] = [];
    let last = after;
    try {
        for (;;) {
            const query = new URLSearchParams({ limit: String(run.eventPage), ...(last === null ? {} : { after: last }) });
            const { data } = await admin<{ data: EventSeen[] }>(run, 'GET', `events?${query.toString()}`, undefined, 'read the events');
            events.push(...data.map(({ id, type, created_at: createdAt }) => ({ id, type, created_at: createdAt })));
            last = data.at(-1)?.id ?? last;
            if (data.length < run.eventPage) {
                return { events, last };
            }
        }
    }
    catch {
        return null;
    }
}


/** A step in one line before it ran: its request, or its kind. */
export function lineOf(step: Step): string {

    switch (step.kind) {
        case 'request': return `${step.request.method} ${step.request.path}`;
        case 'clock': return 'advance' in step.clock ? `clock +${step.clock.advance}` : `clock ${step.clock.now}`;
        case 'event': return `event ${step.event.type}`;
        case 'webhook': return `webhook ${step.webhook.type}`;
        case 'fault': return 'set' in step.fault ? `faults set (${step.fault.set.length})` : 'faults cleared';
        case 'say': return step.say;
    }
}


async function request(run: Run, step: RequestStep, shown: { value: Shown | null }): Promise<string> {

    const { target, scenario } = run;
    const { captures } = run.stepper;
    const spec = substitute(step.request, captures);
    // A captured value may have made the path another one: it is held to the data set's API as sent.
    const refused = pathRefusal(spec.path);
    if (refused !== null) {
        throw new Unmet(`the path ${spec.path} ${refused}`, `${spec.method} ${spec.path}`);
    }

    const query = new URLSearchParams(Object.entries(spec.query ?? {}).map(([key, value]): [string, string] => [key, String(value)])).toString();
    const path = `${spec.path}${query ? `${spec.path.includes('?') ? '&' : '?'}${query}` : ''}`;
    const headers: Record<string, string> = { ...spec.headers };
    if (step.as !== undefined) {
        headers.authorization = `Bearer ${target.token(always(scenario.actors[step.as], 'the actor a step names'))}`;
    }

    const exchange: Exchange = { method: spec.method, url: `${target.basePath}${path}`, headers };
    if (spec.body !== undefined) {
        exchange.payload = JSON.stringify(spec.body);
        headers['content-type'] ??= 'application/json';
    }

    const answer = await target.send(exchange);
    shown.value = { request: { method: spec.method, path, as: step.as ?? null, body: spec.body ?? null }, answer: { status: answer.status, body: answer.body } };
    const line = `${spec.method} ${spec.path} ${answer.status}`;
    const expect = substitute(step.expect ?? {}, captures);
    if (expect.status !== undefined && answer.status !== expect.status) {
        throw new Unmet(`expected status ${expect.status}, got ${answer.status}${errorText(answer.body)}`, line, bodyDifferences(expect.body, answer.body));
    }

    for (const [name, value] of Object.entries(expect.headers ?? {})) {
        const got = answer.headers[name.toLowerCase()];
        const text = got === undefined ? undefined : String(got);
        if (text !== value) {
            throw new Unmet(`expected the header ${name}: ${value}, got ${text === undefined ? 'none' : text}`, line, [{ path: `headers.${name.toLowerCase()}`, expected: value, got: text ?? null }]);
        }
    }

    if (expect.body !== undefined) {
        const differences = bodyDifferences(expect.body, answer.body);
        if (differences.length) {
            throw new Unmet(`the answer's body is not what was expected (${differences.length === maxDifferences ? `at least ${maxDifferences}` : differences.length} difference${differences.length === 1 ? '' : 's'})`, line, differences);
        }
    }

    for (const [name, expression] of Object.entries(step.capture ?? {})) {
        const found = answer.body !== null && typeof answer.body === 'object' ? jsonPathFirst(expression, answer.body) : undefined;
        if (found === undefined) {
            throw new Unmet(`capture ${name}: ${expression} matched nothing in the answer`, line);
        }

        captures[name] = found;
    }

    return line;
}


async function clock(run: Run, step: ClockStep): Promise<string> {

    const moved = await admin<{ applied: Record<string, number>; attempted: number }>(run, 'PUT', 'clock', step.clock, lineOf(step));
    const counts = Object.entries(moved.applied).map(([type, count]) => `${type} ${count}`);
    const line = `${lineOf(step)}: ${counts.length ? counts.join(', ') : 'nothing applied'}${moved.attempted ? `, webhook attempts ${moved.attempted}` : ''}`;
    const differences: Difference[] = [];
    for (const [type, count] of Object.entries(step.expect?.applied ?? {})) {
        if ((moved.applied[type] ?? 0) !== count) {
            differences.push({ path: `$.applied['${type}']`, expected: count, got: moved.applied[type] ?? 0 });
        }
    }

    if (step.expect?.attempted !== undefined && moved.attempted !== step.expect.attempted) {
        differences.push({ path: '$.attempted', expected: step.expect.attempted, got: moved.attempted });
    }

    if (differences.length) {
        throw new Unmet('the move did not apply what was expected', line, differences);
    }

    return line;
}


async function event(run: Run, step: EventStep): Promise<string> {

    const spec = substitute(step.event, run.stepper.captures);
    let after: string | undefined;
    let seen = 0;
    let closest: Difference[] | null = null;
    // The log is bounded: EVENTS_KEPT events of each namespace, and those a delivery waits for.
    for (;;) {
        const query = new URLSearchParams({ type: spec.type, limit: String(run.eventPage), ...(after === undefined ? {} : { after }) });
        const { data } = await admin<{ data: { id: string; data: unknown }[] }>(run, 'GET', `events?${query.toString()}`, undefined, lineOf(step));
        for (const found of data) {
            const differences = bodyDifferences(spec.data ?? {}, found.data);
            if (!differences.length) {
                return `event ${spec.type} ${found.id}`;
            }

            closest = closest && closest.length <= differences.length ? closest : differences;
        }

        seen += data.length;
        after = data.at(-1)?.id;
        if (data.length < run.eventPage) {
            break;
        }
    }

    throw new Unmet(seen ? `none of the ${seen} ${spec.type} events of the log matches (the closest differs as below)` : `the event log holds no ${spec.type} event`, lineOf(step), closest ?? []);
}


async function webhook(run: Run, step: WebhookStep): Promise<string> {

    const spec = substitute(step.webhook, run.stepper.captures);
    const receiver = run.receiver;
    if (!receiver) {
        throw new Unmet('the scenario sets no webhooks, so no delivery can come: add webhooks: [{ types: [...] }] to it', lineOf(step));
    }

    const deadline = Math.min(Date.now() + parseDurationMs(spec.within), run.deadline);
    let closest: Difference[] | null = null;
    let looked = 0;
    for (;;) {
        const deliveries = run.stepper.deliveries();
        for (const delivery of deliveries.slice(looked)) {
            if (delivery.event?.type === spec.type) {
                const differences = bodyDifferences(spec.data ?? {}, delivery.event.data);
                if (!differences.length) {
                    if (!delivery.verified) {
                        throw new Unmet(`the ${spec.type} delivery did not verify: ${delivery.failure}`, lineOf(step));
                    }

                    return `webhook ${spec.type} ${delivery.event.id} verified`;
                }

                closest = closest && closest.length <= differences.length ? closest : differences;
            }
        }

        looked = deliveries.length;
        const left = deadline - Date.now();
        if (left <= 0) {
            throw new Unmet(`no ${spec.type} delivery that matches came within ${spec.within} (${looked} deliveries came in all)`, lineOf(step), closest ?? []);
        }

        await receiver.waitFor(receiver.deliveries.length + 1, { timeoutMs: left }).catch(() => undefined);
    }
}


async function fault(run: Run, step: FaultStep): Promise<string> {

    if ('set' in step.fault) {
        await admin(run, 'PUT', 'faults', { rules: step.fault.set, ...(step.fault.seed === undefined ? {} : { seed: step.fault.seed }) }, lineOf(step));
    }
    else {
        await admin(run, 'DELETE', 'faults', undefined, lineOf(step));
    }

    return lineOf(step);
}


// A request to an admin route of the data set, as an admin; an answer other than 2xx stops the run with its message.
async function admin<T = unknown>(run: Run, method: string, name: string, body: unknown, line: string): Promise<T> {

    const headers: Record<string, string> = { authorization: `Bearer ${run.target.token({ sub: 'localgate-scenario', admin: true })}` };
    const exchange: Exchange = { method, url: run.target.admin(name), headers };
    if (body !== undefined) {
        exchange.payload = JSON.stringify(body);
        headers['content-type'] = 'application/json';
    }

    const answer = await run.target.send(exchange);
    if (answer.status >= 300) {
        throw new Unmet(`${method} ${exchange.url.replace(/\?.*$/, '')} answered ${answer.status}${errorText(answer.body)}`, line);
    }

    // An admin route's answer, as its schema in the server says it is.
    return answer.body as T;
}


function errorText(body: unknown): string {

    const message = fieldOf(body, 'message');
    return typeof message === 'string' ? `: ${message}` : '';
}


/** The value a JSONPath finds first in a body, or undefined when it finds nothing. */
function jsonPathFirst(path: string, json: object): unknown {

    return JSONPath<unknown[]>({ path, json, eval: 'safe', wrap: true })[0];
}


/**
 * A value with every {{name}} replaced: a string that is one placeholder alone becomes the captured value itself. It
 * keeps the shape it was given: what a step holds is read by the step's own types once its captures are in.
 */
export function substitute<T>(value: T, captures: Readonly<Record<string, unknown>>): T;
export function substitute(value: unknown, captures: Readonly<Record<string, unknown>>): unknown {

    if (typeof value === 'string') {
        const whole = /^\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}$/.exec(value);
        if (whole) {
            return captures[String(whole[1])];
        }

        return value.replace(placeholder, (_, name: string) => {

            const captured = captures[name];
            return typeof captured === 'string' ? captured : JSON.stringify(captured);
        });
    }

    if (Array.isArray(value)) {
        return value.map((item) => substitute(item, captures));
    }

    if (value !== null && typeof value === 'object') {
        return Object.fromEntries(Object.entries(value).map(([key, child]) => [substitute(key, captures), substitute(child, captures)]));
    }

    return value;
}


/**
 * Where an answer differs from what was expected of it: every key of an expected object must hold what it expects
 * (other keys are ignored), an expected list is matched item by item from the first (more items are ignored), and
 * anything else must be equal. Empty when it matches; at most maxDifferences.
 */
export function bodyDifferences(expected: unknown, got: unknown): Difference[] {

    if (expected === undefined) {
        return [];
    }

    const differences: Difference[] = [];
    const open: { path: string; expected: unknown; got: unknown }[] = [{ path: '$', expected, got }];
    let top = open.pop();
    while (top !== undefined && differences.length < maxDifferences) {
        const { path, expected: want, got: have } = top;
        if (Array.isArray(want)) {
            if (!Array.isArray(have) || have.length < want.length) {
                differences.push({ path, expected: want, got: have ?? null });
            }
            else {
                for (let i = want.length - 1; i >= 0; --i) {
                    open.push({ path: `${path}[${i}]`, expected: want[i], got: have[i] });
                }
            }
        }
        else if (want !== null && typeof want === 'object') {
            if (have === null || typeof have !== 'object' || Array.isArray(have)) {
                differences.push({ path, expected: want, got: have ?? null });
            }
            else {
                for (const key of Object.keys(want).reverse()) {
                    const child = /^[A-Za-z_]\w*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
                    open.push({ path: child, expected: fieldOf(want, key), got: Object.hasOwn(have, key) ? fieldOf(have, key) : undefined });
                }
            }
        }
        else if (want !== have) {
            differences.push({ path, expected: want, got: have === undefined ? '(absent)' : have });
        }

        top = open.pop();
    }

    return differences;
}


/** A failure in the words a test fails with: the step, the reason, then each difference on a line of its own. */
function failureMessage(index: number, step: Step, failure: RunFailure): string {

    const lines = [`${stepTitle(index, step)} failed: ${failure.line}: ${failure.reason}`];
    for (const difference of failure.differences) {
        lines.push(`  ${difference.path}: expected ${JSON.stringify(difference.expected)}, got ${JSON.stringify(difference.got)}`);
    }

    return lines.join('\n');
}
