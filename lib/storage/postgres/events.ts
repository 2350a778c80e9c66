import { newCommit, noteDue, tellCommitted, type Commit, type RecordContext } from '../../record-context';
import type { AttemptOutcome, ClaimedAttempt, DisabledReason, HeldLease, StoredEndpoint, StoredEvent, TypePattern } from '../../outbox';
import type { EventLog } from '../engine';
import { defaultEventsKept, deliveryState, dueEvent, endpointColumns, endpointRow, endpointUpsert, insertDeliveries, prunes, pruneEvents, recoverDeliveries, rotateSecret, setDisabled, setGivenUpInARow, storedEndpoint, type DueRow, type EndpointRow, type NewEvent } from '../events-sql';
import { always } from '../../always';
import { insertRow, sql, type PgDatabase, type Runner } from './database';


// Positions are bigint: read as float8 so that pg gives a number (exact below 2^53).
const eventColumns = 'position::float8 AS position, id, type, created_at, data';


// A claim in one statement: the deliveries `where` picks (with its order and limit), locked and skipped where another
// process is claiming them, leased until $4, and read back with their events, earliest first.
function leaseClaimed(where: string): string {

    return `WITH due AS (
            SELECT d.event_position, d.endpoint_id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
            WHERE ${where}
            FOR UPDATE OF d SKIP LOCKED
        ), leased AS (
            UPDATE webhook_deliveries d SET leased_until = $4 FROM due
            WHERE d.event_position = due.event_position AND d.endpoint_id = due.endpoint_id
            RETURNING d.event_position, d.endpoint_id, d.attempts, d.due_at
        )
        SELECT l.event_position::float8 AS position, l.endpoint_id, l.attempts, l.due_at, v.id AS event_id, v.type, v.created_at, v.data
        FROM leased l JOIN webhook_endpoints e ON e.id = l.endpoint_id JOIN events v ON v.position = l.event_position
        ORDER BY l.due_at, l.event_position, e.ordinal`;
}


