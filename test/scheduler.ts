import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { Clock, type ClockMove } from '../lib/record-context';
import { Scheduler } from '../lib/data-set';
import { until } from './helpers/until';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


const start = new Date('2030-01-01T00:00:00.000Z');
const hour = 60 * 60 * 1000;

// The instant hours after the start, as ISO 8601.
const after = (hours: number): Date => new Date(start.getTime() + hours * hour);

// A log that keeps what it was told.
function keptLog(): { lines: { tags: string[]; data: Record<string, unknown> }[]; log: (tags: string[], data: object) => void } {

    const lines: { tags: string[]; data: Record<string, unknown> }[] = [];
    return { lines, log: (tags, data) => lines.push({ tags, data: data as Record<string, unknown> }) };
}

describe('Clock', () => {

    it('announces each move with its kind and the instants either side', () => {

        const clock = new Clock(start);
        const moves: ClockMove[] = [];
        const stop = clock.onMove((move) => moves.push(move));

        clock.advance(2 * hour);
        clock.freeze(after(1));
        clock.freeze(null);
        stop();
        clock.freeze(start);

        expect(moves.slice(0, 2)).to.equal([
            { kind: 'advance', from: start, to: after(2) },
            { kind: 'freeze', from: after(2), to: after(1) }
        ]);
        expect(moves).to.have.length(3);
        expect(moves[2]!.kind).to.equal('wall');
        expect(moves[2]!.from).to.equal(after(1));
        expect(clock.frozen).to.equal(start.toISOString());
    });
});


