import { setTimeout as sleep } from 'node:timers/promises';

import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { Clock } from '../lib/record-context';
import { Loop, Scheduler, type PhaseWork } from '../lib/data-set';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


const start = new Date('2030-01-01T00:00:00.000Z');
const at = (ms: number): Date => new Date(start.getTime() + ms);


function loopOver(clock: Clock): { loop: Loop; scheduler: Scheduler; ran: string[]; failures: object[] } {

    const failures: object[] = [];
    const scheduler = new Scheduler(clock, (_tags, data) => failures.push(data));
    return { loop: new Loop(scheduler, (tags, data) => failures.push({ tags, ...data })), scheduler, ran: [], failures };
}


// A phase's work that writes down each run, handed instant or poll.
function noting(ran: string[], name: string): PhaseWork {

    return {
        due: (instant) => ran.push(`${name} ${instant.toISOString()}`),
        poll: () => ran.push(`${name} poll`)
    };
}


describe('the loop of a data set', () => {

    it('keeps one task for the earliest instant its phases wait for, and runs the phases due by it in phase order', async () => {

        const clock = new Clock(start);
        const { loop, scheduler, ran } = loopOver(clock);
        // Joined attempts first: the order is the loop's, transitions before attempts.
        const attempts = loop.join('attempts', noting(ran, 'attempts'));
        const transitions = loop.join('transitions', noting(ran, 'transitions'));
        attempts.wake(at(10));
        transitions.wake(at(20));
        expect(scheduler.size).to.equal(1);
        // The same earliest instant again keeps the task; an earlier one takes its place.
        attempts.wake(at(10));
        transitions.wake(at(10));
        expect(scheduler.size).to.equal(1);
        expect([transitions.waiting, attempts.waiting]).to.equal([at(10).getTime(), at(10).getTime()]);
        clock.advance(10);
        await sleep(1);
        expect(ran).to.equal([`transitions ${at(10).toISOString()}`, `attempts ${at(10).toISOString()}`]);
        expect([transitions.waiting, attempts.waiting]).to.equal([null, null]);
        expect(scheduler.size).to.equal(0);

        // A phase due later stays waiting while an earlier one runs.
        ran.length = 0;
        transitions.wake(at(20));
        attempts.wake(at(30));
        clock.advance(10);
        await sleep(1);
        expect(ran).to.equal([`transitions ${at(20).toISOString()}`]);
        expect(scheduler.size).to.equal(1);
        attempts.rest();
        expect(scheduler.size).to.equal(0);

        // A phase waiting for nothing is not run.
        ran.length = 0;
        attempts.wake(at(30));
        clock.advance(10);
        await sleep(1);
        expect(ran).to.equal([`attempts ${at(30).toISOString()}`]);
        loop.close();
        scheduler.close();
    });

    it('logs a phase that fails and runs the next, when due and on each poll, until closed', async () => {

        const { loop, scheduler, ran, failures } = loopOver(new Clock());
        const failing: PhaseWork = {
            due: () => Promise.reject(new Error('database closed')),
            poll: () => {

                throw new Error('database closed');
            }
        };
        // A phase joined again does its new work only.
        loop.join('transitions', noting(ran, 'replaced'));
        const transitions = loop.join('transitions', failing);
        const attempts = loop.join('attempts', noting(ran, 'attempts'));
        loop.poll(0);
        const due = new Date(Date.now() + 5);
        transitions.wake(due);
        attempts.wake(due);
        await sleep(30);
        expect(ran).to.equal([`attempts ${due.toISOString()}`]);
        loop.poll(5);
        // Polled again, its interval replaced.
        loop.poll(5);
        await sleep(30);
        loop.close();
        const polls = ran.length;
        expect(polls).to.be.above(2);
        expect(ran.slice(1).every((line) => line === 'attempts poll')).to.be.true();
        expect(failures[0]).to.include({ tags: ['error', 'listener'], task: 'scheduled task transitions', type: 'Error' });
        expect(failures.slice(1).every((failure) => (failure as { task: string }).task === 'transitions poll')).to.be.true();

        // Closed: no poll, no task.
        loop.poll(5);
        attempts.wake(new Date());
        await sleep(20);
        expect(ran.length).to.equal(polls);
        expect(scheduler.size).to.equal(0);
        scheduler.close();
    });
});