export const queries = {
    // Positions follow commits: a transaction takes the next one under a lock of the database (the key space of the
    // migration lock, storage/postgres/migrate.ts) held until it ends, so that a reader that has seen a position has
    // seen every one before it. Without it, nextval hands them out in the order transactions ask and a stream would
    // step past a position whose transaction commits after a later one's. The lock is taken in the FROM, before the
    // position is drawn; this schema's last position comes along (for the prune). The statement names the endpoints'
    // table, so that it holds that table (as every statement does the tables it names, before it runs) before it waits
    // for the order lock: a record that gives up holds the table and then waits for the order lock, so a writer waiting
    // in the other order behind a replacement (which waits for the record) would close a deadlock.
    nextPosition: sql<[], { position: number; floor: number }>('events.nextPosition', `SELECT nextval('public.localgate_event_positions')::float8 AS position,
        (SELECT coalesce(max(position), 0) FROM events)::float8 AS floor
        FROM (SELECT pg_advisory_xact_lock(7206115, 2)) AS turn LEFT JOIN (SELECT FROM webhook_endpoints LIMIT 0) AS endpoints ON true`),
    // The event and its deliveries in one statement: a write holds the lock above for as few round trips as it can.
    insertEvent: sql<[number, string, string, string, string]>('events.insertEvent', `WITH event AS (
            INSERT INTO events (position, id, type, created_at, data) VALUES ($1, $2, $3, $4, $5)
        )
        ${insertDeliveries('$1::bigint', '$3::text', '$4::text')}`),
    prune: sql<[number]>('events.prune', pruneEvents('$1::bigint')),

    // The patterns asked for as exact types and prefixes; both null: every type.
    list: sql<[number, string[] | null, string[] | null, number], StoredEvent>('events.list', `SELECT ${eventColumns} FROM events
        WHERE position > $1 AND ($2::text[] IS NULL OR type = ANY ($2::text[])
            OR EXISTS (SELECT 1 FROM unnest($3::text[]) AS p (prefix) WHERE substr(type, 1, length(p.prefix)) = p.prefix))
        ORDER BY position LIMIT $4`),
    positionOf: sql<[string], { position: number }>('events.positionOf', 'SELECT position::float8 AS position FROM events WHERE id = $1'),
    lastPosition: sql<[], { position: number }>('events.lastPosition', 'SELECT coalesce(max(position), 0)::float8 AS position FROM events'),

    endpoints: sql<[], EndpointRow>('events.endpoints', `SELECT ${endpointColumns.join(', ')} FROM webhook_endpoints ORDER BY ordinal`),
    // Every statement that reads the endpoints waits for a replacement to commit, then reads the new ones: an event
    // written meanwhile never names an endpoint the replacement removed.
    lockEndpoints: 'LOCK TABLE webhook_endpoints IN ACCESS EXCLUSIVE MODE',
    dropEndpointsExcept: sql<[string[]]>('events.dropEndpointsExcept', 'DELETE FROM webhook_endpoints WHERE id <> ALL ($1::text[])'),
    upsertEndpoint: insertRow<EndpointRow>('events.upsertEndpoint', 'webhook_endpoints', endpointColumns, endpointUpsert),
    setDisabled: sql<[string, string | null, string | null]>('events.setDisabled', setDisabled('$1', '$2::text', '$3::text')),
    setGivenUpInARow: sql<[string, number, string | null]>('events.setGivenUpInARow', setGivenUpInARow('$1', '$2::integer', '$3::text')),
    rotateSecret: sql<[string, string, string]>('events.rotateSecret', rotateSecret('$1', '$2::text', '$3::text')),
    dropEndpointTypes: sql<[string]>('events.dropEndpointTypes', 'DELETE FROM webhook_endpoint_types WHERE endpoint_id = $1'),
    insertEndpointTypes: sql<[string, string[], number[]]>('events.insertEndpointTypes', `INSERT INTO webhook_endpoint_types (endpoint_id, pattern, prefix)
        SELECT $1, p.pattern, p.prefix FROM unnest($2::text[], $3::integer[]) AS p (pattern, prefix) ON CONFLICT DO NOTHING`),

    // A disabled endpoint's deliveries are not due until it is enabled.
    nextDue: sql<[], { due: string | null }>('events.nextDue', `SELECT min(d.due_at) AS due FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.state = 'pending' AND e.disabled_at IS NULL`),
    countDue: sql<[string], { count: number }>('events.countDue', `SELECT count(*)::integer AS count FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.state = 'pending' AND d.due_at <= $1 AND e.disabled_at IS NULL`),
    // Locked until the claim commits: a row another process is claiming is skipped, one it leased no longer matches.
    claim: sql<[string, string, number, string], DueRow>('events.claim', leaseClaimed(`d.state = 'pending' AND d.due_at <= $1 AND (d.leased_until IS NULL OR d.leased_until <= $2) AND e.disabled_at IS NULL
            ORDER BY d.due_at, d.event_position, e.ordinal LIMIT $3`)),
    // Each held lease renewed while its delivery awaits the attempt under that lease: a claim by another process (once the
    // lease had passed) locks the row first, and this statement then reads its lease and leaves the row alone.
    renewLeases: sql<[number[], string[], number[], string[], string], { position: number; endpoint_id: string }>('events.renewLeases', `UPDATE webhook_deliveries d SET leased_until = $5
        FROM unnest($1::bigint[], $2::text[], $3::integer[], $4::text[]) AS h (event_position, endpoint_id, attempts, leased_until)
        WHERE d.event_position = h.event_position AND d.endpoint_id = h.endpoint_id AND d.state = 'pending' AND d.attempts = h.attempts
            AND d.leased_until = h.leased_until
        RETURNING d.event_position::float8 AS position, d.endpoint_id`),
    // A delivery made due again, or made for an endpoint added after its event; one in flight is left as it is.
    arm: sql<[number, string[], string, string]>('events.arm', `INSERT INTO webhook_deliveries (event_position, endpoint_id, due_at)
        SELECT $1, id, $3 FROM webhook_endpoints WHERE id = ANY ($2::text[])
        ON CONFLICT (event_position, endpoint_id) DO UPDATE SET state = 'pending', due_at = excluded.due_at
            WHERE webhook_deliveries.leased_until IS NULL OR webhook_deliveries.leased_until <= $4`),
    recover: sql<[string, string, string, string], { event_position: number }>('events.recover',
        recoverDeliveries('$1', '$2::text', '$3::text', '$4::text').replace('RETURNING event_position', 'RETURNING event_position::float8 AS event_position')),
    // The deliveries armed above, claimed as a claim does: pending, not in flight, to an endpoint enabled.
    claimArmed: sql<[number[], string[], string, string], DueRow>('events.claimArmed', leaseClaimed(`d.event_position = ANY ($1::bigint[]) AND d.endpoint_id = ANY ($2::text[]) AND d.state = 'pending'
                AND (d.leased_until IS NULL OR d.leased_until <= $3) AND e.disabled_at IS NULL`)),
    // Recorded only from the attempt before it, and counted on its endpoint, in one statement: a second record of one
    // attempt changes nothing. A delivery ends the endpoint's given-up deliveries in a row, one given up ($7) adds to
    // them; the count before comes back.
    record: sql<[number, string, number, string, string | null, number, number], { before: number }>('events.record', `WITH moved AS (
            UPDATE webhook_deliveries SET attempts = $3, state = $4, due_at = coalesce($5, due_at), leased_until = NULL
            WHERE event_position = $1 AND endpoint_id = $2 AND state = 'pending' AND attempts = $3::integer - 1
            RETURNING endpoint_id
        ), before AS (
            SELECT id, given_up_in_a_row FROM webhook_endpoints WHERE id = $2
        )
        UPDATE webhook_endpoints e SET delivered = e.delivered + $6, failed = e.failed + 1 - $6::integer,
            given_up_in_a_row = CASE WHEN $6::integer = 1 THEN 0 ELSE e.given_up_in_a_row + $7::integer END
        FROM moved, before WHERE e.id = moved.endpoint_id AND before.id = e.id RETURNING before.given_up_in_a_row AS before`)
};