describe('Scheduler', () => {

    it('runs the tasks an advance of a frozen clock passes, in instant order, each with its own due instant', () => {

        const clock = new Clock(start);
        const { lines, log } = keptLog();
        const scheduler = new Scheduler(clock, log);
        const ran: string[] = [];
        const task = (name: string) => {

            return (due: Date) => ran.push(`${name} ${due.toISOString()}`);
        };

        scheduler.at(after(3), 'third', task('third'));
        scheduler.at(after(1), 'first', task('first'));
        scheduler.at(after(2), 'second', task('second'));
        scheduler.at(after(1), 'first again', task('first again'));

        clock.advance(2.5 * hour);
        expect(ran).to.equal([
            'first 2030-01-01T01:00:00.000Z',
            'first again 2030-01-01T01:00:00.000Z',
            'second 2030-01-01T02:00:00.000Z'
        ]);
        expect(scheduler.size).to.equal(1);

        clock.advance(hour);
        expect(ran[3]).to.equal('third 2030-01-01T03:00:00.000Z');
        expect(scheduler.size).to.equal(0);
        expect(lines).to.equal([]);
        scheduler.close();
    });

    it('runs nothing on a move that reaches no task, and keeps the task for a later move', () => {

        const clock = new Clock(start);
        const scheduler = new Scheduler(clock, keptLog().log);
        const ran: Date[] = [];
        scheduler.at(after(2), 'later', (due) => ran.push(due));

        clock.advance(hour);
        clock.freeze(start);
        expect(ran).to.equal([]);
        expect(scheduler.size).to.equal(1);

        clock.freeze(after(5));
        expect(ran).to.equal([after(2)]);
        scheduler.close();
    });

    it('runs a task due at or before a frozen clock\'s instant without waiting for a move', async () => {

        const clock = new Clock(start);
        const scheduler = new Scheduler(clock, keptLog().log);
        const ran: Date[] = [];
        scheduler.at(after(-1), 'overdue', (due) => ran.push(due));
        scheduler.at(start, 'now', (due) => ran.push(due));
        expect(ran).to.equal([]);

        await until('both due tasks to run', () => ran.length === 2);
        expect(ran).to.equal([after(-1), start]);
        scheduler.close();
    });

    it('runs a task on the wall clock when its timer fires', async () => {

        const clock = new Clock();
        const scheduler = new Scheduler(clock, keptLog().log);
        const due = new Date(Date.now() + 30);
        const ran: Date[] = [];
        scheduler.at(due, 'soon', (instant) => ran.push(instant));

        await until('the task to run on its timer', () => ran.length === 1);
        expect(ran).to.equal([due]);
        expect(Date.now()).to.be.at.least(due.getTime());
        expect(scheduler.size).to.equal(0);
        scheduler.close();
    });

    it('logs a task that throws or rejects under its name, without its message, and runs the rest', async () => {

        const clock = new Clock(start);
        const { lines, log } = keptLog();
        const scheduler = new Scheduler(clock, log);
        const ran: string[] = [];
        scheduler.at(after(1), 'throws', () => {

            throw new TypeError('secret-in-message');
        });
        scheduler.at(after(2), 'rejects', () => Promise.reject(new RangeError('secret-in-message')));
        scheduler.at(after(3), 'runs', () => ran.push('runs'));

        clock.advance(3 * hour);
        expect(ran).to.equal(['runs']);
        await until('both failures to be logged', () => lines.length === 2);
        expect(lines.map(({ tags, data }) => ({ tags, task: data.task, type: data.type }))).to.equal([
            { tags: ['error', 'listener'], task: 'scheduled task throws', type: 'TypeError' },
            { tags: ['error', 'listener'], task: 'scheduled task rejects', type: 'RangeError' }
        ]);
        expect(JSON.stringify(lines)).to.not.include('secret-in-message');
        scheduler.close();
    });

    it('runs a task a task schedules at an instant already due after the pass, on the timer', async () => {

        const clock = new Clock(start);
        const scheduler = new Scheduler(clock, keptLog().log);
        const ran: string[] = [];
        scheduler.at(after(1), 'parent', (due) => {

            ran.push('parent');
            scheduler.at(due, 'child', () => ran.push('child'));
        });
        scheduler.at(after(2), 'sibling', () => ran.push('sibling'));

        clock.advance(2 * hour);
        expect(ran).to.equal(['parent', 'sibling']);
        expect(scheduler.size).to.equal(1);

        await until('the task scheduled in the pass to run on the timer', () => ran.length === 3);
        expect(ran[2]).to.equal('child');
        scheduler.close();
    });

    it('drops a cancelled task, and a second cancel changes nothing', () => {

        const clock = new Clock(start);
        const scheduler = new Scheduler(clock, keptLog().log);
        const ran: string[] = [];
        const cancel = scheduler.at(after(1), 'cancelled', () => ran.push('cancelled'));
        scheduler.at(after(1), 'kept', () => ran.push('kept'));

        cancel();
        cancel();
        expect(scheduler.size).to.equal(1);
        clock.advance(hour);
        expect(ran).to.equal(['kept']);
        scheduler.close();
    });

    it('skips a task that an earlier task of the same pass cancels', () => {

        const clock = new Clock(start);
        const scheduler = new Scheduler(clock, keptLog().log);
        const ran: string[] = [];
        let cancelSecond = (): void => undefined;
        scheduler.at(after(1), 'first', () => {

            ran.push('first');
            cancelSecond();
        });
        cancelSecond = scheduler.at(after(2), 'second', () => ran.push('second'));
        scheduler.at(after(3), 'third', () => ran.push('third'));

        clock.advance(3 * hour);
        expect(ran).to.equal(['first', 'third']);
        expect(scheduler.size).to.equal(0);
        scheduler.close();
    });

    it('cancels its timer and its tasks when closed, and stops following the clock', async () => {

        const closedClock = new Clock();
        const closed = new Scheduler(closedClock, keptLog().log);
        const open = new Scheduler(new Clock(), keptLog().log);
        const ran: string[] = [];
        const due = new Date(Date.now() + 20);
        closed.at(due, 'closed', () => ran.push('closed'));
        open.at(due, 'open', () => ran.push('open'));
        closed.at(after(1), 'frozen later', () => ran.push('frozen later'));

        closed.close();
        expect(closed.size).to.equal(0);
        // The open scheduler's timer was armed after the closed one's, for the same instant: once it has fired, the
        // closed one's would have too.
        await until('the open scheduler\'s task to run', () => ran.length === 1);
        closedClock.freeze(after(2));
        expect(ran).to.equal(['open']);
        expect(() => closed.at(start, 'late', () => ran.push('late'))).to.throw('The scheduler of a closed data set takes no task (late)');
        open.close();
    });
});
