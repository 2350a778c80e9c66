import Fs from 'node:fs';
import Path from 'node:path';
import Stream from 'node:stream';

import Code from '@hapi/code';
import type { Server } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { Clock } from '../lib/record-context';
import { settingsFromEnvironment } from '../lib';
import { resolveSettings } from '../lib/config';
import { Loop, Scheduler, Timeline, type AttemptStops } from '../lib/data-set';
import { clockFileName, defaultClock } from '../lib/data-set/clock-file';
import type { AppliedTransition, TimedStore, TransitionType } from '../lib/transitions';
import { DomainError } from '../lib/errors';
import { builtInNamespaces, type Namespace } from '../lib/namespaces';
import { payNamespace } from '../lib/namespaces/pay';
import type { FailureLog } from '../lib/safe-listener';
import { createTestKit, type TestInstance } from '../lib/testing';
import { expectError } from './helpers/errors';
import { adminBearer, bearer, body, tempDir, testServer } from './helpers/server';
import { notesNamespace } from './notes-namespace';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


interface Pending {
    id: string;
    due: Date;
    type: TransitionType;
}

const start = new Date('2030-01-01T00:00:00.000Z');
const hour = 3_600_000;

const at = (ms: number): Date => new Date(start.getTime() + ms);


// A store whose transitions are rows in an array: applied earliest first, ties by id, at most limit a call.
class ArrayStore implements TimedStore {

    readonly applied: AppliedTransition[] = [];
    readonly calls: { until: string; limit: number }[] = [];
    private waiters: (() => void)[] = [];

    constructor(public pending: Pending[] = []) { }

    nextDue(): Promise<Date | null> {

        const next = this.sorted()[0];
        return Promise.resolve(next ? next.due : null);
    }

    applyDue(until: Date, limit: number): Promise<AppliedTransition[]> {

        this.calls.push({ until: until.toISOString(), limit });
        const due = this.sorted().filter((row) => row.due.getTime() <= until.getTime()).slice(0, limit);
        this.pending = this.pending.filter((row) => !due.includes(row));
        const applied = due.map((row) => ({ type: row.type, id: row.id, due: row.due.toISOString() }));
        this.applied.push(...applied);
        if (applied.length > 0) {
            this.waiters.splice(0).forEach((wake) => wake());
        }

        return Promise.resolve(applied);
    }

    /** Resolves once a transition is applied. */
    next(): Promise<void> {

        return new Promise((resolve) => this.waiters.push(resolve));
    }

    private sorted(): Pending[] {

        return [...this.pending].sort((a, b) => a.due.getTime() - b.due.getTime() || (a.id < b.id ? -1 : 1));
    }
}


function timelineOver(clock: Clock, log: FailureLog = () => undefined): { timeline: Timeline; scheduler: Scheduler; loop: Loop } {

    const scheduler = new Scheduler(clock, log);
    const loop = new Loop(scheduler, log);
    return { timeline: new Timeline(clock, loop, log), scheduler, loop };
}