/**
 * Writes the events of one schema, inside the transaction of the change they announce: a position from the
 * database's sequence (in commit order), the event and its deliveries, and a prune when the schema's positions pass a
 * multiple of 100. It collects what each transaction wrote, told to the store's context once that one has committed.
 */
export class PgEventWriter {

    // What each write transaction under way wrote, by its connection's runner: several run at once on one pool.
    private readonly commits = new WeakMap<Runner, Commit>();

    constructor(private readonly db: PgDatabase, private readonly kept: number) { }

    /**
     * Runs work in one transaction of the pool, as every write of events or pending records does: once it has
     * committed, the context is told what it wrote (by its last try, when a serialization failure ran it again); one
     * rolled back tells nothing.
     */
    async writing<T>(context: RecordContext, work: (tx: Runner) => Promise<T>): Promise<T> {

        let commit = newCommit();
        const result = await this.db.transaction((tx) => {

            commit = newCommit();
            this.commits.set(tx, commit);
            return work(tx);
        });

        tellCommitted(context, commit);
        return result;
    }

    /** Writes an event and its deliveries on the transaction's connection; answers the event. */
    async write(tx: Runner, context: RecordContext, event: NewEvent): Promise<StoredEvent> {

        const { position, floor } = always(await tx.row(queries.nextPosition), 'nextval()');
        const stored = { position, id: context.ids.eventId(position), type: event.type, created_at: event.created_at, data: JSON.stringify(event.data) };
        await tx.rows(queries.insertEvent, position, stored.id, stored.type, stored.created_at, stored.data);
        // The event and its deliveries are one statement, whose count of deliveries is not read: each event may have made some.
        const commit = this.commitOf(tx);
        commit.events += 1;
        commit.deliveries = true;
        if (prunes(position, floor)) {
            await tx.rows(queries.prune, position - this.kept);
        }

        return stored;
    }

    /** The transaction made a record pending that moves on at this instant. */
    due(tx: Runner, instant: Date): void {

        noteDue(this.commitOf(tx), instant);
    }

    // What the transaction wrote so far; one not run by `writing` (a test's, a migration's) tells nobody.
    private commitOf(tx: Runner): Commit {

        return this.commits.get(tx) ?? newCommit();
    }
}


// The writer of each pool: the stores and the event log of one schema share it.
const writers = new WeakMap<PgDatabase, PgEventWriter>();


/**
 * The event writer of a schema's pool, made on first use; `kept` (EVENTS_KEPT) is taken by the first call that makes
 * it, which the database's owner makes as it opens the pool (a store made over a bare pool keeps the default).
 */
export function eventWriter(db: PgDatabase, kept = defaultEventsKept): PgEventWriter {

    let writer = writers.get(db);
    if (!writer) {
        writer = new PgEventWriter(db, kept);
        writers.set(db, writer);
    }

    return writer;
}


// The attempts of claimed rows, leased until leaseUntil, with their endpoints as the transaction reads them.
async function claimedAttempts(tx: Runner, due: DueRow[], leaseUntil: string): Promise<ClaimedAttempt[]> {

    if (due.length === 0) {
        return [];
    }

    const endpoints = new Map((await tx.rows(queries.endpoints)).map((row) => [row.id, storedEndpoint(row)]));
    return due.map((row) => ({ event: dueEvent(row), endpoint: always(endpoints.get(row.endpoint_id), 'the endpoint of a delivery'), attempt: row.attempts + 1, due_at: row.due_at, leased_until: leaseUntil }));
}


/** The event log of one PostgreSQL namespace schema. */
export class PgEventLog implements EventLog {

    private readonly writer: PgEventWriter;

    constructor(readonly namespace: string, private readonly db: PgDatabase, private readonly context: RecordContext) {

        this.writer = eventWriter(db);
    }

    async list(after: number | null, types: TypePattern[] | null, limit: number): Promise<StoredEvent[]> {

        const exact = types && types.filter(({ prefix }) => !prefix).map(({ pattern }) => pattern);
        const prefixes = types && types.filter(({ prefix }) => prefix).map(({ pattern }) => pattern);
        return await this.db.rows(queries.list, after ?? 0, exact, prefixes, limit);
    }

