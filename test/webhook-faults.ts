import Code from '@hapi/code';
import type { Server, ServerInjectOptions } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { describeRule, FaultSet } from '../lib/data-set/fault-rules';
import { expectError } from './helpers/errors';
import { adminBearer, body, testServer } from './helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


describe('outbound fault rules', () => {

    let server: Server;

    const admin = (method: string, url: string, payload?: object) => server.inject({ method, url, headers: adminBearer(server), payload } as ServerInjectOptions);

    before(async () => {

        server = await testServer();
    });

    after(async () => {

        await server.stop();
    });

    it('are stored beside inbound rules, worded, and read back with their hits', async () => {

        const res = await admin('PUT', '/_faults', { seed: 3, rules: [
            { direction: 'outbound', event: 'pay.*', endpoint_id: 'we_1', drop: 'before', times: 2 },
            { direction: 'outbound', event: 'commerce.product.created', latency_ms: 50, drop: 'after' },
            { direction: 'inbound', path: '/v1/pay/*', status: 503 }
        ] });
        expect(res.statusCode, res.payload).to.equal(200);
        const { rules } = body<{ rules: Record<string, unknown>[] }>(res);
        expect(rules.map(({ description }) => description)).to.equal([
            'webhook pay.* to we_1: not sent, counted failed',
            'webhook commerce.product.created: 50 ms late, sent, counted failed as if unanswered',
            'any method /v1/pay/*: 503'
        ]);
        expect(rules[0]).to.include({ direction: 'outbound', event: 'pay.*', endpoint_id: 'we_1', drop: 'before', times: 2, hits: 0 });
        expect(body<{ rules: unknown[] }>(await admin('GET', '/_faults')).rules).to.equal(rules);
        await admin('DELETE', '/_faults');
    });

    const refusals: [string, object, string][] = [
        ['an outbound rule without its event', { direction: 'outbound', drop: 'before' }, 'rules.0.event'],
        ['an outbound rule with a path', { direction: 'outbound', event: 'pay.*', path: '/v1/pay/x', drop: 'before' }, 'rules.0.path'],
        ['an outbound rule with a status', { direction: 'outbound', event: 'pay.*', status: 500 }, 'rules.0.status'],
        ['an outbound rule with a method', { direction: 'outbound', event: 'pay.*', method: 'POST', drop: 'after' }, 'rules.0.method'],
        ['an outbound rule on an unknown type', { direction: 'outbound', event: 'pay.nothing', drop: 'after' }, 'rules.0.event'],
        ['an outbound rule on a prefix no type has', { direction: 'outbound', event: 'weather.*', drop: 'after' }, 'rules.0.event'],
        ['an inbound rule with an event', { path: '/v1/pay/x', event: 'pay.*', status: 500 }, 'rules.0.event'],
        ['an inbound rule with an endpoint', { path: '/v1/pay/x', endpoint_id: 'we_1', status: 500 }, 'rules.0.endpoint_id'],
        ['an inbound rule without its path', { status: 500 }, 'rules.0.path'],
        ['a direction of neither kind', { direction: 'sideways', path: '/v1/pay/x', status: 500 }, 'rules.0.direction']
    ];

    for (const [what, rule, field] of refusals) {
        it(`refuses ${what} with a 400 naming ${field}`, async () => {

            const error = expectError(await admin('PUT', '/_faults', { rules: [rule] }), 400, 'validation_failed', field);
            expect(error.message).to.not.contain('"');
        });
    }

    it('words which direction takes a field it refuses', async () => {

        const outbound = expectError(await admin('PUT', '/_faults', { rules: [{ direction: 'outbound', event: 'pay.*', status: 500 }] }), 400);
        expect(outbound.details).to.equal([{ field: 'rules.0.status', message: 'rules[0].status is for inbound rules: an outbound rule matches event and endpoint_id, and has latency_ms or drop' }]);
        const idle = expectError(await admin('PUT', '/_faults', { rules: [{ direction: 'outbound', event: 'pay.*' }] }), 400);
        expect(idle.details).to.equal([{ field: 'rules.0', message: 'rules[0] has no effect: give it status, latency_ms or drop' }]);
        const inbound = expectError(await admin('PUT', '/_faults', { rules: [{ path: '/v1/pay/x', event: 'pay.*', status: 500 }] }), 400);
        expect(inbound.details).to.equal([{ field: 'rules.0.event', message: 'rules[0].event is for outbound rules (direction: outbound)' }]);
    });

    it('leave the API\'s requests alone, as inbound rules leave deliveries alone', async () => {

        await admin('PUT', '/_faults', { rules: [{ direction: 'outbound', event: '*', drop: 'before' }] });
        const res = await server.inject('/v1/weather/current?city=Lisbon');
        expect(res.statusCode, res.payload).to.not.equal(499);
        expect(body<{ rules: { hits: number }[] }>(await admin('GET', '/_faults')).rules[0]!.hits).to.equal(0);
        await admin('DELETE', '/_faults');

        const set = new FaultSet(0, [{ path: '/v1/*', drop: 'before' }]);
        expect(set.decideOutbound('pay.transaction.created', 'we_1')).to.equal(null);
        expect(set.drops).to.equal(true);
    });

    it('match by event type or prefix and by endpoint, with after, times and the seeded probability', () => {

        const set = new FaultSet(9, [
            { direction: 'outbound', event: 'pay.transaction.created', endpoint_id: 'we_a', after: 1, times: 1, drop: 'before' },
            { direction: 'outbound', event: 'logistics.*', probability: 0.5, latency_ms: [10, 20] }
        ]);
        expect(set.drops).to.equal(false);
        expect(set.decideOutbound('pay.transaction.created', 'we_b')).to.equal(null);
        expect(set.decideOutbound('pay.transaction.created', 'we_a')).to.equal(null);
        expect(set.decideOutbound('pay.transaction.created', 'we_a')!.rule.drop).to.equal('before');
        expect(set.decideOutbound('pay.transaction.created', 'we_a')).to.equal(null);
        expect(set.decide('POST', '/v1/pay/payments')).to.equal(null);

        const drawn = Array.from({ length: 20 }, () => set.decideOutbound('logistics.booking.created', 'we_a')?.latencyMs ?? null);
        const again = new FaultSet(9, [{ direction: 'outbound', event: 'logistics.*', probability: 0.5, latency_ms: [10, 20] }]);
        expect(Array.from({ length: 20 }, () => again.decideOutbound('logistics.booking.started', 'we_z')?.latencyMs ?? null)).to.equal(drawn);
        expect(drawn.filter((latency) => latency === null).length).to.be.between(1, 19);
        expect(describeRule({ direction: 'outbound', event: 'logistics.*', latency_ms: [10, 20] })).to.equal('webhook logistics.*: 10 to 20 ms late');
    });
});
