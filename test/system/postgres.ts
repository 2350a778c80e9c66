import Crypto from 'node:crypto';
import Fs from 'node:fs';

import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { count, measured, provisionPayWithCli, query, send, startAll, stopAll, withDatabase, withServers, type Database, type Reply } from '../helpers/pg-processes';
import { skipWithoutPostgres } from '../helpers/postgres';
import { spawnServer, statusCounts, type SpawnedServer } from '../helpers/processes';
import { bearer, testServer } from '../helpers/server';
import { until } from '../helpers/until';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


// Slow lane, about 50 s on two busy cores: four `localgate start` processes share one PostgreSQL database and race for the same vehicle,
// the same wallet and the same idempotency key through real HTTP; one of them is killed with SIGKILL in the middle of
// a load. Each test makes a database of its own and drops it. LOCALGATE_TEST_MEASURE=1 prints what each race took.

const skip = skipWithoutPostgres('test/system/postgres.ts');


interface Slot {
    vehicle_id: string;
    pickup_location_id: string;
    dropoff_location_id: string;
    pickup_at: string;
    return_at: string;
}


/** An available vehicle and two locations of the demo data the processes serve. */
async function demoSlot(base: string, secret: string): Promise<Omit<Slot, 'pickup_at' | 'return_at'>> {

    const vehicles = await send(`${base}/v1/logistics/vehicles?available=true&limit=1`, secret, 'setup');
    const locations = await send(`${base}/v1/logistics/locations?limit=2`, secret, 'setup');
    const [vehicle] = vehicles.body.data as { id: string }[];
    const [pickup, dropoff] = locations.body.data as { id: string }[];
    return { vehicle_id: vehicle!.id, pickup_location_id: pickup!.id, dropoff_location_id: dropoff!.id };
}


/**
 * 300 bookings of one vehicle at once, round-robin over the processes: ranges that differ in both ends but all hold
 * 11:59 to 12:00, so that any two overlap.
 */
async function bookingRace(servers: SpawnedServer[], secret: string): Promise<{ replies: Reply[]; slot: Slot; ms: number }> {

    const base = await demoSlot(servers[0]!.url, secret);
    const minute = (hour: number, minutes: number) => new Date(Date.UTC(2031, 5, 1, hour, minutes)).toISOString().replace('.000Z', 'Z');
    const payloads = Array.from({ length: 300 }, (_, i) => ({ ...base, pickup_at: minute(10, i % 119), return_at: minute(12, i % 97) }));

    const started = performance.now();
    const replies = await Promise.all(payloads.map((payload, i) => send(`${servers[i % servers.length]!.url}/v1/logistics/bookings`, secret, `racer-${i}`, payload)));
    const ms = Math.round(performance.now() - started);

    const winner = replies.findIndex((reply) => reply.status === 201);
    return { replies, slot: payloads[Math.max(winner, 0)]!, ms };
}


/** The race's outcome: one booking, stored once, that every process reads back for its customer. */
async function expectOneBooking(database: Database, servers: SpawnedServer[], secret: string, replies: Reply[]): Promise<void> {

    expect(statusCounts(replies)).to.equal({ '201': 1, '409 booking_overlap': 299 });

    const winner = replies.findIndex((reply) => reply.status === 201);
    const booking = replies[winner]!.body;
    expect(await count(database.url, 'SELECT count(*) FROM logistics.bookings WHERE vehicle_id = $1', [booking.vehicle_id])).to.equal(1);
    for (const server of servers) {
        const fetched = await send(`${server.url}/v1/logistics/bookings/${booking.id}`, secret, `racer-${winner}`);
        expect(fetched.status).to.equal(200);
        expect(fetched.body).to.equal(booking);
    }
}


function gateway(server: SpawnedServer, direction: 'deposit' | 'withdraw'): string {

    return `${server.url}/v1/pay/gateway/${direction}`;
}


