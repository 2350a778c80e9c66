import Code from '@hapi/code';
import type { Server, ServerInjectOptions, ServerInjectResponse } from '@hapi/hapi';
import Lab from '@hapi/lab';

import type { DeliveryEntry } from '../lib/data-set/deliveries';
import { engineServer, engines } from './helpers/postgres';
import { startReceiver, type Answer, type Receiver } from './helpers/receiver';
import { adminBearer, bearer, body, type List, testServer } from './helpers/server';


export const lab = Lab.script();
const { describe, it, afterEach } = lab;
const { expect } = Code;


const start = '2030-01-01T00:00:00.000Z';
const hour = 3_600_000;

const later = (from: string | number, ms: number): string => new Date((typeof from === 'string' ? Date.parse(from) : from) + ms).toISOString();


function answered<T = Record<string, unknown>>(res: ServerInjectResponse, status = 200): T {

    expect(res.statusCode, res.payload).to.equal(status);
    return body<T>(res);
}


// A server's admin calls and a booking of its demo vehicle, on the default data set unless a base path is given.
function drive(server: Server) {

    const admin = (method: string, url: string, payload?: object) => server.inject({ method, url, headers: adminBearer(server), payload } as ServerInjectOptions);
    return {
        admin,
        async book(pickupAt: string, returnAt: string): Promise<string> {

            const vehicles = answered<{ data: { id: string }[] }>(await server.inject('/v1/logistics/vehicles?available=true&limit=1')).data;
            const locations = answered<{ data: { id: string }[] }>(await server.inject('/v1/logistics/locations?limit=1')).data;
            const res = await server.inject({
                method: 'POST', url: '/v1/logistics/bookings', headers: bearer(server, 'alice'),
                payload: { vehicle_id: vehicles[0]!.id, pickup_location_id: locations[0]!.id, dropoff_location_id: locations[0]!.id, pickup_at: pickupAt, return_at: returnAt }
            });
            return answered<{ id: string }>(res, 201).id;
        },
        async deliveries(): Promise<DeliveryEntry[]> {

            return answered<List<DeliveryEntry>>(await admin('GET', '/_webhooks/deliveries?limit=100')).data;
        },
        async eventTypes(): Promise<string[]> {

            return answered<List<{ type: string }>>(await admin('GET', '/_events?limit=100')).data.map(({ type }) => type);
        }
    };
}


// Answers that keep the connection and never answer, each resolving `arrived` once that many requests have come.
function silence(receiver: Receiver, count: number): Promise<void> {

    return new Promise((resolve) => {

        const silent: Answer = () => {

            if (receiver.received.length === count) {
                resolve();
            }
        };

        receiver.answers.push(...Array.from({ length: count }, () => silent));
    });
}


