import type { Transaction } from 'better-sqlite3';

import { newCommit, noteDue, tellCommitted, type Commit, type RecordContext } from '../../record-context';
import type { AttemptOutcome, ClaimedAttempt, DisabledReason, HeldLease, StoredEndpoint, StoredEvent, TypePattern } from '../../outbox';
import type { EventLog } from '../engine';
import { defaultEventsKept, deliveryState, dueEvent, endpointColumns, endpointRow, endpointUpsert, insertDeliveries, prunes, pruneEvents, recoverDeliveries, rotateSecret, setDisabled, setGivenUpInARow, storedEndpoint, type DueRow, type EndpointRow, type NewEvent } from '../events-sql';
import { always } from '../../always';
import type { Database } from './open';
import { lazyStatements, settled, sql, type Statements } from './statements';


type EventRow = StoredEvent;

interface Prune {
    before: number;
}

const eventColumns = 'position, id, type, created_at, data';
const endpointList = endpointColumns.join(', ');

export const queries = {
    lastPosition: sql<[], number>('SELECT coalesce(max(position), 0) FROM events'),
    // Bound by position, not by name: the statement of every event written.
    insertEvent: sql<[number, string, string, string, string]>(`INSERT INTO events (${eventColumns}) VALUES (?, ?, ?, ?, ?)`),
    insertDeliveries: sql<[{ position: number; type: string; due_at: string }]>(insertDeliveries('@position', '@type', '@due_at')),
    prune: sql<[Prune]>(pruneEvents('@before')),

    // The patterns asked for as a JSON array of [pattern, prefix] pairs; NULL: every type. (json_each has a `type` column of its own.)
    list: sql<[{ after: number; patterns: string | null; limit: number }], EventRow>(`SELECT ${eventColumns} FROM events
        WHERE position > @after AND (@patterns IS NULL OR EXISTS (SELECT 1 FROM json_each(@patterns) p
            WHERE (p.value ->> 1 = 0 AND events.type = p.value ->> 0) OR (p.value ->> 1 = 1 AND substr(events.type, 1, length(p.value ->> 0)) = p.value ->> 0)))
        ORDER BY position LIMIT +@limit`),
    positionOf: sql<[string], number>('SELECT position FROM events WHERE id = ?'),

    endpoints: sql<[], EndpointRow>(`SELECT ${endpointList} FROM webhook_endpoints ORDER BY ordinal`),
    anyEndpoint: sql<[], number>('SELECT EXISTS (SELECT 1 FROM webhook_endpoints)'),
    endpoint: sql<[string], EndpointRow>(`SELECT ${endpointList} FROM webhook_endpoints WHERE id = ?`),
    dropEndpointsExcept: sql<[string]>('DELETE FROM webhook_endpoints WHERE id NOT IN (SELECT value FROM json_each(?))'),
    upsertEndpoint: sql<[EndpointRow]>(`INSERT INTO webhook_endpoints (${endpointList})
        VALUES (${endpointColumns.map((column) => `@${column}`).join(', ')})
        ${endpointUpsert}`),
    setDisabled: sql<[{ id: string; at: string | null; reason: string | null }]>(setDisabled('@id', '@at', '@reason')),
    setGivenUpInARow: sql<[{ id: string; count: number; disable_at: string | null }]>(setGivenUpInARow('@id', '@count', '@disable_at')),
    rotateSecret: sql<[{ id: string; secret: string; until: string }]>(rotateSecret('@id', '@secret', '@until')),
    dropEndpointTypes: sql<[string]>('DELETE FROM webhook_endpoint_types WHERE endpoint_id = ?'),
    insertEndpointType: sql<[string, string, number]>('INSERT OR IGNORE INTO webhook_endpoint_types (endpoint_id, pattern, prefix) VALUES (?, ?, ?)'),

    // A disabled endpoint's deliveries are not due until it is enabled.
    nextDue: sql<[], string | null>(`SELECT min(d.due_at) FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.state = 'pending' AND e.disabled_at IS NULL`),
    countDue: sql<[string], number>(`SELECT count(*) FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.state = 'pending' AND d.due_at <= ? AND e.disabled_at IS NULL`),
    due: sql<[{ until: string; now: string; limit: number }], DueRow>(`SELECT d.event_position AS position, d.endpoint_id, d.attempts, d.due_at,
            v.id AS event_id, v.type, v.created_at, v.data
        FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id JOIN events v ON v.position = d.event_position
        WHERE d.state = 'pending' AND d.due_at <= @until AND (d.leased_until IS NULL OR d.leased_until <= @now) AND e.disabled_at IS NULL
        ORDER BY d.due_at, d.event_position, e.ordinal LIMIT +@limit`),
    // A delivery made due again, or made for an endpoint added after its event; one in flight is left as it is.
    armDelivery: sql<[{ position: number; endpoint_id: string; due_at: string; now: string }]>(`INSERT INTO webhook_deliveries (event_position, endpoint_id, due_at)
        SELECT @position, id, @due_at FROM webhook_endpoints WHERE id = @endpoint_id
        ON CONFLICT (event_position, endpoint_id) DO UPDATE SET state = 'pending', due_at = excluded.due_at
            WHERE leased_until IS NULL OR leased_until <= @now`),
    recover: sql<[{ endpoint_id: string; since: string; due_at: string; now: string }], number>(recoverDeliveries('@endpoint_id', '@since', '@due_at', '@now')),
    // One delivery armed above, to claim: pending, not in flight, to an endpoint enabled.
    armed: sql<[{ position: number; endpoint_id: string; now: string }], DueRow>(`SELECT d.event_position AS position, d.endpoint_id, d.attempts, d.due_at,
            v.id AS event_id, v.type, v.created_at, v.data
        FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id JOIN events v ON v.position = d.event_position
        WHERE d.event_position = @position AND d.endpoint_id = @endpoint_id AND d.state = 'pending'
            AND (d.leased_until IS NULL OR d.leased_until <= @now) AND e.disabled_at IS NULL`),
    lease: sql<[string, number, string]>('UPDATE webhook_deliveries SET leased_until = ? WHERE event_position = ? AND endpoint_id = ?'),
    // A held lease renewed while its delivery awaits the attempt under that lease (not recorded, not claimed elsewhere).
    renewLease: sql<[{ position: number; endpoint_id: string; attempts: number; held: string; until: string }]>(`UPDATE webhook_deliveries SET leased_until = @until
        WHERE event_position = @position AND endpoint_id = @endpoint_id AND state = 'pending' AND attempts = @attempts AND leased_until = @held`),
    // Recorded only from the attempt before it: a second record of one attempt changes nothing.
    recordAttempt: sql<[{ position: number; endpoint_id: string; attempt: number; state: string; due_at: string | null }]>(`UPDATE webhook_deliveries
        SET attempts = @attempt, state = @state, due_at = coalesce(@due_at, due_at), leased_until = NULL
        WHERE event_position = @position AND endpoint_id = @endpoint_id AND state = 'pending' AND attempts = @attempt - 1`),
    givenUpInARow: sql<[string], number>('SELECT given_up_in_a_row FROM webhook_endpoints WHERE id = ?'),
    // A delivery ends the endpoint's given-up deliveries in a row; one given up adds to them.
    countDelivered: sql<[string]>('UPDATE webhook_endpoints SET delivered = delivered + 1, given_up_in_a_row = 0 WHERE id = ?'),
    countFailed: sql<[{ id: string; given_up: number }]>('UPDATE webhook_endpoints SET failed = failed + 1, given_up_in_a_row = given_up_in_a_row + @given_up WHERE id = @id')
};

