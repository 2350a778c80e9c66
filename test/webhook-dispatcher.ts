import { setTimeout as sleep } from 'node:timers/promises';

import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { Clock } from '../lib/record-context';
import { Loop, Scheduler, Timeline, type OutboundCall, type OutboundOutcome, type OutboundSender } from '../lib/data-set';
import type { TimedStore } from '../lib/transitions';
import { DeliveryJournal, keptBodyBytes, keptExchange, keptHeaderChars, keptHeaders, matchesDelivery, type DeliveryEntry } from '../lib/data-set/deliveries';
import { Dispatcher, type DispatcherParts } from '../lib/data-set/dispatcher';
import { Leases, type Claimed } from '../lib/data-set/leases';
import { matchesType, type AttemptOutcome, type ClaimedAttempt, type HeldLease, type StoredEndpoint, type StoredEvent } from '../lib/outbox';
import { DomainError } from '../lib/errors';
import { JournalBudget } from '../lib/data-set/journal';
import type { EventLog } from '../lib/storage/engine';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const start = new Date('2030-01-01T00:00:00.000Z');
const minute = 60_000;


function endpoint(id: string, ordinal: number, retry: number[] = []): StoredEndpoint {

    return { id, ordinal, url: `http://127.0.0.1:9/${id}`, types: null, secret: `whsec_${Buffer.alloc(32).toString('base64')}`, signing_clock: 'instance', retry_schedule: retry, created_at: start.toISOString(), delivered: 0, failed: 0,
        disabled_at: null, disabled_reason: null, given_up_in_a_row: 0, previous_secret: null, previous_secret_until: null };
}


function event(position: number): StoredEvent {

    return { position, id: `e${position}`, type: 'pay.transaction.created', created_at: start.toISOString(), data: '{}' };
}


// An attempt due, not claimed yet: a claim gives it its lease.
type DueAttempt = Omit<ClaimedAttempt, 'leased_until'>;


// An event log in memory: the attempts it holds due, claimed, renewed and recorded as the engines' are.
class MemoryLog implements EventLog {

    readonly namespace = 'memory';
    due: DueAttempt[] = [];
    recorded: AttemptOutcome[] = [];
    // Due instants it reports that nobody can claim (another process leases them).
    leasedElsewhere: Date | null = null;
    failClaim = false;
    failRecord = false;
    // What record answers: the given-up deliveries in a row before, or null when another process recorded it first.
    inARow: number | null = 0;
    counts: [string, number, string | null][] = [];
    // Whether a failed attempt's next one falls due again here, as the engines' do.
    retrying = false;
    // Each renewal asked for: the leases held and the lease asked; the deliveries it keeps (all unless told).
    renewals: [HeldLease[], string][] = [];
    keeps: (lease: HeldLease) => boolean = () => true;
    failRenewal = false;
    // What a renewal waits for before it answers.
    renewing: Promise<void> = Promise.resolve();
    private readonly claimed = new Map<string, ClaimedAttempt>();

    list(): Promise<StoredEvent[]> {

        return Promise.resolve([]);
    }

    positionOf(): Promise<number | null> {

        return Promise.resolve(null);
    }

    lastPosition(): Promise<number> {

        return Promise.resolve(0);
    }

    replaceEndpoints(): Promise<void> {

        return Promise.resolve();
    }

    endpoints(): Promise<StoredEndpoint[]> {

        return Promise.resolve([]);
    }

    nextDue(): Promise<Date | null> {

        const dues = this.due.map(({ due_at: due }) => Date.parse(due));
        const earliest = dues.length ? new Date(Math.min(...dues)) : null;
        return Promise.resolve(this.leasedElsewhere ?? earliest);
    }

    countDue(until: Date): Promise<number> {

        return Promise.resolve(this.due.filter(({ due_at: due }) => Date.parse(due) <= until.getTime()).length);
    }

    claimDue(until: Date, limit: number, leaseUntil: Date): Promise<ClaimedAttempt[]> {

        if (this.failClaim) {
            return Promise.reject(new Error('claim failed'));
        }

        const due = this.due.filter(({ due_at: at }) => Date.parse(at) <= until.getTime()).slice(0, limit);
        this.due = this.due.filter((attempt) => !due.includes(attempt));
        const claimed = due.map((attempt) => ({ ...attempt, leased_until: leaseUntil.toISOString() }));
        claimed.forEach((attempt) => this.claimed.set(`${attempt.event.position} ${attempt.endpoint.id}`, attempt));
        return Promise.resolve(claimed);
    }