/** Deposits 1,000 USD, then sends 200 withdrawals of 10 at once over the processes: half go through, half find no funds. */
async function drainRace(database: Database, servers: SpawnedServer[], secret: string): Promise<{ ms: number }> {

    const subject = 'drainer';
    const move = { provider_id: 'sandbox', asset: 'USD' };
    const funded = await send(gateway(servers[0]!, 'deposit'), secret, subject, { ...move, amount: 1000 }, { 'idempotency-key': Crypto.randomUUID() });
    expect(funded.status).to.equal(201);

    const started = performance.now();
    const replies = await Promise.all(Array.from({ length: 200 }, (_, i) => {

        return send(gateway(servers[i % servers.length]!, 'withdraw'), secret, subject, { ...move, amount: 10 }, { 'idempotency-key': Crypto.randomUUID() });
    }));
    const ms = Math.round(performance.now() - started);

    expect(statusCounts(replies)).to.equal({ '201': 100, '409 insufficient_funds': 100 });

    const wallet = await send(`${servers[1]!.url}/v1/pay/wallet`, secret, subject);
    expect(wallet.body.balances).to.equal([{ asset: 'USD', amount: 0, pending_in: 0, pending_out: 0 }]);

    // The ledger: two entries per transaction summing to zero, the wallet's one moving by the transaction's amount.
    const unbalanced = await query(database.url, `SELECT t.id FROM pay.transactions t
        LEFT JOIN pay.entries e ON e.transaction_id = t.id LEFT JOIN pay.accounts a ON a.id = e.account_id
        GROUP BY t.id, t.type, t.amount
        HAVING count(e.id) <> 2 OR sum(e.amount) <> 0
            OR coalesce(sum(e.amount) FILTER (WHERE a.wallet_id IS NOT NULL), 0) <> CASE t.type WHEN 'deposit' THEN t.amount ELSE -t.amount END`);
    expect(unbalanced).to.equal([]);
    expect(await count(database.url, 'SELECT count(*) FROM pay.transactions')).to.equal(101);
    expect(await count(database.url, 'SELECT count(*) FROM pay.entries')).to.equal(202);
    const [totals] = await query<{ wallets: number; everything: number }>(database.url, `SELECT
        sum(balance) FILTER (WHERE wallet_id IS NOT NULL)::int AS wallets, sum(balance)::int AS everything FROM pay.accounts WHERE asset = 'USD'`);
    expect(totals).to.equal({ wallets: 0, everything: 0 });

    return { ms };
}


/** The local ports of a process's TCP sockets, read from /proc (Linux; none elsewhere): how PostgreSQL tells its sessions apart. */
function tcpPorts(pid: number): number[] {

    if (!Fs.existsSync('/proc/net/tcp')) {
        return [];
    }

    const inodes = new Set<string>();
    for (const fd of Fs.readdirSync(`/proc/${pid}/fd`)) {
        const target = Fs.readlinkSync(`/proc/${pid}/fd/${fd}`, { encoding: 'utf8' });
        const match = /^socket:\[(\d+)\]$/.exec(target);
        if (match) {
            inodes.add(match[1]!);
        }
    }

    const ports: number[] = [];
    for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
        for (const line of Fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
            const fields = line.trim().split(/\s+/);
            if (fields.length > 9 && inodes.has(fields[9]!)) {
                ports.push(parseInt(fields[1]!.split(':')[1]!, 16));
            }
        }
    }

    return ports;
}


// The booking races queue 300 transactions behind one row's lock: on a busy machine the last of them waits longer than
// the default connection and statement timeouts, which answer 503 as documented. The races test that exactly one
// booking wins, so their processes wait as long as the test may run.
const raceSettings = { SEED: 'demo', DB_CONNECT_TIMEOUT_MS: '60000', DB_STATEMENT_TIMEOUT_MS: '60000' };