/**
 * Writes the events of one database, inside the transaction of the change they announce (synchronous: nothing awaits
 * inside an SQLite transaction), and collects what that transaction wrote, told to the store's context once it has
 * committed. Made once per connection, with its statements prepared on first use.
 */
export class SqliteEventWriter {

    readonly statements: Statements<typeof queries>;
    // What the write transaction under way wrote: on one connection, one runs at a time.
    private commit: Commit = newCommit();
    // A database in memory is this connection's alone: what the writer knows of it stays true until the writer
    // changes it itself (or a rollback or replaced endpoints make it forget), so that a write need not read it again:
    // the last event's position, and whether any endpoint is set. Null: to be read. A file, which other connections
    // and processes may write, is read in every write.
    private readonly alone: boolean;
    private floor: number | null = null;
    private endpointsSet: boolean | null = null;

    constructor(private readonly db: Database, private readonly kept: number) {

        this.statements = lazyStatements(db, queries);
        this.alone = db.memory;
    }

    /**
     * A write transaction of this connection (immediate), which every write of events or pending records runs in:
     * once it has committed, the context is told what it wrote; one rolled back tells nothing. Where the data set's
     * positions are drawn in turn with other processes, the transaction runs in that turn, taken before it begins.
     */
    writing<Args extends unknown[], Result>(context: RecordContext, work: (...args: Args) => Result): (...args: Args) => Result {

        const transaction = this.db.transaction(work);
        return (...args) => {

            this.commit = newCommit();
            const turn = context.ids.positions;
            let result: Result;
            try {
                result = turn ? turn.holding(() => transaction.immediate(...args)) : transaction.immediate(...args);
            }
            catch (err) {
                // Rolled back: what the writer noted on the way is not in the database.
                this.forget();
                throw err;
            }

            tellCommitted(context, this.commit);
            return result;
        };
    }