describe('the timeline of a data set', () => {

    it('applies the transitions of every store that fall due on a move, in one time order, each stamped with its own instant', async () => {

        const payments = new ArrayStore([
            { id: 'p2', due: at(3 * hour), type: 'pay.transaction.failed' },
            { id: 'p1', due: at(hour), type: 'pay.transaction.completed' },
            { id: 'p3', due: at(48 * hour), type: 'pay.transaction.completed' }
        ]);
        const bookings = new ArrayStore([
            { id: 'b1', due: at(2 * hour), type: 'logistics.booking.started' },
            { id: 'b2', due: at(3 * hour), type: 'logistics.booking.completed' }
        ]);
        const clock = new Clock(start);
        const { timeline } = timelineOver(clock);
        expect(await timeline.watch(() => Promise.resolve([payments, bookings]))).to.equal({ transitions: [], counts: {} });

        const moved = await timeline.move({ advance: 3 * hour });
        expect(moved.transitions).to.equal([
            { type: 'pay.transaction.completed', id: 'p1', due: '2030-01-01T01:00:00.000Z' },
            { type: 'logistics.booking.started', id: 'b1', due: '2030-01-01T02:00:00.000Z' },
            { type: 'pay.transaction.failed', id: 'p2', due: '2030-01-01T03:00:00.000Z' },
            { type: 'logistics.booking.completed', id: 'b2', due: '2030-01-01T03:00:00.000Z' }
        ]);
        expect(moved.counts).to.equal({ 'pay.transaction.completed': 1, 'logistics.booking.started': 1, 'pay.transaction.failed': 1, 'logistics.booking.completed': 1 });
        // The walk stops at each instant something falls due; a store is asked only up to that instant.
        expect(payments.calls.map((call) => call.until)).to.equal(['2030-01-01T01:00:00.000Z', '2030-01-01T03:00:00.000Z']);
        expect(clock.frozen).to.equal('2030-01-01T03:00:00.000Z');

        // Back in time: nothing applied, nothing undone; the pending one still waits for its instant.
        expect(await timeline.move({ now: start })).to.equal({ transitions: [], counts: {}, target: start, late: false });
        expect(payments.pending.map((row) => row.id)).to.equal(['p3']);
        expect((await timeline.move({ now: at(48 * hour) })).counts).to.equal({ 'pay.transaction.completed': 1 });
        timeline.close();
    });

    it('catches up across stores in one time order as it starts watching, a store\'s run bounded by the next store\'s instant', async () => {

        const bookings = new ArrayStore([{ id: 'b1', due: at(2 * hour), type: 'logistics.booking.started' }]);
        const payments = new ArrayStore([{ id: 'p1', due: at(hour), type: 'pay.transaction.completed' }, { id: 'p2', due: at(3 * hour), type: 'pay.transaction.completed' }]);
        const { timeline } = timelineOver(new Clock(at(4 * hour)));
        const caught = await timeline.watch(() => Promise.resolve([bookings, payments]));
        expect(caught.transitions.map(({ id }) => id)).to.equal(['p1', 'b1', 'p2']);
        // The payments run first up to just before the booking's instant: the booking's store comes first at one instant.
        expect(payments.calls.map((call) => call.until)).to.equal(['2030-01-01T01:59:59.999Z', '2030-01-01T04:00:00.000Z']);
        timeline.close();
    });

    it('applies a thousand transitions due at once in bounded calls of the store', async () => {

        const store = new ArrayStore(Array.from({ length: 1200 }, (_, index) => ({ id: `t${String(index).padStart(4, '0')}`, due: at(index * 1000), type: 'pay.transaction.completed' as const })));
        const { timeline } = timelineOver(new Clock(start));
        // The first is due at the clock's instant already: watching applies it.
        expect((await timeline.watch(() => Promise.resolve([store]))).counts).to.equal({ 'pay.transaction.completed': 1 });

        const moved = await timeline.move({ advance: 2 * hour });
        expect(moved.counts).to.equal({ 'pay.transaction.completed': 1199 });
        expect(store.applied.map((row) => row.id)).to.equal(store.applied.map((row) => row.id).sort());
        expect(store.calls.every((call) => call.limit === 500)).to.be.true();
        timeline.close();
    });

    it('refuses a move that would take the clock outside what a created_at holds, and leaves the clock where it was', async () => {

        const clock = new Clock(start);
        const { timeline } = timelineOver(clock);
        // Not yet watching a data set: there is nothing to apply.
        expect(await timeline.move({ advance: 1 })).to.equal({ transitions: [], counts: {}, target: at(1), late: false });
        clock.freeze(start);
        await expect(timeline.move({ now: new Date('0999-12-31T00:00:00Z') })).to.reject(DomainError, /now would take the clock outside/);
        await expect(timeline.move({ advance: 9000 * 365 * 24 * hour })).to.reject(DomainError, /advance would take the clock outside/);
        expect(clock.frozen).to.equal(start.toISOString());
        timeline.close();
    });

    it('answers a move at its deadline with the transitions left applied, and logs a failure of its walk after the answer', async () => {

        const lines: Record<string, unknown>[] = [];
        const clock = new Clock(start);
        const { timeline } = timelineOver(clock, (tags, data) => lines.push({ tags, ...data }));
        const store = new ArrayStore([{ id: 'p1', due: at(2 * hour), type: 'pay.transaction.completed' }]);
        let broken = false;
        const failing: TimedStore = {
            nextDue: () => (broken ? Promise.reject(new Error('connection lost')) : store.nextDue()),
            applyDue: (until, limit) => store.applyDue(until, limit)
        };
        await timeline.watch(() => Promise.resolve([failing]));
        // An attempt due at the first hour that the receiver holds until told.
        let answer = (): void => undefined;
        const answered = new Promise<void>((resolve) => {

            answer = resolve;
        });
        let ended = 0;
        let asked = 0;
        const stops: AttemptStops = {
            next: () => Promise.resolve(asked++ === 0 ? at(hour) : null),
            reach: () => answered,
            end: () => {

                ended += 1;
            }
        };

        const moved = await timeline.move({ advance: 3 * hour }, stops, 10);
        expect(moved).to.equal({ transitions: [{ type: 'pay.transaction.completed', id: 'p1', due: '2030-01-01T02:00:00.000Z' }], counts: { 'pay.transaction.completed': 1 }, target: at(3 * hour), late: true });
        expect(ended).to.equal(0);
        // The walk goes on once the attempt is answered, and fails: logged, as no move answers it. The next move's walk,
        // which starts once this one's is over, fails too: that move answers it.
        broken = true;
        answer();
        await expect(timeline.move({ advance: hour })).to.reject(DomainError);
        expect(ended).to.equal(1);
        expect(lines.map(({ tags, task }) => [tags, task])).to.equal([[['error', 'transitions'], 'clock move'], [['error', 'transitions'], 'clock move']]);
        timeline.close();
    });

    it('answers a move whose catch-up fails with a 503 error that says the clock moved, and logs the failure', async () => {

        const lines: Record<string, unknown>[] = [];
        const clock = new Clock(start);
        const { timeline } = timelineOver(clock, (tags, data) => lines.push({ tags, ...data }));
        const broken: TimedStore = { nextDue: () => Promise.resolve(at(hour)), applyDue: () => Promise.reject(new Error('CHECK constraint failed')) };
        await timeline.watch(() => Promise.resolve([broken]));
        const err = await expect(timeline.move({ advance: 2 * hour })).to.reject(DomainError);
        expect(err).to.include({ kind: 'unavailable', code: 'transitions_failed' });
        expect(err.message).to.equal('The clock stands at 2030-01-01T02:00:00.000Z, but a transition due on the way could not be applied: what was applied stays, and the rest is applied by the next move');
        expect(clock.frozen).to.equal('2030-01-01T02:00:00.000Z');
        expect(lines).to.equal([{ tags: ['error', 'transitions'], task: 'clock move', type: 'Error', at: lines[0]!.at }]);
        timeline.close();
    });

    it('leaves a store that names a due transition it then applies none of to the next catch-up, rather than asking forever', async () => {

        const stuck: TimedStore = {
            nextDue: () => Promise.resolve(start),
            applyDue: () => Promise.resolve([])
        };
        let asked = 0;
        const counted: TimedStore = { ...stuck, applyDue: () => {

            asked += 1;
            return Promise.resolve([]);
        } };
        const { timeline } = timelineOver(new Clock(start));
        await timeline.watch(() => Promise.resolve([stuck, counted]));
        expect(await timeline.move({ advance: hour })).to.equal({ transitions: [], counts: {}, target: at(hour), late: false });
        expect(asked).to.equal(0);
        timeline.close();
    });

    it('under the wall clock, applies a transition when its instant comes, by the scheduler, and what a write expects later', async () => {

        const soon = new Date(Date.now() + 30);
        const store = new ArrayStore([{ id: 'a', due: soon, type: 'logistics.booking.started' }]);
        const { timeline, scheduler } = timelineOver(new Clock());
        const applied = store.next();
        await timeline.watch(() => Promise.resolve([store]));
        expect(scheduler.size).to.equal(1);
        await applied;
        expect(store.applied.map((row) => row.id)).to.equal(['a']);

        // A write makes a transition due later: the timeline is told, and applies it then.
        store.pending.push({ id: 'b', due: new Date(Date.now() + 30), type: 'logistics.booking.completed' });
        const second = store.next();
        timeline.expect(new Date(Date.now() + 3 * hour));
        // One told of a later instant keeps the earlier task; one told of an earlier instant takes its place.
        timeline.expect(new Date(Date.now() + hour));
        timeline.expect(new Date(Date.now() + 2 * hour));
        timeline.expect(store.pending[0]!.due);
        expect(scheduler.size).to.equal(1);
        await second;
        expect(store.applied.map((row) => row.id)).to.equal(['a', 'b']);
        timeline.close();
        expect(scheduler.size).to.equal(0);
    });

    it('under a frozen clock arms nothing, and arms again once the clock follows the wall clock', async () => {

        // Frozen before the wall clock's instant: the transition is not due until the clock follows the wall clock.
        const clock = new Clock(new Date('2020-01-01T00:00:00Z'));
        const store = new ArrayStore([{ id: 'a', due: new Date(Date.now() + 20), type: 'logistics.booking.started' }]);
        const { timeline, scheduler } = timelineOver(clock);
        await timeline.watch(() => Promise.resolve([store]));
        timeline.expect(new Date(Date.now() + 10));
        expect(scheduler.size).to.equal(0);

        const applied = store.next();
        clock.freeze(null);
        await applied;
        expect(store.applied.map((row) => row.id)).to.equal(['a']);
        timeline.close();
        timeline.expect(new Date());
        expect(scheduler.size).to.equal(0);
    });

    it('arms for the earliest instant of all its stores, and not once closed while it looks', async () => {

        const later = new ArrayStore([{ id: 'later', due: new Date(Date.now() + 2 * hour), type: 'pay.transaction.completed' }]);
        const sooner = new ArrayStore([{ id: 'sooner', due: new Date(Date.now() + hour), type: 'pay.transaction.failed' }]);
        const none = new ArrayStore();
        const { timeline, scheduler } = timelineOver(new Clock());
        await timeline.watch(() => Promise.resolve([none, later, sooner, later, none]));
        expect(scheduler.size).to.equal(1);
        timeline.close();
        expect(scheduler.size).to.equal(0);

        let open!: () => void;
        const gate = new Promise<void>((resolve) => {

            open = resolve;
        });
        const slow: TimedStore = { nextDue: async () => {

            await gate;
            return new Date(Date.now() + hour);
        }, applyDue: () => Promise.resolve([]) };
        // Told of an earlier instant while it looks, it keeps that task.
        const told = timelineOver(new Clock());
        const looking = told.timeline.watch(() => Promise.resolve([slow]));
        await new Promise((resolve) => setImmediate(resolve));
        told.timeline.expect(new Date(Date.now() + 60_000));
        // Told of a later instant while it looks, it arms for the earlier one it finds.
        const toldLater = timelineOver(new Clock());
        const lookingToo = toldLater.timeline.watch(() => Promise.resolve([slow]));
        await new Promise((resolve) => setImmediate(resolve));
        toldLater.timeline.expect(new Date(Date.now() + 3 * hour));
        // Closed while it looks for the next instant to arm for (the catch-up's own look comes first, at once).
        let looks = 0;
        let openArming!: () => void;
        const arming = new Promise<void>((resolve) => {

            openArming = resolve;
        });
        const slowToArm: TimedStore = { nextDue: async () => {

            looks += 1;
            if (looks > 1) {
                await arming;
            }

            return new Date(Date.now() + hour);
        }, applyDue: () => Promise.resolve([]) };
        const other = timelineOver(new Clock());
        const watched = other.timeline.watch(() => Promise.resolve([slowToArm]));
        await new Promise((resolve) => setImmediate(resolve));
        open();
        await looking;
        await lookingToo;
        expect(told.scheduler.size).to.equal(1);
        expect(toldLater.scheduler.size).to.equal(1);
        told.timeline.close();
        toldLater.timeline.close();
        other.timeline.close();
        openArming();
        await watched;
        expect(other.scheduler.size).to.equal(0);
    });

    it('polls for transitions other processes made due, under the wall clock, until closed', async () => {

        const store = new ArrayStore();
        const clock = new Clock(new Date('2020-01-01T00:00:00Z'));
        const { timeline, loop } = timelineOver(clock);
        await timeline.watch(() => Promise.resolve([store]));
        loop.poll(5);
        // Frozen, the poll applies nothing: a move does.
        store.pending.push({ id: 'frozen', due: new Date('2021-01-01T00:00:00Z'), type: 'pay.transaction.completed' });
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(store.applied).to.equal([]);
        store.pending.length = 0;
        clock.freeze(null);
        // Armed for nothing: only the poll finds what comes next.
        await new Promise((resolve) => setTimeout(resolve, 1));
        const applied = store.next();
        // Written by another process: this one is not told.
        store.pending.push({ id: 'elsewhere', due: new Date(Date.now() - 1000), type: 'pay.transaction.completed' });
        await applied;
        expect(store.applied.map((row) => row.id)).to.equal(['elsewhere']);
        timeline.close();
        loop.close();
    });

    it('waits before it tries again a transition that failed or that it could not claim, rather than spin, under the wall clock', async () => {

        let applies = 0;
        const failing: TimedStore = {
            nextDue: () => Promise.resolve(new Date(Date.now() - 1000)),
            applyDue: () => {

                applies += 1;
                return Promise.reject(new Error('settlement refused'));
            }
        };
        const { timeline, scheduler } = timelineOver(new Clock());
        await expect(timeline.watch(() => Promise.resolve([failing]))).to.reject(Error, 'settlement refused');
        await new Promise((resolve) => setTimeout(resolve, 100));
        // One try, and a task armed a second on, not at the overdue instant.
        expect(applies).to.equal(1);
        expect(scheduler.size).to.equal(1);
        timeline.close();

        let asked = 0;
        const unclaimed: TimedStore = {
            nextDue: () => Promise.resolve(new Date(Date.now() - 1000)),
            applyDue: () => {

                asked += 1;
                return Promise.resolve([]);
            }
        };
        const stalled = timelineOver(new Clock());
        expect(await stalled.timeline.watch(() => Promise.resolve([unclaimed]))).to.equal({ transitions: [], counts: {} });
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(asked).to.equal(2);
        stalled.timeline.close();
    });

    it('stops between batches once its data set closes, and polls no more while a catch-up waits', async () => {

        const store = new ArrayStore(Array.from({ length: 600 }, (_, index) => ({ id: `c${String(index).padStart(3, '0')}`, due: at(1), type: 'pay.transaction.completed' as const })));
        const clock = new Clock(start);
        const { timeline } = timelineOver(clock);
        // The data set closes as the first batch is applied.
        const closing: TimedStore = {
            nextDue: () => store.nextDue(),
            applyDue: async (until, limit) => {

                const applied = await store.applyDue(until, limit);
                timeline.close();
                return applied;
            }
        };
        await timeline.watch(() => Promise.resolve([closing]));
        expect((await timeline.move({ advance: hour })).counts).to.equal({ 'pay.transaction.completed': 500 });
        expect(store.pending).to.have.length(100);

        // A poll every millisecond while one catch-up is held: none queues behind it.
        let open!: () => void;
        const gate = new Promise<void>((resolve) => {

            open = resolve;
        });
        let looks = 0;
        const held: TimedStore = { nextDue: async () => {

            looks += 1;
            await gate;
            return null;
        }, applyDue: () => Promise.resolve([]) };
        const polled = timelineOver(new Clock());
        polled.loop.poll(1);
        const watching = polled.timeline.watch(() => Promise.resolve([held]));
        await new Promise((resolve) => setTimeout(resolve, 30));
        expect(looks).to.equal(1);
        open();
        await watching;
        polled.timeline.close();
        polled.loop.close();
    });

    it('logs a failure to find the next due instant, and goes on with the next catch-up', async () => {

        const lines: { tags: string[]; data: Record<string, unknown> }[] = [];
        let broken = false;
        const store = new ArrayStore();
        const flaky: TimedStore = {
            nextDue: () => (broken ? Promise.reject(new Error('database closed')) : store.nextDue()),
            applyDue: (until, limit) => store.applyDue(until, limit)
        };
        const { timeline } = timelineOver(new Clock(), (tags, data) => lines.push({ tags, data: { ...data } }));
        await timeline.watch(() => Promise.resolve([flaky]));

        broken = true;
        await expect(timeline.catchUp()).to.reject(Error, 'database closed');
        broken = false;
        store.pending.push({ id: 'late', due: new Date(Date.now() - 1), type: 'pay.transaction.completed' });
        expect((await timeline.catchUp()).counts).to.equal({ 'pay.transaction.completed': 1 });
        expect(lines.map((line) => [line.tags, line.data.task, line.data.type])).to.equal([[['error', 'listener'], 'transitions arm', 'Error']]);

        // A failed arming on a clock's move is logged too.
        broken = true;
        lines.length = 0;
        const clock = new Clock(start);
        const other = timelineOver(clock, (tags, data) => lines.push({ tags, data: { ...data } }));
        await other.timeline.watch(() => Promise.resolve([flaky])).catch(() => undefined);
        clock.freeze(null);
        await new Promise((resolve) => setImmediate(resolve));
        expect(lines.map((line) => line.data.task)).to.include('transitions arm');
        other.timeline.close();
        timeline.close();
    });
});


