import Stream from 'node:stream';

import Code from '@hapi/code';
import type { Server } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { HttpSender } from '../lib/data-set';
import { expectError } from './helpers/errors';
import { adminBearer, bearer, body, testServer } from './helpers/server';
import { until } from './helpers/until';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


interface InstanceBody {
    id: string;
    base_path: string;
    clock: string | null;
}

// The live instance a test made, as the server holds it.
function instanceOf(server: Server, id: string) {

    return server.app.localgate.instances.find(id)!;
}


describe('a data set\'s services', () => {

    const lines: Record<string, unknown>[] = [];
    let server: Server;

    before(async () => {

        const logStream = new Stream.Writable({
            write(chunk, encoding, callback) {

                lines.push(JSON.parse(chunk.toString()));
                callback();
            }
        });

        server = await testServer({ logLevel: 'info', logStream });
    });

    after(() => server.stop());

    const create = async (payload: Record<string, unknown>): Promise<InstanceBody> => {

        const res = await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server), payload });
        expect(res.statusCode).to.equal(201);
        return body<InstanceBody>(res);
    };

    it('runs an instance\'s scheduled tasks when PUT /_instances/{id}/clock advances it, in instant order, and no other instance\'s', async () => {

        const first = await create({ seed: 'none', clock: '2030-01-01T00:00:00Z' });
        const second = await create({ seed: 'none', clock: '2030-01-01T00:00:00Z' });
        const ran: string[] = [];
        const { scheduler } = instanceOf(server, first.id).services;
        scheduler.at(new Date('2030-01-01T02:00:00Z'), 'two', (due) => ran.push(`two ${due.toISOString()}`));
        scheduler.at(new Date('2030-01-01T01:00:00Z'), 'one', (due) => ran.push(`one ${due.toISOString()}`));
        scheduler.at(new Date('2030-01-02T00:00:00Z'), 'tomorrow', () => ran.push('tomorrow'));
        instanceOf(server, second.id).services.scheduler.at(new Date('2030-01-01T00:30:00Z'), 'other', () => ran.push('other'));

        const res = await server.inject({ method: 'PUT', url: `/_instances/${first.id}/clock`, headers: adminBearer(server), payload: { advance: '2h' } });
        expect(res.statusCode).to.equal(200);
        expect(body<InstanceBody>(res).clock).to.equal('2030-01-01T02:00:00.000Z');
        expect(ran).to.equal(['one 2030-01-01T01:00:00.000Z', 'two 2030-01-01T02:00:00.000Z']);
        expect(scheduler.size).to.equal(1);

        const set = await server.inject({ method: 'PUT', url: `/_instances/${first.id}/clock`, headers: adminBearer(server), payload: { now: '2030-01-03T00:00:00Z' } });
        expect(set.statusCode).to.equal(200);
        expect(ran).to.equal(['one 2030-01-01T01:00:00.000Z', 'two 2030-01-01T02:00:00.000Z', 'tomorrow']);
    });

    it('hears what its stores committed: a due instant arms the timeline, only events wake the listeners', async () => {

        const made = await create({ seed: 'none' });
        const { services } = instanceOf(server, made.id);
        let heard = 0;
        const stop = services.onEvents(() => {

            heard += 1;
        });

        const due = new Date(Date.now() + 3_600_000);
        const tasks = services.scheduler.size;
        services.committed({ events: 0, deliveries: false, due });
        expect(services.scheduler.size).to.equal(tasks + 1);
        expect(heard).to.equal(0);
        services.committed({ events: 2, deliveries: false, due: null });
        expect(heard).to.equal(1);
        stop();
    });

    it('leaves the clock and the tasks where they were when an advance is refused', async () => {

        const instance = await create({ seed: 'none', clock: '9999-12-31T00:00:00Z' });
        const ran: string[] = [];
        instanceOf(server, instance.id).services.scheduler.at(new Date('9999-12-31T12:00:00Z'), 'noon', () => ran.push('noon'));

        const res = await server.inject({ method: 'PUT', url: `/_instances/${instance.id}/clock`, headers: adminBearer(server), payload: { advance: '2d' } });
        expectError(res, 422, 'clock_out_of_range', 'advance');
        expect(ran).to.equal([]);
        expect(instanceOf(server, instance.id).services.scheduler.size).to.equal(1);
    });

    it('logs a failed task with the server\'s log under its name, and the instance keeps answering', async () => {

        const instance = await create({ seed: 'none', clock: '2030-01-01T00:00:00Z' });
        const { scheduler } = instanceOf(server, instance.id).services;
        scheduler.at(new Date('2030-01-01T00:00:01Z'), 'expire holds', () => {

            throw new Error('a message that stays out of the log');
        });

        const res = await server.inject({ method: 'PUT', url: `/_instances/${instance.id}/clock`, headers: adminBearer(server), payload: { advance: '1s' } });
        expect(res.statusCode).to.equal(200);
        const failed = lines.filter((line) => (line.tags as string[] | undefined)?.includes('listener'));
        expect(failed).to.have.length(1);
        expect(failed[0]!.data).to.include({ task: 'scheduled task expire holds', type: 'Error' });
        expect(JSON.stringify(lines)).to.not.include('a message that stays out of the log');

        const products = await server.inject(`${instance.base_path}/v1/commerce/products`);
        expect(products.statusCode).to.equal(200);
    });

    it('moves a reset\'s clock back under its tasks, which run when the clock passes them again', async () => {

        const instance = await create({ seed: 'none', clock: '2030-01-01T00:00:00Z' });
        const advance = (by: string) => server.inject({ method: 'PUT', url: `/_instances/${instance.id}/clock`, headers: adminBearer(server), payload: { advance: by } });
        const ran: string[] = [];
        await advance('1h');
        instanceOf(server, instance.id).services.scheduler.at(new Date('2030-01-01T01:30:00Z'), 'half past one', () => ran.push('half past one'));

        const reset = await server.inject({ method: 'POST', url: `/_instances/${instance.id}/reset`, headers: adminBearer(server) });
        expect(reset.statusCode).to.equal(200);
        expect(body<InstanceBody>(reset).clock).to.equal('2030-01-01T00:00:00.000Z');
        await advance('1h');
        expect(ran).to.equal([]);

        await advance('30m');
        expect(ran).to.equal(['half past one']);
    });

    it('closes a deleted instance\'s services: no task runs, its journal and faults go with it', async () => {

        const instance = await create({ seed: 'none' });
        const services = instanceOf(server, instance.id).services;
        const ran: string[] = [];
        services.scheduler.at(new Date(Date.now() + 60_000), 'in a minute', () => ran.push('in a minute'));
        await server.inject({ method: 'PUT', url: `/_instances/${instance.id}/faults`, headers: adminBearer(server), payload: { rules: [{ path: '/v1/*', status: 503 }] } });
        await server.inject({ url: `${instance.base_path}/v1/commerce/products`, headers: bearer(server, 'alice') });
        expect(services.journal.list()).to.have.length(1);
        expect(services.faults!.describe().rules).to.have.length(1);

        const res = await server.inject({ method: 'DELETE', url: `/_instances/${instance.id}`, headers: adminBearer(server) });
        expect(res.statusCode).to.equal(204);
        expect(services.scheduler.size).to.equal(0);
        expect(services.journal.list()).to.equal([]);
        expect(services.faults).to.equal(null);
        expect(() => services.scheduler.at(new Date(), 'late', () => ran.push('late'))).to.throw('The scheduler of a closed data set takes no task (late)');
        expect(ran).to.equal([]);
    });

    it('gives the default data set services of its own, on the wall clock', async () => {

        const { services } = (await server.inject('/health')).request.app.scope;
        expect(services.clock.frozen).to.equal(null);
        const ran: Date[] = [];
        const due = new Date(Date.now() + 10);
        services.scheduler.at(due, 'default', (instant) => ran.push(instant));
        await until('the task to run on the wall clock', () => ran.length > 0);

        expect(ran).to.equal([due]);
    });
});


describe('the outbound sender', () => {

    it('is a sender of the data set\'s own, and the default data set\'s services close with the server', async () => {

        const server = await testServer();
        const { services } = (await server.inject('/health')).request.app.scope;
        expect(services.sender).to.be.an.instanceof(HttpSender);
        services.scheduler.at(new Date(Date.now() + 60_000), 'after stop', () => undefined);
        expect(services.scheduler.size).to.equal(1);

        await server.stop();
        expect(services.scheduler.size).to.equal(0);
    });
});