    async renewLeases(held: HeldLease[], leaseUntil: Date): Promise<HeldLease[]> {

        this.renewals.push([held, leaseUntil.toISOString()]);
        await this.renewing;
        if (this.failRenewal) {
            throw new Error('renewal failed');
        }

        return held.filter(this.keeps);
    }

    record(outcome: AttemptOutcome): Promise<number | null> {

        if (this.failRecord) {
            return Promise.reject(new Error('record failed'));
        }

        this.recorded.push(outcome);
        const claimed = this.claimed.get(`${outcome.position} ${outcome.endpoint_id}`)!;
        if (this.retrying && outcome.next_due_at !== null) {
            this.due.push({ ...claimed, attempt: outcome.attempt + 1, due_at: outcome.next_due_at });
        }

        return Promise.resolve(this.inARow);
    }

    // The endpoints' state is the engines' (test/sqlite-events.ts, test/postgres-events.ts).
    setDisabled(): Promise<void> {

        return Promise.resolve();
    }

    setGivenUpInARow(endpointId: string, count: number, disableAt: string | null): Promise<void> {

        this.counts.push([endpointId, count, disableAt]);
        return Promise.resolve();
    }

    rotateSecret(): Promise<void> {

        return Promise.resolve();
    }

    resend(): Promise<ClaimedAttempt[]> {

        return Promise.resolve([]);
    }

    recover(): Promise<ClaimedAttempt[]> {

        return Promise.resolve([]);
    }
}


class CountingSender implements OutboundSender {

    calls: OutboundCall[] = [];
    statuses: (number | null)[] = [];

    send(call: OutboundCall): Promise<OutboundOutcome> {

        this.calls.push(call);
        const [status = 200] = this.statuses.splice(0, 1);
        return Promise.resolve({ status, error: status === null ? 'connection_refused' : null, duration_ms: 1, sent: call.headers, answer: status === null ? null : { headers: [], body: Buffer.alloc(0) } });
    }

    close(): void {

        this.calls = [];
    }
}


// A sender whose receivers take a while to answer.
class SlowSender extends CountingSender {

    constructor(private readonly answerMs: number) {

        super();
    }

    override async send(call: OutboundCall): Promise<OutboundOutcome> {

        await sleep(this.answerMs);
        return await super.send(call);
    }
}


function dispatcherOver(clock: Clock): { dispatcher: Dispatcher; sender: CountingSender; failures: object[]; parts: DispatcherParts; scheduler: Scheduler; loop: Loop } {

    const failures: object[] = [];
    const log = (_tags: string[], data: object) => failures.push(data);
    const scheduler = new Scheduler(clock, log);
    const loop = new Loop(scheduler, log);
    const sender = new CountingSender();
    const parts = { clock, loop, sender, deliveries: new DeliveryJournal(100, new JournalBudget(2 ** 20)), faults: () => null, log, timeoutMs: 100, leaseMarginMs: 70_000, disableAfter: 5 };
    return { dispatcher: new Dispatcher(parts), sender, failures, parts, scheduler, loop };
}