    /** Writes an event and its deliveries, and prunes the database when its position passes a multiple of 100; answers the event. */
    write(context: RecordContext, event: NewEvent): StoredEvent {

        const floor = (this.alone ? this.floor : null) ?? always(this.statements.lastPosition.pluck().get(), 'max(position)');
        const position = context.ids.eventPosition(floor);
        const stored = { position, id: context.ids.eventId(position), type: event.type, created_at: event.created_at, data: JSON.stringify(event.data) };
        this.statements.insertEvent.run(position, stored.id, stored.type, stored.created_at, stored.data);
        this.floor = position;
        this.commit.events += 1;
        // Where no endpoint is set (which a database in memory knows), the event has no delivery to add.
        if (this.mayDeliver() && this.statements.insertDeliveries.run({ position, type: event.type, due_at: event.created_at }).changes > 0) {
            this.commit.deliveries = true;
        }

        if (prunes(position, floor)) {
            this.statements.prune.run({ before: position - this.kept });
        }

        return stored;
    }

    // Whether an endpoint may be set: read once in memory (until forgotten), else every time.
    private mayDeliver(): boolean {

        if (!this.alone) {
            return true;
        }

        this.endpointsSet ??= this.statements.anyEndpoint.pluck().get() === 1;
        return this.endpointsSet;
    }

    /** Forgets what the writer knows of its database: after a rollback, or a change of its endpoints. */
    forget(): void {

        this.floor = null;
        this.endpointsSet = null;
    }

    /** The write transaction under way made a record pending that moves on at this instant. */
    due(instant: Date): void {

        noteDue(this.commit, instant);
    }
}


// The writer of each connection: the stores and the event log of one database share it.
const writers = new WeakMap<Database, SqliteEventWriter>();


/**
 * The event writer of a connection, made on first use; `kept` (EVENTS_KEPT) is taken by the first call that makes it,
 * which the database's owner makes as it opens the connection (a store made over a bare connection keeps the default).
 */
export function eventWriter(db: Database, kept = defaultEventsKept): SqliteEventWriter {

    let writer = writers.get(db);
    if (!writer) {
        writer = new SqliteEventWriter(db, kept);
        writers.set(db, writer);
    }

    return writer;
}


/** The event log of one SQLite namespace database. */
export class SqliteEventLog implements EventLog {

    private readonly writer: SqliteEventWriter;
    private readonly statements: Statements<typeof queries>;
    private readonly replace: Transaction<(endpoints: StoredEndpoint[]) => void>;
    private readonly claim: Transaction<(until: string, limit: number, leaseUntil: string) => ClaimedAttempt[]>;
    private readonly renew: Transaction<(held: HeldLease[], leaseUntil: string) => HeldLease[]>;
    private readonly recordOutcome: (outcome: AttemptOutcome) => number | null;
    private readonly arm: Transaction<(position: number, endpointIds: string[], dueAt: string, leaseUntil: string) => ClaimedAttempt[]>;
    private readonly rearm: Transaction<(endpointId: string, since: string, dueAt: string, leaseUntil: string) => ClaimedAttempt[]>;