describe('PostgreSQL shared by four localgate processes (slow)', { skip, timeout: 60_000 }, () => {

    it('starts four processes at once on an empty database, which migrate it and load the demo data once', async () => {

        // What the demo data holds, counted on SQLite in memory.
        const reference = await testServer();
        const paths = ['/v1/logistics/vehicles', '/v1/logistics/locations', '/v1/commerce/products', '/v1/commerce/businesses'];
        const expected: Record<string, number> = {};
        for (const path of paths) {
            const res = await reference.inject({ url: `${path}?limit=1`, headers: bearer(reference, 'counter') });
            expect(res.statusCode).to.equal(200);
            expected[path] = JSON.parse(res.payload).total;
        }

        await reference.stop();
        expect(expected['/v1/logistics/vehicles']).to.equal(12);

        await withDatabase(async (database, env, secret) => {

            const started = performance.now();
            const servers = await startAll({ ...env, SEED: 'demo' });
            measured('four processes listening on an empty database', { ms: Math.round(performance.now() - started) });

            await withServers(env, async () => {

                for (const server of servers) {
                    const health = await fetch(`${server.url}/health`);
                    expect(health.status).to.equal(200);

                    for (const path of paths) {
                        const list = await send(`${server.url}${path}?limit=1`, secret, 'counter');
                        expect(list.status).to.equal(200);
                        expect(list.body.total, path).to.equal(expected[path]);
                    }
                }

                expect(await count(database.url, 'SELECT count(*) FROM logistics.vehicles')).to.equal(expected['/v1/logistics/vehicles']!);
                expect(await count(database.url, 'SELECT count(*) FROM commerce.products')).to.equal(expected['/v1/commerce/products']!);
            }, servers);
        });
    });

    it('confirms exactly one of 300 concurrent overlapping bookings of one vehicle spread over four processes', async () => {

        await withDatabase(async (database, env, secret) => {

            await withServers({ ...env, ...raceSettings }, async (servers) => {

                const { replies, ms } = await bookingRace(servers, secret);
                measured('300 overlapping bookings, default isolation', { ms, counts: statusCounts(replies) });
                await expectOneBooking(database, servers, secret, replies);
            });
        });
    });

    it('confirms exactly one of 300 overlapping bookings when the database runs every transaction serializable', async () => {

        await withDatabase(async (database, env, secret) => {

            await query(database.url, `ALTER DATABASE ${database.name} SET default_transaction_isolation = 'serializable'`);
            await withServers({ ...env, ...raceSettings }, async (servers) => {

                const [setting] = await query<{ default_transaction_isolation: string }>(database.url, 'SHOW default_transaction_isolation');
                expect(setting!.default_transaction_isolation).to.equal('serializable');

                const { replies, ms } = await bookingRace(servers, secret);
                measured('300 overlapping bookings, serializable', { ms, counts: statusCounts(replies) });
                await expectOneBooking(database, servers, secret, replies);
            });
        });
    });

    it('confirms exactly one of 300 overlapping bookings without the exclusion constraint, by the store\'s own lock', async () => {

        await withDatabase(async (database, env, secret) => {

            // The first process migrates and seeds; the constraint goes before the others start.
            const first = await spawnServer({ ...env, ...raceSettings });
            let servers = [first];
            try {
                await query(database.url, 'ALTER TABLE logistics.bookings DROP CONSTRAINT bookings_no_overlap');
                servers = [first, ...await startAll({ ...env, ...raceSettings }, 3)];
            }
            catch (err) {
                await stopAll(servers);
                throw err;
            }

            await withServers(env, async () => {

                expect(await count(database.url, `SELECT count(*) FROM pg_constraint WHERE conname = 'bookings_no_overlap'`)).to.equal(0);
                const { replies, ms } = await bookingRace(servers, secret);
                measured('300 overlapping bookings, no exclusion constraint', { ms, counts: statusCounts(replies) });
                await expectOneBooking(database, servers, secret, replies);
            }, servers);
        });
    });

    for (const isolation of ['read committed', 'serializable']) {
        it(`pays out exactly 100 of 200 concurrent withdrawals of 10 from 1,000 over four processes (${isolation})`, async () => {

            await withDatabase(async (database, env, secret) => {

                await query(database.url, `ALTER DATABASE ${database.name} SET default_transaction_isolation = '${isolation}'`);
                const pay = await provisionPayWithCli(database.url, secret);
                await withServers({ ...env, ...pay, SEED: 'none' }, async (servers) => {

                    const { ms } = await drainRace(database, servers, secret);
                    measured(`200 withdrawals of 10 from 1,000, ${isolation}`, { ms });
                });
            });
        });
    }

    it('answers one Idempotency-Key sent 100 times at once over four processes with one transaction and 99 replays of its bytes', async () => {

        await withDatabase(async (database, env, secret) => {

            const pay = await provisionPayWithCli(database.url, secret);
            await withServers({ ...env, ...pay, SEED: 'none' }, async (servers) => {

                const key = Crypto.randomUUID();
                const started = performance.now();
                const replies = await Promise.all(Array.from({ length: 100 }, (_, i) => {

                    return send(gateway(servers[i % servers.length]!, 'deposit'), secret, 'repeater', { provider_id: 'sandbox', asset: 'USD', amount: 42 }, { 'idempotency-key': key });
                }));
                measured('one key sent 100 times', { ms: Math.round(performance.now() - started), counts: statusCounts(replies) });

                expect(statusCounts(replies)).to.equal({ '201': 100 });
                const original = replies.filter((reply) => !reply.replayed);
                expect(original).to.have.length(1);
                for (const reply of replies) {
                    expect(reply.status).to.equal(original[0]!.status);
                    expect(reply.text).to.equal(original[0]!.text);
                }

                expect(await count(database.url, 'SELECT count(*) FROM pay.transactions')).to.equal(1);
                expect(await count(database.url, 'SELECT count(*) FROM pay.idempotency_keys')).to.equal(1);
                const wallet = await send(`${servers[2]!.url}/v1/pay/wallet`, secret, 'repeater');
                expect(wallet.body.balances).to.equal([{ asset: 'USD', amount: 42, pending_in: 0, pending_out: 0 }]);
            });
        });
    });

    it('keeps every acknowledged booking and leaves no lock or open transaction behind when one process is killed mid-load', async () => {

        await withDatabase(async (database, env, secret) => {

            await withServers({ ...env, SEED: 'demo' }, async (servers) => {

                const base = await demoSlot(servers[0]!.url, secret);
                const hour = (i: number) => new Date(Date.UTC(2032, 0, 1) + i * 3600_000).toISOString().replace('.000Z', 'Z');
                const victim = servers[3]!;
                const survivors = servers.slice(0, 3);

                // 40 clients book one hour each of the same vehicle, one after another, over every process; once 100
                // bookings are acknowledged the fourth process is killed and the clients carry on with the other three.
                const total = 400;
                const acknowledged: { id: string; subject: string }[] = [];
                const refused: Reply[] = [];
                let lost = 0;
                let next = 0;
                let killed = false;
                let victimPorts: number[] = [];
                let killedAt = 0;

                const client = async (): Promise<void> => {

                    while (next < total) {
                        const i = next++;
                        const targets = killed ? survivors : servers;
                        const subject = `client-${i}`;
                        try {
                            const reply = await send(`${targets[i % targets.length]!.url}/v1/logistics/bookings`, secret, subject, { ...base, pickup_at: hour(i), return_at: hour(i + 1) });
                            if (reply.status === 201) {
                                acknowledged.push({ id: reply.body.id!, subject });
                            }
                            else {
                                refused.push(reply);
                            }
                        }
                        catch {
                            lost++;                     // The connection to the killed process broke: no answer, so no promise either.
                        }

                        if (!killed && acknowledged.length >= 100) {
                            killed = true;
                            victimPorts = tcpPorts(victim.pid);
                            killedAt = acknowledged.length;
                            process.kill(victim.pid, 'SIGKILL');
                        }
                    }
                };

                const started = performance.now();
                await Promise.all(Array.from({ length: 40 }, client));
                const ms = Math.round(performance.now() - started);
                expect(killed).to.be.true();
                expect(refused.map((reply) => reply.status)).to.equal([]);

                // Every acknowledged booking is there, read from a surviving process.
                for (const [n, booking] of acknowledged.entries()) {
                    const fetched = await send(`${survivors[n % survivors.length]!.url}/v1/logistics/bookings/${booking.id}`, secret, booking.subject);
                    expect(fetched.status, booking.id).to.equal(200);
                }

                const stored = await count(database.url, 'SELECT count(*) FROM logistics.bookings WHERE vehicle_id = $1', [base.vehicle_id]);
                expect(stored).to.be.within(acknowledged.length, total);

                // The vehicle is not held by a transaction of the dead process: a new booking goes through at once.
                const afterStarted = performance.now();
                const after = await send(`${survivors[0]!.url}/v1/logistics/bookings`, secret, 'after', { ...base, pickup_at: hour(total + 1), return_at: hour(total + 2) });
                const afterMs = Math.round(performance.now() - afterStarted);
                expect(after.status).to.equal(201);
                expect(afterMs).to.be.below(2000);

                // No advisory lock in this database, and no session of the killed process left, once the server noticed.
                const advisory = 'SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE l.locktype = \'advisory\' AND d.datname = $1';
                expect(await count(database.url, advisory, [database.name])).to.equal(0);
                expect(victimPorts.length > 0 || process.platform !== 'linux').to.be.true();
                const gone = await until('the killed process\'s sessions to leave the database', async () => {

                    return await count(database.url, 'SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND client_port = ANY($2)', [database.name, victimPorts]) === 0;
                }, { timeoutMs: 5000, everyMs: 100 });
                expect(await count(database.url, 'SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND state LIKE \'idle in transaction%\'', [database.name])).to.equal(0);

                measured('kill -9 mid-load', { ms, acknowledged: acknowledged.length, killedAt, lost, stored, afterMs, victimSessionsGoneMs: gone, victimPorts: victimPorts.length });
            });
        });
    });
});