describe('a move of the clock', () => {

    const servers: Server[] = [];
    const receivers: Receiver[] = [];

    afterEach(async () => {

        await Promise.all(servers.splice(0).map((server) => server.stop()));
        await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
    });

    const serve = async (engine: 'sqlite' | 'postgres', options: Parameters<typeof engineServer>[1] = {}): Promise<Server> => {

        const server = await engineServer(engine, options);
        servers.push(server);
        return server;
    };

    const receive = async (): Promise<Receiver> => {

        const receiver = await startReceiver();
        receivers.push(receiver);
        return receiver;
    };

    it('counts the settlement it passes on an instance that follows the wall clock, though the wall clock\'s task was armed for it', async () => {

        const server = await testServer();
        servers.push(server);
        const { admin } = drive(server);
        const { id } = answered<{ id: string }>(await admin('POST', '/_instances', { seed: 'none', pay: true }), 201);
        const deposit = await server.inject({
            method: 'POST', url: `/i/${id}/v1/pay/gateway/deposit`, headers: { ...bearer(server, 'alice'), 'idempotency-key': 'deposit-1' },
            payload: { provider_id: 'bank-transfer', asset: 'USD', amount: 10000 }
        });
        expect(answered<{ status: string }>(deposit, 201).status).to.equal('pending');

        const moved = answered<{ applied: object; attempted: number; remaining: number }>(await admin('PUT', `/_instances/${id}/clock`, { advance: '3d' }));
        expect(moved).to.include({ applied: { 'pay.transaction.completed': 1 }, attempted: 0, remaining: 0 });
        const wallet = answered<{ balances: object[] }>(await server.inject({ url: `/i/${id}/v1/pay/wallet`, headers: bearer(server, 'alice') }));
        expect(wallet.balances).to.equal([{ asset: 'USD', amount: 10000, pending_in: 0, pending_out: 0 }]);
    });

    for (const engine of engines) {
        describe(`on ${engine}`, () => {

            it('counts the transitions it passes on a default data set that follows the wall clock', async () => {

                const server = await serve(engine);
                const { admin, book } = drive(server);
                const now = Date.now();
                await book(later(now, hour), later(now, 2 * hour));

                const moved = answered<{ frozen: string; applied: object; attempted: number; remaining: number }>(await admin('PUT', '/_clock', { advance: '1d' }));
                expect(moved).to.include({ applied: { 'logistics.booking.started': 1, 'logistics.booking.completed': 1 }, attempted: 0, remaining: 0 });
            });

            it('makes a retry due before a later transition before it, and writes a given-up event at its instant\'s place', async () => {

                const server = await serve(engine, { clock: start, webhookTimeoutMs: 2000 });
                const receiver = await receive();
                const { admin, book, deliveries, eventTypes } = drive(server);
                answered(await admin('PUT', '/_webhooks', { endpoints: [{ url: receiver.url, types: ['logistics.*'], retry_schedule: ['1h', '1d'] }] }));
                // The booking's creation fails thrice, its start and completion are delivered.
                receiver.answers.push(500, 500, 200, 500, 200);
                await book(later(start, 24 * hour), later(start, 72 * hour));
                // Its request's first attempt, made as the request answered, is waited for.
                answered(await admin('POST', '/_webhooks/flush'));

                const moved = answered<{ applied: object; attempted: number; remaining: number }>(await admin('PUT', '/_clock', { advance: '4d' }));
                expect(moved).to.include({ applied: { 'logistics.booking.started': 1, 'logistics.booking.completed': 1 }, attempted: 4, remaining: 0 });
                // As the wall clock would have it: the retry due an hour after the start comes before the completion.
                expect(receiver.received.map((got) => JSON.parse(got.body).type)).to.equal([
                    'logistics.booking.created', 'logistics.booking.created', 'logistics.booking.started', 'logistics.booking.created', 'logistics.booking.completed'
                ]);
                expect((await deliveries()).map(({ type, attempt, at, status }) => [type, attempt, at, status])).to.equal([
                    ['logistics.booking.created', 1, start, 500],
                    ['logistics.booking.created', 2, later(start, hour), 500],
                    ['logistics.booking.started', 1, later(start, 24 * hour), 200],
                    ['logistics.booking.created', 3, later(start, 25 * hour), 500],
                    ['logistics.booking.completed', 1, later(start, 72 * hour), 200]
                ]);
                expect(await eventTypes()).to.equal(['logistics.booking.created', 'logistics.booking.started', 'webhook.delivery.given_up', 'logistics.booking.completed']);
            });

            it('answers at its deadline with the attempts left counted, and makes them after it in due order', async () => {

                const server = await serve(engine, { clock: start, webhookTimeoutMs: 800, clockMoveDeadlineMs: 100 });
                const receiver = await receive();
                const { admin, book, deliveries } = drive(server);
                answered(await admin('PUT', '/_webhooks', { endpoints: [{ url: receiver.url, types: ['logistics.booking.started', 'logistics.booking.completed'], retry_schedule: ['1m'] }] }));
                const arrived = silence(receiver, 4);
                await book(later(start, hour), later(start, 2 * hour));

                // The start's first attempt waits on a receiver that never answers: the move answers at its deadline,
                // the completion applied, both deliveries still to make.
                const moved = answered<{ applied: object; attempted: number; remaining: number }>(await admin('PUT', '/_clock', { advance: '1d' }));
                expect(moved).to.include({ applied: { 'logistics.booking.started': 1, 'logistics.booking.completed': 1 }, attempted: 0, remaining: 2 });

                await arrived;
                // A flush waits for the walk of the move to be over.
                answered(await admin('POST', '/_webhooks/flush'));
                expect(receiver.received.map((got) => JSON.parse(got.body).type)).to.equal(['logistics.booking.started', 'logistics.booking.started', 'logistics.booking.completed', 'logistics.booking.completed']);
                expect((await deliveries()).map(({ type, attempt, at, error }) => [type, attempt, at, error])).to.equal([
                    ['logistics.booking.started', 1, later(start, hour), 'timeout'],
                    ['logistics.booking.started', 2, later(start, hour + 60_000), 'timeout'],
                    ['logistics.booking.completed', 1, later(start, 2 * hour), 'timeout'],
                    ['logistics.booking.completed', 2, later(start, 2 * hour + 60_000), 'timeout']
                ]);
            });
        });
    }
});