describe('the webhook dispatcher', () => {

    it('sends in due order across logs: the instant, then the event\'s position, then the endpoint\'s place', async () => {

        const clock = new Clock(start);
        const { dispatcher, sender, loop } = dispatcherOver(clock);
        const first = new MemoryLog();
        const second = new MemoryLog();
        const [a, b] = [endpoint('a', 0), endpoint('b', 1)];
        const at = (ms: number) => new Date(start.getTime() + ms).toISOString();
        first.due = [{ event: event(2), endpoint: a, attempt: 1, due_at: at(0) }, { event: event(3), endpoint: a, attempt: 1, due_at: at(0) }, { event: event(9), endpoint: b, attempt: 2, due_at: at(-5) }];
        second.due = [{ event: event(1), endpoint: a, attempt: 1, due_at: at(5) }, { event: event(2), endpoint: b, attempt: 1, due_at: at(0) }, { event: event(1), endpoint: b, attempt: 1, due_at: at(5) }];
        expect(await dispatcher.watch(() => Promise.resolve([first, second]))).to.equal(4);
        // Each endpoint's attempts in due order; the endpoints side by side.
        expect(sender.calls.map(({ url, body }) => [url.slice(-1), JSON.parse(body).id])).to.equal([['b', 'e9'], ['a', 'e2'], ['b', 'e2'], ['a', 'e3']]);
        expect(sender.calls[0]!.headers['webhook-timestamp']).to.equal('1893455999');
        const timeline = new Timeline(clock, loop, () => undefined);
        const { attempted, remaining } = await dispatcher.during((stops) => timeline.move({ advance: 5 }, stops));
        expect([attempted, remaining]).to.equal([2, 0]);
        expect(sender.calls.slice(4).map(({ url }) => url.slice(-1))).to.equal(['a', 'b']);
        dispatcher.close();
    });

    it('counts an endpoint\'s given-up deliveries in every log, disabling it at the bound, unless another process recorded the attempt', async () => {

        const clock = new Clock(start);
        const { dispatcher, sender } = dispatcherOver(clock);
        sender.statuses = [500, 500, 500];
        const [one, two] = [new MemoryLog(), new MemoryLog()];
        await dispatcher.watch(() => Promise.resolve([one, two]));
        const givenUp = (position: number): DueAttempt => ({ event: event(position), endpoint: endpoint('a', 0), attempt: 1, due_at: start.toISOString() });

        one.inARow = 4;
        one.due = [givenUp(1)];
        await dispatcher.flush();
        expect([one.counts, two.counts]).to.equal([[['a', 5, start.toISOString()]], [['a', 5, start.toISOString()]]]);

        one.inARow = null;
        one.due = [givenUp(2)];
        await dispatcher.flush();
        expect(two.counts.length).to.equal(1);

        one.inARow = 1;
        one.due = [givenUp(3)];
        await dispatcher.flush();
        expect(two.counts.at(-1)).to.equal(['a', 2, null]);
        dispatcher.close();
    });

    it('makes a move\'s attempts instant by instant across logs: a retry due before a later attempt is made before it', async () => {

        const clock = new Clock(start);
        const { dispatcher, sender, loop } = dispatcherOver(clock);
        const [first, second] = [new MemoryLog(), new MemoryLog()];
        first.retrying = true;
        const at = (ms: number) => new Date(start.getTime() + ms).toISOString();
        first.due = [{ event: event(1), endpoint: endpoint('a', 0, [1000]), attempt: 1, due_at: at(0) }];
        second.due = [{ event: event(2), endpoint: endpoint('a', 0), attempt: 1, due_at: at(5000) }, { event: event(3), endpoint: endpoint('b', 1), attempt: 1, due_at: at(500) }];
        sender.statuses.push(500);
        await dispatcher.watch(() => Promise.resolve([first, second]), false);
        const timeline = new Timeline(clock, loop, () => undefined);
        const { attempted, remaining } = await dispatcher.during((stops) => timeline.move({ advance: 10_000 }, stops));
        expect([attempted, remaining]).to.equal([4, 0]);
        expect(sender.calls.map(({ url, body }) => [url.slice(-1), JSON.parse(body).id])).to.equal([['a', 'e1'], ['b', 'e3'], ['a', 'e1'], ['a', 'e2']]);
        expect(first.recorded.map(({ attempt, delivered }) => [attempt, delivered])).to.equal([[1, false], [2, true]]);
        dispatcher.close();
    });

    it('starts no pass asked for before a move once the move holds the dispatcher: its walk makes the attempts, after the transitions due before them', async () => {

        const clock = new Clock(start);
        const { dispatcher, sender, loop } = dispatcherOver(clock);
        const memory = new MemoryLog();
        await dispatcher.watch(() => Promise.resolve([memory]), false);
        let release = (): void => undefined;
        const held = new Promise<void>((resolve) => {

            release = resolve;
        });
        const send = sender.send.bind(sender);
        sender.send = async (call) => {

            await held;
            return await send(call);
        };

        // One pass sends, held; a second waits behind it as the move begins.
        memory.due = [{ event: event(1), endpoint: endpoint('a', 0), attempt: 1, due_at: start.toISOString() }];
        dispatcher.notice();
        await sleep(1);
        memory.due.push({ event: event(2), endpoint: endpoint('a', 0), attempt: 1, due_at: new Date(start.getTime() + 10 * minute).toISOString() });
        void dispatcher.flush();
        const sentAtTransition: number[] = [];
        const timeline = new Timeline(clock, loop, () => undefined);
        let pending = true;
        const transition: TimedStore = {
            nextDue: () => Promise.resolve(pending ? new Date(start.getTime() + 5 * minute) : null),
            applyDue: () => {

                pending = false;
                sentAtTransition.push(sender.calls.length);
                return Promise.resolve([{ type: 'pay.transaction.completed' as const, id: 't', due: new Date(start.getTime() + 5 * minute).toISOString() }]);
            }
        };
        await timeline.watch(() => Promise.resolve([transition]));
        const moving = dispatcher.during((stops) => timeline.move({ advance: 20 * minute }, stops));
        release();
        const { moved, attempted } = await moving;
        expect([moved.counts, attempted]).to.equal([{ 'pay.transaction.completed': 1 }, 2]);
        // The transition at 5 minutes came before the attempt due at 10, which the pass asked for earlier did not make.
        expect(sentAtTransition).to.equal([1]);
        expect(sender.calls.length).to.equal(2);
        timeline.close();
        dispatcher.close();
    });

    it('ends a walk\'s attempts at those it cannot claim, and at a claim that fails, which it logs', async () => {

        const clock = new Clock(start);
        const { dispatcher, sender, loop, failures } = dispatcherOver(clock);
        const memory = new MemoryLog();
        await dispatcher.watch(() => Promise.resolve([memory]), false);
        const timeline = new Timeline(clock, loop, () => undefined);
        // Due, but leased by another process: the walk does not wait for it.
        memory.leasedElsewhere = start;
        expect(await dispatcher.during((stops) => timeline.move({ advance: 1000 }, stops))).to.include({ attempted: 0, remaining: 0 });

        // A claim that fails ends this walk's attempts; the transition after it is still applied.
        memory.leasedElsewhere = null;
        memory.failClaim = true;
        memory.due = [{ event: event(1), endpoint: endpoint('a', 0), attempt: 1, due_at: clock.now().toISOString() }];
        let pending = true;
        const due = new Date(clock.now().getTime() + 500);
        const transition: TimedStore = {
            nextDue: () => Promise.resolve(pending ? due : null),
            applyDue: (until) => {

                pending = false;
                return Promise.resolve([{ type: 'pay.transaction.completed' as const, id: 't', due: until.toISOString() }]);
            }
        };
        await timeline.watch(() => Promise.resolve([transition]));
        const { moved, attempted } = await dispatcher.during((stops) => timeline.move({ advance: 1000 }, stops));
        expect([moved.counts, attempted]).to.equal([{ 'pay.transaction.completed': 1 }, 0]);
        expect(failures).to.equal([{ task: 'webhook deliveries', type: 'Error', at: (failures[0] as { at: string[] }).at }]);

        // Closed, a dispatcher's walk makes nothing.
        memory.failClaim = false;
        dispatcher.close();
        expect(await dispatcher.during((stops) => timeline.move({ advance: 1000 }, stops))).to.include({ attempted: 0 });
        expect(sender.calls.length).to.equal(0);
        timeline.close();
    });

    it('makes the attempts due by a move\'s target whatever became of its transitions, and passes the failure on', async () => {

        const clock = new Clock(start);
        const { dispatcher, sender, loop } = dispatcherOver(clock);
        const memory = new MemoryLog();
        await dispatcher.watch(() => Promise.resolve([memory]));
        // Due after the transition that fails: the walk still reaches it.
        memory.due = [{ event: event(1), endpoint: endpoint('a', 0), attempt: 1, due_at: new Date(start.getTime() + 90 * minute).toISOString() }];
        const timeline = new Timeline(clock, loop, () => undefined);
        await timeline.watch(() => Promise.resolve([{ nextDue: () => Promise.resolve(new Date(start.getTime() + 60 * minute)), applyDue: () => Promise.reject(new Error('CHECK constraint failed')) }]));
        await expect(dispatcher.during((stops) => timeline.move({ advance: 120 * minute }, stops))).to.reject(DomainError, /could not be applied/);
        expect(sender.calls.length).to.equal(1);
        expect(await dispatcher.flush()).to.equal(0);
        timeline.close();
        dispatcher.close();
    });

    it('logs a failed pass and a failed record instead of throwing, and goes on with the next attempt', async () => {

        const clock = new Clock(start);
        const { dispatcher, sender, failures } = dispatcherOver(clock);
        const memory = new MemoryLog();
        memory.failClaim = true;
        expect(await dispatcher.watch(() => Promise.resolve([memory]))).to.equal(0);
        expect(failures).to.equal([{ task: 'webhook deliveries', type: 'Error', at: (failures[0] as { at: string[] }).at }]);

        memory.failClaim = false;
        memory.failRecord = true;
        memory.due = [{ event: event(1), endpoint: endpoint('a', 0), attempt: 1, due_at: start.toISOString() }, { event: event(2), endpoint: endpoint('a', 0), attempt: 1, due_at: start.toISOString() }];
        expect(await dispatcher.flush()).to.equal(2);
        expect(sender.calls.length).to.equal(2);
        expect(failures.slice(1).map((failure) => (failure as { task: string }).task)).to.equal(['webhook attempt', 'webhook attempt']);
        dispatcher.close();
    });

    it('renews the unsent rest of a batch before an attempt whose lease has run down, as slow receivers answer the ones before', async () => {

        const clock = new Clock(start);
        const { parts, failures } = dispatcherOver(clock);
        // Leased for 300 ms; an attempt leaves with at least 200 ms of it ahead, and each answer takes 150.
        const sender = new SlowSender(150);
        const dispatcher = new Dispatcher({ ...parts, sender, timeoutMs: 100, leaseMarginMs: 200 });
        const memory = new MemoryLog();
        const due = (position: number, id: string): DueAttempt => ({ event: event(position), endpoint: endpoint(id, id === 'a' ? 0 : 1), attempt: 1, due_at: start.toISOString() });
        memory.due = [due(1, 'a'), due(2, 'a'), due(3, 'a'), due(4, 'b')];
        expect(await dispatcher.watch(() => Promise.resolve([memory]))).to.equal(4);
        expect(sender.calls.map(({ body }) => JSON.parse(body).id)).to.equal(['e1', 'e4', 'e2', 'e3']);

        // The second and third attempts to a renew what is left of the batch, each under the lease held before.
        const [second, third] = memory.renewals.slice(-2);
        expect(second![0].map(({ position, endpoint_id: id, attempt }) => [position, id, attempt])).to.equal([[2, 'a', 1], [3, 'a', 1]]);
        expect(third![0]).to.equal([{ position: 3, endpoint_id: 'a', attempt: 1, leased_until: second![1] }]);
        expect(Date.parse(third![1])).to.be.above(Date.parse(second![1]));
        expect(failures).to.equal([]);
        dispatcher.close();
    });

    it('sends no attempt whose lease it could not keep, and logs a renewal that failed', async () => {

        const clock = new Clock(start);
        const { parts, failures } = dispatcherOver(clock);
        const sender = new SlowSender(150);
        const dispatcher = new Dispatcher({ ...parts, sender, timeoutMs: 100, leaseMarginMs: 200 });
        const memory = new MemoryLog();
        const due = (position: number): DueAttempt => ({ event: event(position), endpoint: endpoint('a', 0), attempt: 1, due_at: start.toISOString() });
        // Another process took the third over: its lease had passed.
        memory.keeps = ({ position }) => position !== 3;
        memory.due = [due(1), due(2), due(3), due(4)];
        expect(await dispatcher.watch(() => Promise.resolve([memory]))).to.equal(3);
        expect(sender.calls.map(({ body }) => JSON.parse(body).id)).to.equal(['e1', 'e2', 'e4']);
        expect(failures).to.equal([{ task: 'webhook lease renewal', attemptsNotSent: 1, reason: 'their deliveries moved on before their turn (claimed elsewhere once their lease had passed, recorded, or removed)' }]);

        dispatcher.close();

        // A renewal the database refused: the attempt that needed it waits, leased, for a later pass. (Leased for 2 s,
        // an attempt leaves with 1.5 s of it ahead: the first leaves at once, the second after the first's 0.6 s.)
        const patient = new Dispatcher({ ...parts, sender: new SlowSender(600), timeoutMs: 1000, leaseMarginMs: 1000 });
        memory.failRenewal = true;
        memory.due = [due(5), due(6)];
        expect(await patient.watch(() => Promise.resolve([memory]))).to.equal(1);
        expect(memory.renewals.at(-1)![0].map(({ position }) => position)).to.equal([6]);
        expect(failures.slice(1).map((failure) => (failure as { task: string }).task)).to.equal(['webhook attempt']);
        patient.close();
    });

    it('renews a log\'s leases once for the attempts that wait together, and leaves one taken meanwhile on its way', async () => {

        const memory = new MemoryLog();
        const failures: object[] = [];
        const claimed = (position: number, leaseMs: number): Claimed => ({ log: memory, attempt: { event: event(position), endpoint: endpoint('a', 0), attempt: 1, due_at: start.toISOString(), leased_until: new Date(Date.now() + leaseMs).toISOString() } });
        // A claimed a while ago, its lease short of what an attempt leaves with; b and c claimed just now.
        const [a, b, c] = [claimed(1, 100), claimed(2, 60_000), claimed(3, 100)];
        const leases = new Leases([a, b, c], { lengthMs: 60_000, slackMs: 1000 }, (_tags, data) => failures.push(data));
        let release = (): void => undefined;
        memory.renewing = new Promise((resolve) => {

            release = resolve;
        });

        const first = leases.take(a);
        const third = leases.take(c);
        expect(await leases.take(b)).to.be.true();
        release();
        expect(await Promise.all([first, third])).to.equal([true, true]);
        expect(memory.renewals.map(([held]) => held.map(({ position }) => position))).to.equal([[1, 2, 3]]);
        // Taken once: no second time.
        expect(await leases.take(b)).to.be.false();
        expect(failures).to.equal([]);
    });

    it('serves notices that come while a pass waits with that pass, and none once closed', async () => {

        const clock = new Clock(start);
        const { dispatcher, sender } = dispatcherOver(clock);
        const memory = new MemoryLog();
        expect(await dispatcher.flush()).to.equal(0);
        await dispatcher.watch(() => Promise.resolve([memory]));
        memory.due = [{ event: event(1), endpoint: endpoint('a', 0), attempt: 1, due_at: start.toISOString() }];
        const [one, two] = await Promise.all([dispatcher.flush(), dispatcher.flush(), dispatcher.flush()]);
        expect([one, two]).to.equal([1, 1]);
        dispatcher.close();
        memory.due = [{ event: event(2), endpoint: endpoint('a', 0), attempt: 1, due_at: start.toISOString() }];
        dispatcher.notice();
        expect(await dispatcher.flush()).to.equal(0);
        expect(sender.calls.length).to.equal(1);
    });

    it('under the wall clock, waits for the next attempt\'s instant, polls when told to, and looks again later for attempts others hold', async () => {

        const clock = new Clock();
        const { dispatcher, sender, scheduler, loop } = dispatcherOver(clock);
        const memory = new MemoryLog();
        memory.due = [{ event: event(1), endpoint: endpoint('a', 0, [30]), attempt: 1, due_at: new Date(Date.now() + 30).toISOString() }];
        const later = new MemoryLog();
        later.due = [{ event: event(5), endpoint: endpoint('a', 0), attempt: 1, due_at: new Date(Date.now() + 3_600_000).toISOString() }];
        await dispatcher.watch(() => Promise.resolve([later, memory, later]));
        loop.poll(20);
        expect(scheduler.size).to.equal(1);
        await sleep(80);
        expect(sender.calls.length).to.equal(1);

        // Due, but leased by another process: looked at again a second later, not at once.
        memory.leasedElsewhere = new Date(Date.now() - 1000);
        await dispatcher.flush();
        expect(scheduler.size).to.equal(1);
        memory.leasedElsewhere = null;

        // The poll finds what another process made due.
        memory.due = [{ event: event(2), endpoint: endpoint('a', 0), attempt: 1, due_at: new Date(Date.now() - 1).toISOString() }];
        await sleep(60);
        expect(sender.calls.length).to.equal(2);

        // Frozen, nothing waits on the scheduler: a move sends.
        clock.freeze(new Date());
        await dispatcher.flush();
        expect(scheduler.size).to.equal(0);
        dispatcher.close();
        loop.close();
        scheduler.close();
    });

    it('stops between batches when its data set closes, and arms nothing after', async () => {

        const clock = new Clock();
        const { dispatcher, sender, scheduler } = dispatcherOver(clock);
        const memory = new MemoryLog();
        memory.due = [{ event: event(1), endpoint: endpoint('a', 0), attempt: 1, due_at: new Date(Date.now() - 1).toISOString() }];
        const logs = async () => {

            dispatcher.close();
            return await Promise.resolve([memory]);
        };

        expect(await dispatcher.watch(logs)).to.equal(0);
        expect(sender.calls.length).to.equal(0);
        expect(scheduler.size).to.equal(0);

        // Closed while it looked for the next instant.
        const other = dispatcherOver(clock);
        const later = new MemoryLog();
        later.due = [{ event: event(1), endpoint: endpoint('a', 0), attempt: 1, due_at: new Date(Date.now() + 60_000).toISOString() }];
        let looks = 0;
        await other.dispatcher.watch(async () => {

            looks += 1;
            if (looks === 2) {
                other.dispatcher.close();
            }

            return await Promise.resolve([later]);
        });
        expect(other.scheduler.size).to.equal(0);
        scheduler.close();
        other.scheduler.close();
    });

    it('counts a redirect or no answer failed, and gives up past the schedule', async () => {

        const clock = new Clock(start);
        const { dispatcher, sender, parts } = dispatcherOver(clock);
        const memory = new MemoryLog();
        sender.statuses.push(302, null, 199);
        memory.due = [
            { event: event(1), endpoint: endpoint('a', 0, [1000]), attempt: 1, due_at: start.toISOString() },
            { event: event(2), endpoint: endpoint('b', 1), attempt: 1, due_at: start.toISOString() },
            { event: event(3), endpoint: endpoint('c', 2, [1000]), attempt: 1, due_at: start.toISOString() }
        ];
        await dispatcher.watch(() => Promise.resolve([memory]));
        expect(memory.recorded.map(({ delivered, next_due_at: next, given_up: givenUp }) => [delivered, next, givenUp?.data ?? null])).to.equal([
            [false, '2030-01-01T00:00:01.000Z', null],
            [false, null, { webhook_id: parts.deliveries.list()[1]!.webhook_id, endpoint_id: 'b', event_id: 'e2', event_type: 'pay.transaction.created', attempts: 1 }],
            [false, '2030-01-01T00:00:01.000Z', null]
        ]);
        // The given-up event is the log's to write (test/sqlite-events.ts: its commit tells the data set's listeners),
        // once all three attempts were made.
        expect(sender.calls).to.have.length(3);
        dispatcher.close();
    });
});