describe('the default data set\'s clock', () => {

    it('follows the wall clock without CLOCK, stands at CLOCK in memory and over databases other processes share, and is kept in the data directory on files', () => {

        const log: FailureLog = () => undefined;
        expect(defaultClock({ storage: 'file', dataDir: tempDir() }, false, log).frozen).to.be.null();
        const memoryDir = tempDir();
        expect(defaultClock({ storage: 'memory', dataDir: memoryDir, clock: '2030-01-01T00:00:00.000Z' }, false, log).frozen).to.equal('2030-01-01T00:00:00.000Z');
        expect(Fs.existsSync(Path.join(memoryDir, clockFileName))).to.be.false();

        const dataDir = tempDir();
        const clock = defaultClock({ storage: 'file', dataDir, clock: '2030-01-01T00:00:00.000Z' }, false, log);
        clock.advance(3 * 24 * hour);
        expect(JSON.parse(Fs.readFileSync(Path.join(dataDir, clockFileName), 'utf8'))).to.equal({ start: '2030-01-01T00:00:00.000Z', now: '2030-01-04T00:00:00.000Z' });
        // The same CLOCK goes on from where the clock stood; another starts over.
        expect(defaultClock({ storage: 'file', dataDir, clock: '2030-01-01T00:00:00.000Z' }, false, log).frozen).to.equal('2030-01-04T00:00:00.000Z');
        expect(defaultClock({ storage: 'file', dataDir, clock: '2031-06-01T00:00:00.000Z' }, false, log).frozen).to.equal('2031-06-01T00:00:00.000Z');

        // A file this server did not write is ignored.
        Fs.writeFileSync(Path.join(dataDir, clockFileName), '{"start": "2031-06-01T00:00:00.000Z"}');
        expect(defaultClock({ storage: 'file', dataDir, clock: '2031-06-01T00:00:00.000Z' }, false, log).frozen).to.equal('2031-06-01T00:00:00.000Z');
        Fs.writeFileSync(Path.join(dataDir, clockFileName), '{"start": "2031-06-01T00:00:00.000Z", "now": "later"}');
        expect(defaultClock({ storage: 'file', dataDir, clock: '2031-06-01T00:00:00.000Z' }, false, log).frozen).to.equal('2031-06-01T00:00:00.000Z');
        Fs.writeFileSync(Path.join(dataDir, clockFileName), '{"now": "2031-07-01T00:00:00.000Z"}');
        expect(defaultClock({ storage: 'file', dataDir, clock: '2031-06-01T00:00:00.000Z' }, false, log).frozen).to.equal('2031-06-01T00:00:00.000Z');
        for (const text of ['null', '"2031-07-01T00:00:00.000Z"', '{"start": 1, "now": "2031-07-01T00:00:00.000Z"}', '{"start": "2031-06-01T00:00:00.000Z", "now": 1}']) {
            Fs.writeFileSync(Path.join(dataDir, clockFileName), text);
            expect(defaultClock({ storage: 'file', dataDir, clock: '2031-06-01T00:00:00.000Z' }, false, log).frozen, text).to.equal('2031-06-01T00:00:00.000Z');
        }

        Fs.writeFileSync(Path.join(dataDir, clockFileName), 'not json');
        expect(defaultClock({ storage: 'file', dataDir, clock: '2031-06-01T00:00:00.000Z' }, false, log).frozen).to.equal('2031-06-01T00:00:00.000Z');

        // Where other processes serve the same databases, each process's clock starts at CLOCK, and no file is kept.
        const sharedDir = tempDir();
        defaultClock({ storage: 'file', dataDir: sharedDir, clock: '2030-01-01T00:00:00.000Z' }, true, log).advance(hour);
        expect(defaultClock({ storage: 'file', dataDir: sharedDir, clock: '2030-01-01T00:00:00.000Z' }, true, log).frozen).to.equal('2030-01-01T00:00:00.000Z');
        expect(Fs.existsSync(Path.join(sharedDir, clockFileName))).to.be.false();
    });

    it('logs a clock file it cannot write as the clock moves, and the clock moves on', () => {

        const lines: Record<string, unknown>[] = [];
        const dataDir = tempDir();
        const clock = defaultClock({ storage: 'file', dataDir, clock: '2030-01-01T00:00:00.000Z' }, false, (tags, data) => lines.push({ tags, ...data }));
        // A directory where the file's replacement would go: the rename fails.
        Fs.rmSync(Path.join(dataDir, clockFileName));
        Fs.mkdirSync(Path.join(dataDir, clockFileName, 'inside'), { recursive: true });
        clock.advance(hour);
        expect(clock.frozen).to.equal('2030-01-01T01:00:00.000Z');
        expect(lines).to.have.length(1);
        expect(lines[0]).to.include({ task: 'clock file' });
    });

    it('polls for what other processes made due only where they may share its databases', () => {

        expect(resolveSettings(builtInNamespaces, {}).transitionPollMs).to.equal(0);
        expect(resolveSettings(builtInNamespaces, { databaseUrl: 'postgres://127.0.0.1:1/none', jwtSecret: 'a'.repeat(32) }).transitionPollMs).to.equal(1000);
    });

    it('reads CLOCK and --clock as an instant, and refuses one that is not', () => {

        expect(settingsFromEnvironment({ CLOCK: '2030-01-01T00:00:00Z' }).clock).to.equal('2030-01-01T00:00:00.000Z');
        expect(settingsFromEnvironment({ CLOCK: '2030-01-01T00:00:00Z' }, { clock: '2031-01-01T00:00:00Z' }).clock).to.equal('2031-01-01T00:00:00.000Z');
        expect(() => settingsFromEnvironment({ CLOCK: 'tomorrow' })).to.throw(/^CLOCK /);
        expect(() => settingsFromEnvironment({ CLOCK: '1969-12-31T23:59:59Z' })).to.throw('CLOCK must be 1970-01-01T00:00:00Z or later: a clock stands between 1970 and the year 9999, which records can hold');
        expect(() => settingsFromEnvironment({}, { clock: '2030-01-01' })).to.throw(/^--clock /);
    });

    describe('over HTTP', () => {

        let dataDir: string;
        let server: Server;

        before(async () => {

            dataDir = tempDir();
            server = await testServer({ storage: 'file', dataDir, clock: '2030-01-01T00:00:00.000Z' });
        });

        after(async () => {

            await server.stop();
        });

        it('reads and moves the clock for an admin only, and records are made at its instant', async () => {

            expectError(await server.inject('/_clock'), 401);
            expectError(await server.inject({ url: '/_clock', headers: bearer(server, 'alice') }), 403);
            expectError(await server.inject({ method: 'PUT', url: '/_clock', headers: bearer(server, 'alice'), payload: { advance: '1d' } }), 403);

            const read = await server.inject({ url: '/_clock', headers: adminBearer(server) });
            expect(body(read)).to.equal({ now: '2030-01-01T00:00:00.000Z', frozen: '2030-01-01T00:00:00.000Z' });

            const moved = await server.inject({ method: 'PUT', url: '/_clock', headers: adminBearer(server), payload: { advance: '3d' } });
            expect(moved.statusCode).to.equal(200);
            expect(body(moved)).to.equal({ now: '2030-01-04T00:00:00.000Z', frozen: '2030-01-04T00:00:00.000Z', applied: {}, attempted: 0, remaining: 0 });

            const set = await server.inject({ method: 'PUT', url: '/_clock', headers: adminBearer(server), payload: { now: '2030-02-01T12:00:00Z' } });
            expect(body(set)).to.include({ now: '2030-02-01T12:00:00.000Z' });
            const product = await server.inject({ method: 'POST', url: '/v1/commerce/products', headers: bearer(server, 'alice'), payload: { name: 'Kept clock', price: 1, currency: 'USD', business_id: 'd851fadb-03ca-5a24-ba16-c15cce19933b' } });
            expect(body(product)).to.include({ created_at: '2030-02-01T12:00:00.000Z' });

            expectError(await server.inject({ method: 'PUT', url: '/_clock', headers: adminBearer(server), payload: { advance: '1d', now: '2030-01-01T00:00:00Z' } }), 400, 'validation_failed');
            expectError(await server.inject({ method: 'PUT', url: '/_clock', headers: adminBearer(server), payload: { now: '1969-12-31T00:00:00Z' } }), 400, 'validation_failed', 'now');
        });

        it('logs a clock file it cannot write to the server\'s log, and the clock moves on', async () => {

            const own = tempDir();
            const logged = await testServer({ storage: 'file', dataDir: own, clock: '2030-01-01T00:00:00.000Z' });
            try {
                const lines: string[][] = [];
                logged.events.on('log', (event) => lines.push(event.tags));
                // A directory where the file's replacement would go: the rename fails.
                Fs.rmSync(Path.join(own, clockFileName));
                Fs.mkdirSync(Path.join(own, clockFileName, 'inside'), { recursive: true });

                const moved = await logged.inject({ method: 'PUT', url: '/_clock', headers: adminBearer(logged), payload: { advance: '1h' } });
                expect(body(moved)).to.equal({ now: '2030-01-01T01:00:00.000Z', frozen: '2030-01-01T01:00:00.000Z', applied: {}, attempted: 0, remaining: 0 });
                expect(lines).to.equal([['error', 'listener']]);
            }
            finally {
                await logged.stop();
            }
        });

        it('goes on from where the clock stood after a restart with the same CLOCK', async () => {

            await server.inject({ method: 'PUT', url: '/_clock', headers: adminBearer(server), payload: { now: '2030-03-01T00:00:00Z' } });
            await server.stop();
            server = await testServer({ storage: 'file', dataDir, clock: '2030-01-01T00:00:00.000Z' });
            expect(body(await server.inject({ url: '/_clock', headers: adminBearer(server) }))).to.equal({ now: '2030-03-01T00:00:00.000Z', frozen: '2030-03-01T00:00:00.000Z' });
        });
    });
});