    constructor(readonly namespace: string, db: Database, private readonly context: RecordContext) {

        this.writer = eventWriter(db);
        const statements = this.writer.statements;
        this.statements = statements;

        this.replace = db.transaction((endpoints: StoredEndpoint[]) => {

            this.writer.forget();
            // Removing an endpoint removes its deliveries (the cascade); one kept keeps its own and its counts.
            statements.dropEndpointsExcept.run(JSON.stringify(endpoints.map(({ id }) => id)));
            for (const endpoint of endpoints) {
                statements.upsertEndpoint.run(endpointRow(endpoint));
                statements.dropEndpointTypes.run(endpoint.id);
                for (const { pattern, prefix } of endpoint.types ?? []) {
                    statements.insertEndpointType.run(endpoint.id, pattern, prefix ? 1 : 0);
                }
            }
        });

        // Leases the rows and reads their endpoints, each once.
        const leased = (due: DueRow[], leaseUntil: string): ClaimedAttempt[] => {

            const endpoints = new Map<string, StoredEndpoint>();
            return due.map((row) => {

                statements.lease.run(leaseUntil, row.position, row.endpoint_id);
                let endpoint = endpoints.get(row.endpoint_id);
                if (!endpoint) {
                    endpoint = storedEndpoint(always(statements.endpoint.get(row.endpoint_id), 'the endpoint of a delivery'));
                    endpoints.set(row.endpoint_id, endpoint);
                }

                return { event: dueEvent(row), endpoint, attempt: row.attempts + 1, due_at: row.due_at, leased_until: leaseUntil };
            });
        };

        this.claim = db.transaction((until: string, limit: number, leaseUntil: string) => leased(statements.due.all({ until, now: new Date().toISOString(), limit }), leaseUntil));

        // One transaction under the write lock: another process's claim comes before all of the renewal, or after it.
        this.renew = db.transaction((held: HeldLease[], leaseUntil: string) => {

            return held.filter((lease) => statements.renewLease.run({ position: lease.position, endpoint_id: lease.endpoint_id, attempts: lease.attempt - 1, held: lease.leased_until, until: leaseUntil }).changes === 1);
        });

        const claimArmed = (pairs: [number, string][], leaseUntil: string, now: string): ClaimedAttempt[] => leased(pairs.flatMap(([position, endpointId]) => statements.armed.all({ position, endpoint_id: endpointId, now })), leaseUntil);

        this.arm = db.transaction((position: number, endpointIds: string[], dueAt: string, leaseUntil: string) => {

            const now = new Date().toISOString();
            for (const endpointId of endpointIds) {
                statements.armDelivery.run({ position, endpoint_id: endpointId, due_at: dueAt, now });
            }

            return claimArmed(endpointIds.map((endpointId) => [position, endpointId]), leaseUntil, now);
        });

        this.rearm = db.transaction((endpointId: string, since: string, dueAt: string, leaseUntil: string) => {

            const now = new Date().toISOString();
            const positions = statements.recover.pluck().all({ endpoint_id: endpointId, since, due_at: dueAt, now });
            return claimArmed(positions.sort((a, b) => a - b).map((position) => [position, endpointId]), leaseUntil, now);
        });

        this.recordOutcome = this.writer.writing(context, (outcome: AttemptOutcome) => {

            const state = deliveryState(outcome);
            const { changes } = statements.recordAttempt.run({ position: outcome.position, endpoint_id: outcome.endpoint_id, attempt: outcome.attempt, state, due_at: outcome.next_due_at });
            if (changes === 0) {
                return null;
            }

            const before = always(statements.givenUpInARow.pluck().get(outcome.endpoint_id), 'the endpoint of a delivery');
            if (outcome.delivered) {
                statements.countDelivered.run(outcome.endpoint_id);
            }
            else {
                statements.countFailed.run({ id: outcome.endpoint_id, given_up: state === 'given_up' ? 1 : 0 });
            }

            if (outcome.given_up) {
                this.writer.write(this.context, { type: 'webhook.delivery.given_up', ...outcome.given_up });
            }

            return before;
        });
    }

    list(after: number | null, types: TypePattern[] | null, limit: number): Promise<StoredEvent[]> {

        const patterns = types && JSON.stringify(types.map(({ pattern, prefix }) => [pattern, prefix ? 1 : 0]));
        return settled(() => this.statements.list.all({ after: after ?? 0, patterns, limit }));
    }

    positionOf(id: string): Promise<number | null> {

        return settled(() => this.statements.positionOf.pluck().get(id) ?? null);
    }

    lastPosition(): Promise<number> {

        return settled(() => always(this.statements.lastPosition.pluck().get(), 'max(position)'));
    }

    replaceEndpoints(endpoints: StoredEndpoint[]): Promise<void> {

        return settled(() => this.replace.immediate(endpoints));
    }

    endpoints(): Promise<StoredEndpoint[]> {

        return settled(() => this.statements.endpoints.all().map(storedEndpoint));
    }

    nextDue(): Promise<Date | null> {

        return settled(() => {

            const due = this.statements.nextDue.pluck().get();
            return due ? new Date(due) : null;
        });
    }

    countDue(until: Date): Promise<number> {

        return settled(() => always(this.statements.countDue.pluck().get(until.toISOString()), 'count(*)'));
    }