    async positionOf(id: string): Promise<number | null> {

        return (await this.db.row(queries.positionOf, id))?.position ?? null;
    }

    async lastPosition(): Promise<number> {

        return always(await this.db.row(queries.lastPosition), 'max(position)').position;
    }

    replaceEndpoints(endpoints: StoredEndpoint[]): Promise<void> {

        return this.db.transaction(async (tx) => {

            await tx.exec(queries.lockEndpoints);
            // Removing an endpoint removes its deliveries (the cascade); one kept keeps its own and its counts.
            await tx.rows(queries.dropEndpointsExcept, endpoints.map(({ id }) => id));
            for (const endpoint of endpoints) {
                await tx.rows(queries.upsertEndpoint, endpointRow(endpoint));
                await tx.rows(queries.dropEndpointTypes, endpoint.id);
                const types = endpoint.types ?? [];
                await tx.rows(queries.insertEndpointTypes, endpoint.id, types.map(({ pattern }) => pattern), types.map(({ prefix }) => (prefix ? 1 : 0)));
            }
        });
    }

    async endpoints(): Promise<StoredEndpoint[]> {

        return (await this.db.rows(queries.endpoints)).map(storedEndpoint);
    }

    async nextDue(): Promise<Date | null> {

        const { due } = always(await this.db.row(queries.nextDue), 'min(due_at)');
        return due === null ? null : new Date(due);
    }

    async countDue(until: Date): Promise<number> {

        return always(await this.db.row(queries.countDue, until.toISOString()), 'count(*)').count;
    }

    claimDue(until: Date, limit: number, leaseUntil: Date): Promise<ClaimedAttempt[]> {

        return this.db.transaction(async (tx) => {

            const lease = leaseUntil.toISOString();
            return await claimedAttempts(tx, await tx.rows(queries.claim, until.toISOString(), new Date().toISOString(), limit, lease), lease);
        });
    }

    async renewLeases(held: HeldLease[], leaseUntil: Date): Promise<HeldLease[]> {

        const renewed = await this.db.rows(queries.renewLeases, held.map(({ position }) => position), held.map(({ endpoint_id: id }) => id),
            held.map(({ attempt }) => attempt - 1), held.map(({ leased_until: lease }) => lease), leaseUntil.toISOString());
        const keys = new Set(renewed.map((row) => `${row.position} ${row.endpoint_id}`));
        return held.filter((lease) => keys.has(`${lease.position} ${lease.endpoint_id}`));
    }

    resend(position: number, endpointIds: string[], dueAt: Date, leaseUntil: Date): Promise<ClaimedAttempt[]> {

        return this.db.transaction(async (tx) => {

            const now = new Date().toISOString();
            await tx.rows(queries.arm, position, endpointIds, dueAt.toISOString(), now);
            const lease = leaseUntil.toISOString();
            return await claimedAttempts(tx, await tx.rows(queries.claimArmed, [position], endpointIds, now, lease), lease);
        });
    }

    recover(endpointId: string, since: string, dueAt: Date, leaseUntil: Date): Promise<ClaimedAttempt[]> {

        return this.db.transaction(async (tx) => {

            const now = new Date().toISOString();
            const positions = (await tx.rows(queries.recover, endpointId, since, dueAt.toISOString(), now)).map(({ event_position: position }) => position);
            const lease = leaseUntil.toISOString();
            return await claimedAttempts(tx, await tx.rows(queries.claimArmed, positions, [endpointId], now, lease), lease);
        });
    }

    async setDisabled(endpointId: string, disabled: { at: string; reason: DisabledReason } | null): Promise<void> {

        await this.db.rows(queries.setDisabled, endpointId, disabled?.at ?? null, disabled?.reason ?? null);
    }

    async setGivenUpInARow(endpointId: string, count: number, disableAt: string | null): Promise<void> {

        await this.db.rows(queries.setGivenUpInARow, endpointId, count, disableAt);
    }

    async rotateSecret(endpointId: string, secret: string, until: string): Promise<void> {

        await this.db.rows(queries.rotateSecret, endpointId, secret, until);
    }

    record(outcome: AttemptOutcome): Promise<number | null> {

        const state = deliveryState(outcome);
        return this.writer.writing(this.context, async (tx) => {

            const recorded = await tx.row(queries.record, outcome.position, outcome.endpoint_id, outcome.attempt, state, outcome.next_due_at, outcome.delivered ? 1 : 0, state === 'given_up' ? 1 : 0);
            if (!recorded) {
                return null;
            }

            if (outcome.given_up) {
                await this.writer.write(tx, this.context, { type: 'webhook.delivery.given_up', ...outcome.given_up });
            }

            return recorded.before;
        });
    }
}