describe('an instance\'s timeline', () => {

    // The notes namespace of the tests, with a store that moves with time: its transitions are rows of an array.
    const store = new ArrayStore();
    let failing = false;
    const timedNotes: Namespace = {
        ...notesNamespace,
        timed: () => (failing ? { nextDue: () => Promise.reject(new Error('no timeline')), applyDue: () => Promise.resolve([]) } : store)
    };

    it('applies what fell due while the server was stopped as it starts, before it answers, and logs what it applied', async () => {

        const lines: Record<string, unknown>[] = [];
        const logStream = new Stream.Writable({
            write(chunk, encoding, callback) {

                lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
                callback();
            }
        });
        const overdue = new ArrayStore([{ id: 'late', due: new Date('2020-01-01T00:00:00Z'), type: 'logistics.booking.completed' }]);
        // No demo data: only the fake store's transition is logged.
        const server = await testServer({ namespaces: [...builtInNamespaces, { ...notesNamespace, timed: () => overdue }], seed: false, logLevel: 'debug', logStream });
        try {
            expect(overdue.applied.map((row) => row.id)).to.equal(['late']);
            expect(lines.filter((line) => (line.tags as string[] | undefined)?.includes('transitions')).map((line) => line.data)).to.equal([{ applied: { 'logistics.booking.completed': 1 } }]);
        }
        finally {
            await server.stop();
        }
    });

    it('refuses an instance whose clock would stand before 1970, and settles a move made in the clock\'s last year at its last instant', async () => {

        const kit = await createTestKit();
        try {
            const early = await kit.server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(kit.server), payload: { clock: '1960-01-01T00:00:00Z' } });
            expect(expectError(early, 400, 'validation_failed').details).to.equal([{ field: 'clock', message: 'clock must be 1970-01-01T00:00:00Z or later: a clock stands between 1970 and the year 9999, which records can hold' }]);

            const t = await kit.instance({ clock: '9999-12-30T12:00:00Z', pay: true, seed: 'none' });
            const res = await t.inject({ method: 'POST', url: '/v1/pay/gateway/deposit', headers: { authorization: `Bearer ${t.token('zoe')}`, 'idempotency-key': 'last-year' }, payload: { provider_id: 'bank-transfer', asset: 'EUR', amount: 1000 } });
            expect(res.statusCode).to.equal(201);
            expect(JSON.parse(res.payload)).to.include({ status: 'pending', created_at: '9999-12-30T12:00:00.000Z', settles_at: '9999-12-31T23:59:59.999Z' });
            expect(await t.clock.set('9999-12-31T23:59:59.999Z')).to.equal({ 'pay.transaction.completed': 1 });
        }
        finally {
            await kit.close();
        }
    });

    it('answers a move of an instance\'s clock with the transitions it applied, through the kit and over HTTP', async () => {

        // A descriptor of its own: the images another test's instances found nothing pending in are not this one's.
        const kit = await createTestKit({ namespaces: [...builtInNamespaces, { ...timedNotes }] });
        try {
            store.pending.push(
                { id: 'n1', due: at(hour), type: 'logistics.booking.started' },
                { id: 'n2', due: at(2 * hour), type: 'logistics.booking.started' },
                { id: 'n3', due: at(26 * hour), type: 'logistics.booking.completed' }
            );
            const t = await kit.instance({ clock: start.toISOString(), seed: 'none' });
            expect(await t.clock.advance('90m')).to.equal({ 'logistics.booking.started': 1 });

            const res = await kit.server.inject({ method: 'PUT', url: `/_instances/${t.id}/clock`, headers: adminBearer(kit.server), payload: { advance: '1d' } });
            expect(res.statusCode).to.equal(200);
            expect(body(res)).to.include({ clock: '2030-01-02T01:30:00.000Z', applied: { 'logistics.booking.started': 1 } });
            expect(await t.clock.set('2030-01-03T00:00:00Z')).to.equal({ 'logistics.booking.completed': 1 });
            expect(store.applied.map((row) => row.due)).to.equal(['2030-01-01T01:00:00.000Z', '2030-01-01T02:00:00.000Z', '2030-01-02T02:00:00.000Z']);

            // Overdue rows of a data set put back are applied as it is put back.
            const snapshot = await t.snapshot();
            store.pending.push({ id: 'n4', due: at(hour), type: 'logistics.booking.started' });
            await t.restore(snapshot);
            expect(store.pending).to.equal([]);

            // An instance whose timeline cannot be read is not made, and its data set is closed.
            failing = true;
            await expect(kit.instance({ seed: 'none' })).to.reject(Error, 'no timeline');
            expect(kit.server.app.localgate.instances.list()).to.have.length(1);
        }
        finally {
            failing = false;
            await kit.close();
        }
    });
    it('leaves a database closed that is still an image holding nothing due, and applies what an image holds due in every instance made from it', async () => {

        const kit = await createTestKit({ instancePoolMib: 0 });
        try {
            const quay = { id: 'quay', name: 'Quay', address: '1 Quay Street', city: 'Harbourside', latitude: 50.6, longitude: -3.4, created_at: '2030-01-01T00:00:00Z' };
            const van = { id: 'v-van', make: 'Ford', model: 'Transit', year: 2021, seats: 3, daily_rate: 70, currency: 'GBP', created_at: '2030-01-01T00:00:00Z' };
            const booking = { id: 'b-1', vehicle_id: 'v-van', pickup_location_id: 'quay', dropoff_location_id: 'quay', pickup_at: '2030-02-01T00:00:00Z', return_at: '2030-02-02T00:00:00Z', customer_id: 'ana', created_at: '2030-01-02T00:00:00Z' };
            const fixture = { logistics: { locations: [quay], vehicles: [van], bookings: [booking] } };
            const opened = (id: string) => kit.server.app.localgate.instances.find(id)?.data.startingImage?.('logistics') === null;
            const status = async (t: TestInstance) => body<{ status: string }>(await t.inject({ url: '/v1/logistics/bookings/b-1', headers: t.auth('ana') })).status;

            // Made from one image, each instance applies the booking's start and end due by its clock as it is made.
            for (let i = 0; i < 2; ++i) {
                const t = await kit.instance({ fixture, clock: '2030-03-01T00:00:00Z' });
                expect(opened(t.id)).to.be.true();
                expect(await status(t)).to.equal('completed');
            }

            // Nothing is due in the demo's image: once an instance has found that, the next leaves its database closed,
            // until its first request opens it; a booking written then moves with its clock.
            await kit.instance({ clock: '2030-01-01T00:00:00Z' });
            const quiet = await kit.instance({ clock: '2030-01-01T00:00:00Z' });
            expect(opened(quiet.id)).to.be.false();
            const made = await quiet.inject({ method: 'POST', url: '/v1/logistics/bookings', headers: quiet.auth('ana'), payload: { vehicle_id: '67f7b2a9-5639-460c-a9f5-d114637c1b43', pickup_location_id: '8a5c2440-7943-4c0d-bdf4-9777cd05095e', dropoff_location_id: '2f4a202e-61d6-4275-9ddb-094f7d5a839d', pickup_at: '2030-01-02T00:00:00Z', return_at: '2030-01-03T00:00:00Z' } });
            expect(made.statusCode).to.equal(201);
            expect(await quiet.clock.advance('1d')).to.equal({ 'logistics.booking.started': 1 });
        }
        finally {
            await kit.close();
        }
    });

    it('moves a provisioned namespace\'s records with time only while it is ready: in an instance with pay, not in one without', async () => {

        const pay = new ArrayStore();
        const timedPay: Namespace = { ...payNamespace, timed: () => pay };
        const kit = await createTestKit({ namespaces: builtInNamespaces.map((namespace) => (namespace === payNamespace ? timedPay : namespace)) });
        try {
            const without = await kit.instance({ clock: start.toISOString(), seed: 'none' });
            const paid = await kit.instance({ clock: start.toISOString(), seed: 'none', pay: true });
            // A pending row comes with a write, which opens the database: a copy still its image (here one that held
            // nothing pending) is not watched. A read opens it here, as the store under test is not the database's.
            expect((await paid.inject({ url: '/v1/pay/wallet', headers: paid.auth('alice') })).statusCode).to.equal(200);
            pay.pending.push({ id: 'p1', due: at(hour), type: 'pay.transaction.completed' });
            expect(await without.clock.advance('2h')).to.equal({});
            expect(pay.pending).to.have.length(1);
            expect(await paid.clock.advance('2h')).to.equal({ 'pay.transaction.completed': 1 });
            expect(pay.applied.map((row) => row.id)).to.equal(['p1']);
        }
        finally {
            await kit.close();
        }
    });
});