    claimDue(until: Date, limit: number, leaseUntil: Date): Promise<ClaimedAttempt[]> {

        return settled(() => this.claim.immediate(until.toISOString(), limit, leaseUntil.toISOString()));
    }

    renewLeases(held: HeldLease[], leaseUntil: Date): Promise<HeldLease[]> {

        return settled(() => this.renew.immediate(held, leaseUntil.toISOString()));
    }

    record(outcome: AttemptOutcome): Promise<number | null> {

        return settled(() => this.recordOutcome(outcome));
    }

    setDisabled(endpointId: string, disabled: { at: string; reason: DisabledReason } | null): Promise<void> {

        return settled(() => {

            this.statements.setDisabled.run({ id: endpointId, at: disabled?.at ?? null, reason: disabled?.reason ?? null });
        });
    }

    setGivenUpInARow(endpointId: string, count: number, disableAt: string | null): Promise<void> {

        return settled(() => {

            this.statements.setGivenUpInARow.run({ id: endpointId, count, disable_at: disableAt });
        });
    }

    rotateSecret(endpointId: string, secret: string, until: string): Promise<void> {

        return settled(() => {

            this.statements.rotateSecret.run({ id: endpointId, secret, until });
        });
    }

    resend(position: number, endpointIds: string[], dueAt: Date, leaseUntil: Date): Promise<ClaimedAttempt[]> {

        return settled(() => this.arm.immediate(position, endpointIds, dueAt.toISOString(), leaseUntil.toISOString()));
    }

    recover(endpointId: string, since: string, dueAt: Date, leaseUntil: Date): Promise<ClaimedAttempt[]> {

        return settled(() => this.rearm.immediate(endpointId, since, dueAt.toISOString(), leaseUntil.toISOString()));
    }
}


// Parents first. Every column is carried as stored, whichever a later migration adds to an endpoint.
const wiringTables = ['webhook_endpoints', 'webhook_endpoint_types'] as const;

/** A data set's endpoints as one database holds them: every column of their rows and of their patterns' rows. */
export type Wiring = Record<typeof wiringTables[number], { columns: string[]; rows: unknown[][] }>;

/** No endpoint at all: what a fork starts with. */
export const noWiring: Wiring = { webhook_endpoints: { columns: ['id'], rows: [] }, webhook_endpoint_types: { columns: ['endpoint_id'], rows: [] } };

const quoted = (name: string): string => `"${name.replaceAll('"', '""')}"`;


/** Whether a database holds an endpoint. */
export function holdsEndpoints(db: Database): boolean {

    return eventWriter(db).statements.anyEndpoint.pluck().get() === 1;
}


/** The endpoints a database holds, with their counts, before its world is put back. */
export function wiringOf(db: Database): Wiring {

    const read = (table: string) => {

        const select = db.prepare<[], unknown[]>(`SELECT * FROM ${table}`).raw();
        return { columns: select.columns().map(({ name }) => name), rows: select.all() };
    };

    return { webhook_endpoints: read(wiringTables[0]), webhook_endpoint_types: read(wiringTables[1]) };
}


/**
 * Makes a database's endpoints these, counts included, in one transaction: an endpoint it holds that is not among them
 * goes with its deliveries (the cascade), and one that is keeps the deliveries of the world the database holds.
 */
export function rewire(db: Database, wiring: Wiring): void {

    const { webhook_endpoints: endpoints, webhook_endpoint_types: types } = wiring;
    const idAt = endpoints.columns.indexOf('id');
    const insert = (table: string, columns: string[], conflict: string) => {

        return db.prepare(`INSERT INTO ${table} (${columns.map(quoted).join(', ')}) VALUES (${columns.map(() => '?').join(', ')}) ${conflict}`);
    };

    const writer = eventWriter(db);
    writer.forget();
    db.transaction(() => {

        writer.statements.dropEndpointsExcept.run(JSON.stringify(endpoints.rows.map((row) => row[idAt])));
        db.prepare('DELETE FROM webhook_endpoint_types').run();
        if (endpoints.rows.length === 0) {
            return;
        }

        const updates = endpoints.columns.filter((column) => column !== 'id').map((column) => `${quoted(column)} = excluded.${quoted(column)}`);
        const upsert = insert(wiringTables[0], endpoints.columns, `ON CONFLICT (id) DO UPDATE SET ${updates.join(', ')}`);
        for (const row of endpoints.rows) {
            upsert.run(row);
        }

        const pattern = insert(wiringTables[1], types.columns, '');
        for (const row of types.rows) {
            pattern.run(row);
        }
    }).immediate();
}