describe('the delivery journal', () => {

    const entry = (attempt: number): DeliveryEntry => ({ id: `msg_1.${attempt}`, event_id: 'e1', type: 'pay.transaction.created', webhook_id: 'msg_1', endpoint_id: 'we_1', url: 'http://127.0.0.1/hook', attempt, at: start.toISOString(), status: 500, duration_ms: 1, error: null, fault: null, next_attempt_at: null, request: null, response: null });

    it('keeps at most its size, the oldest dropped, inside the memory the journals share, and nothing once closed', () => {

        const budget = new JournalBudget(2 ** 20);
        const journal = new DeliveryJournal(2, budget);
        [1, 2, 3].forEach((attempt) => journal.add(entry(attempt)));
        expect(journal.list().map(({ attempt }) => attempt)).to.equal([2, 3]);
        expect(budget.used).to.equal(journal.bytes);

        const tight = new JournalBudget(journal.bytes);
        const squeezed = new DeliveryJournal(10, tight);
        [1, 2, 3].forEach((attempt) => squeezed.add(entry(attempt)));
        expect(squeezed.list().length).to.equal(2);

        const none = new DeliveryJournal(0, budget);
        none.add(entry(1));
        none.record(entry(1), { sent: null, answer: null, secrets: [] });
        expect(none.list()).to.equal([]);

        budget.leave(journal);
        journal.add(entry(4));
        journal.record(entry(5), { sent: null, answer: null, secrets: [] });
        expect(journal.list()).to.equal([]);
        expect(budget.used).to.equal(0);
    });

    it('holds no more of each body than it scans until an entry is read, then reads it as keptExchange keeps it', () => {

        const budget = new JournalBudget(2 ** 20);
        const bare = new DeliveryJournal(10, budget);
        bare.add(entry(1));
        const journal = new DeliveryJournal(10, budget, ['s3cret-of-the-server']);
        const sent = { headers: { 'content-type': 'application/json' }, body: `{"data":"${'q'.repeat(10_000)}"}` };
        const answer = { headers: [['content-type', 'text/plain']] as [string, string][], body: Buffer.from('p'.repeat(64 * 1024)) };
        const { request, response, ...attempt } = entry(1);
        journal.record(attempt, { sent, answer, secrets: [] });
        expect(journal.bytes).to.equal(bare.bytes + 2 * ('content-type'.length + 'application/json'.length + 4096) + 2 * ('content-type'.length + 'text/plain'.length) + 4096);
        expect(budget.used).to.equal(bare.bytes + journal.bytes);

        const kept = { ...entry(1), ...keptExchange({ sent, answer, secrets: [] }, ['s3cret-of-the-server']) };
        expect(journal.list()).to.equal([kept]);
        expect(journal.list()[0]).to.shallow.equal(journal.list()[0]);
        expect(kept.request!.body_truncated && kept.response!.body_truncated).to.be.true();
        expect([request, response]).to.equal([null, null]);
    });

    it('counts what an attempt sent and what came back in the memory it takes', () => {

        const budget = new JournalBudget(2 ** 20);
        const journal = new DeliveryJournal(10, budget);
        journal.add(entry(1));
        const bare = journal.bytes;
        const message = { headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(1000), body_truncated: false };
        journal.add({ ...entry(2), request: message, response: message });
        expect(journal.bytes - bare).to.equal(bare + 2 * 2 * ('content-type'.length + 'text/plain'.length + 1000));
        expect(budget.used).to.equal(journal.bytes);
    });

    it('keeps the first KiB of each body and the first headers, each cut, and hides credentials, the endpoint\'s secret among them', () => {

        const secret = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
        const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbm4ifQ.c2lnbmF0dXJl';
        const many = Array.from({ length: 40 }, (_, i): [string, string] => [`X-Header-${i}`, String(i)]);
        const answer = {
            headers: [['Set-Cookie', 'session=abc'], ['Authorization', 'Bearer abc'], ['X-Echo', secret], ['X-Key', secret.slice(6)], ['X-Long', 'v'.repeat(600)], ['X-Token-Echo', `id ${jwt}`], ['X-Trace', 'a'], ['x-trace', 'b'], ...many] as [string, string][],
            body: Buffer.from(JSON.stringify({ password: 'hunter2', echo: secret, jwt, notes: 'é'.repeat(600) }))
        };
        const sent = { headers: { 'content-type': 'application/json', 'webhook-signature': 'v1,abc=', 'webhook-id': 'msg_1' }, body: `{"data":{"name":"${'a'.repeat(2000)}","server":"s3cret-of-the-server"}}` };
        const { request, response } = keptExchange({ sent, answer, secrets: [secret] }, ['s3cret-of-the-server']);

        // The signature is an HMAC of the body, and shows.
        expect(request).to.equal({ headers: sent.headers, body: sent.body.slice(0, keptBodyBytes), body_truncated: true });
        const kept = Object.entries(response!.headers);
        expect(kept.length).to.equal(keptHeaders);
        expect(kept.slice(0, 8)).to.equal([
            ['set-cookie', '[hidden]'], ['authorization', '[hidden]'], ['x-echo', '[hidden]'], ['x-key', '[hidden]'], ['x-long', 'v'.repeat(keptHeaderChars)],
            ['x-token-echo', '[hidden]'], ['x-trace', 'a, b'], ['x-header-0', '0']
        ]);
        expect(kept.at(-1)).to.equal(['x-header-24', '24']);

        // Hidden before the cut; the cut falls between characters, never inside one.
        expect(response!.body_truncated).to.equal(true);
        expect(response!.body).to.startWith('{"password":"[hidden]","echo":"[hidden]","jwt":"[hidden]","notes":"éé');
        expect(Buffer.byteLength(response!.body)).to.equal(keptBodyBytes - 1);
        expect(response!.body).to.not.contain(secret.slice(6, 20));

        // A long answer is scanned only at its start, and kept cut as any other.
        const long = keptExchange({ sent: null, answer: { headers: [], body: Buffer.from(`"${'p'.repeat(64 * 1024)}"`) }, secrets: [] }, []).response!;
        expect([long.body.length, long.body_truncated]).to.equal([keptBodyBytes, true]);

        // Nothing sent, nothing answered: nothing kept; a short body whole.
        expect(keptExchange({ sent: null, answer: null, secrets: [secret] }, [])).to.equal({ request: null, response: null });
        expect(keptExchange({ sent: { headers: {}, body: '{}' }, answer: { headers: [['__proto__', 'x']], body: Buffer.from('ok') }, secrets: [secret] }, []).response).to.equal({ headers: JSON.parse('{"__proto__":"x"}'), body: 'ok', body_truncated: false });
    });

    it('matches a pattern field by field', () => {

        expect(matchesDelivery(entry(1), {})).to.equal(true);
        expect(matchesDelivery(entry(1), { type: 'pay.*', status: 500, attempt: 1, endpoint_id: 'we_1', webhook_id: 'msg_1' })).to.equal(true);
        expect(matchesDelivery(entry(1), { type: 'pay.transaction.failed' })).to.equal(false);
        expect(matchesDelivery(entry(1), { status: null })).to.equal(false);
        expect(matchesType('pay.transaction.created', null)).to.equal(true);
        expect(matchesType('pay.transaction.created', [{ pattern: 'pay.', prefix: true }])).to.equal(true);
        expect(matchesType('pay.transaction.created', [{ pattern: 'pay.transaction.failed', prefix: false }])).to.equal(false);
    });
});
