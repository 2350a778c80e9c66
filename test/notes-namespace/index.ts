import Path from 'node:path';

import type { Plugin, Request } from '@hapi/hapi';
import Joi from 'joi';

import type { RecordContext } from '../../lib/record-context';
import { claimEach, type AppliedTransition } from '../../lib/transitions';
import { recordId, timestamp, utcTimestamp, visibleText } from '../../lib/fields';
import { recordOf } from '../../lib/fixtures';
import { createdResponse, listResponse, listSchema, pageQuery, type ListResult, type Page } from '../../lib/lists';
import type { Namespace } from '../../lib/namespaces';
import { createdAt } from '../../lib/records';
import { dataOf } from '../../lib/scope';
import { sql, type PgDatabase } from '../../lib/storage/postgres/database';
import { eventWriter as pgEventWriter } from '../../lib/storage/postgres/events';
import { eventWriter as sqliteEventWriter } from '../../lib/storage/sqlite/events';
import type { Database } from '../../lib/storage/sqlite/open';


// A small namespace registered from the test tree, through the same list as the built-in ones: one table, a list route
// and a create route, a demo file and a fixture collection, a store for each engine, an event type and a timed
// transition (a note with remind_at is reminded as the data set's clock passes it). Adding it edits nothing in lib/.

export interface Note {
    id: string;
    text: string;
    created_at: string;
    // Only on a note made with a reminder: when it falls due, and when it was made (null until then).
    remind_at?: string;
    reminded_at?: string | null;
}

export interface NotesStore {
    listNotes(page: Page): Promise<ListResult<Note>>;
    createNote(text: string, remindAt?: string): Promise<Note>;
    nextDue(): Promise<Date | null>;
    applyDue(until: Date, limit: number): Promise<AppliedTransition[]>;
}

interface NoteRow {
    id: string;
    text: string;
    created_at: string;
    remind_at: string | null;
    reminded_at: string | null;
}

const reminded = 'notes.note.reminded';


// A note as the API answers it: a note without a reminder shows none of its fields.
function noteRecord({ remind_at: remindAt, reminded_at: remindedAt, ...note }: NoteRow): Note {

    return remindAt === null ? note : { ...note, remind_at: remindAt, reminded_at: remindedAt };
}

// What a change announces, written once for both engines: the note made, and the note reminded at its instant.
function createdEvent(note: Note) {

    return { type: 'notes.note.created', created_at: note.created_at, data: note };
}

function remindedEvent(note: Note) {

    return { type: reminded, created_at: note.remind_at!, data: note };
}


const columns = 'id, text, created_at, remind_at, reminded_at';
const listNotes = `SELECT ${columns} FROM notes ORDER BY created_at, id`;


class SqliteNotes implements NotesStore {

    private readonly events;

    constructor(private readonly db: Database, private readonly context: RecordContext) {

        this.events = sqliteEventWriter(db);
    }

    listNotes(page: Page): Promise<ListResult<Note>> {

        const data = this.db.prepare<[number, number], NoteRow>(`${listNotes} LIMIT ? OFFSET ?`).all(page.limit, page.offset).map(noteRecord);
        const total = this.db.prepare<[], number>('SELECT count(*) FROM notes').pluck().get()!;
        return Promise.resolve({ data, total });
    }

    createNote(text: string, remindAt?: string): Promise<Note> {

        return Promise.resolve(this.events.writing(this.context, () => {

            const latest = this.db.prepare<[], string | null>('SELECT max(created_at) FROM notes').pluck().get()!;
            const row = { id: this.context.ids.next(), text, created_at: createdAt(this.context.clock, latest), remind_at: remindAt ?? null, reminded_at: null };
            this.db.prepare('INSERT INTO notes (id, text, created_at, remind_at) VALUES (@id, @text, @created_at, @remind_at)').run(row);
            const note = noteRecord(row);
            this.events.write(this.context, createdEvent(note));
            // A reminder falls due: the data set's timeline is told once the note commits.
            if (note.remind_at !== undefined) {
                this.events.due(new Date(note.remind_at));
            }

            return note;
        })());
    }

    nextDue(): Promise<Date | null> {

        const due = this.db.prepare<[], string | null>('SELECT min(remind_at) FROM notes WHERE remind_at IS NOT NULL AND reminded_at IS NULL').pluck().get()!;
        return Promise.resolve(due === null ? null : new Date(due));
    }

    applyDue(until: Date, limit: number): Promise<AppliedTransition[]> {

        // Found and claimed under the write lock, so that no other process claims it in between.
        const claim = this.events.writing(this.context, (at: string) => {

            const row = this.db.prepare<[string], NoteRow>(`SELECT ${columns} FROM notes WHERE remind_at IS NOT NULL AND reminded_at IS NULL AND remind_at <= ? ORDER BY remind_at, id LIMIT 1`).get(at);
            if (!row) {
                return null;
            }

            this.db.prepare('UPDATE notes SET reminded_at = remind_at WHERE id = ? AND reminded_at IS NULL').run(row.id);
            const note = noteRecord({ ...row, reminded_at: row.remind_at });
            this.events.write(this.context, remindedEvent(note));
            return { type: reminded, id: note.id, due: note.remind_at! };
        });

        return claimEach(limit, () => Promise.resolve(claim(until.toISOString())));
    }
}


const queries = {
    list: sql<[number, number], NoteRow>('notes.list', `${listNotes} LIMIT $1 OFFSET $2`),
    total: sql<[], { total: number }>('notes.total', 'SELECT count(*)::int AS total FROM notes'),
    latest: sql<[], { latest: string | null }>('notes.latest', 'SELECT max(created_at) AS latest FROM notes'),
    insert: sql<[string, string, string, string | null], NoteRow>('notes.insert', `INSERT INTO notes (id, text, created_at, remind_at) VALUES ($1, $2, $3, $4) RETURNING ${columns}`),
    nextDue: sql<[], { due: string | null }>('notes.nextDue', 'SELECT min(remind_at) AS due FROM notes WHERE remind_at IS NOT NULL AND reminded_at IS NULL'),
    // Locked until the claim commits; a row another process is claiming is skipped.
    due: sql<[string], NoteRow>('notes.due', `SELECT ${columns} FROM notes WHERE remind_at IS NOT NULL AND reminded_at IS NULL AND remind_at <= $1 ORDER BY remind_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`),
    remind: sql<[string], NoteRow>('notes.remind', `UPDATE notes SET reminded_at = remind_at WHERE id = $1 AND reminded_at IS NULL RETURNING ${columns}`)
};

class PgNotes implements NotesStore {

    private readonly events;

    constructor(private readonly db: PgDatabase, private readonly context: RecordContext) {

        this.events = pgEventWriter(db);
    }

    async listNotes(page: Page): Promise<ListResult<Note>> {

        const [data, count] = await Promise.all([this.db.rows(queries.list, page.limit, page.offset), this.db.row(queries.total)]);
        return { data: data.map(noteRecord), total: count!.total };
    }

    createNote(text: string, remindAt?: string): Promise<Note> {

        return this.events.writing(this.context, async (tx) => {

            await tx.exec('LOCK TABLE notes IN EXCLUSIVE MODE');
            const { latest } = (await tx.row(queries.latest))!;
            const note = noteRecord((await tx.row(queries.insert, this.context.ids.next(), text, createdAt(this.context.clock, latest), remindAt ?? null))!);
            await this.events.write(tx, this.context, createdEvent(note));
            if (note.remind_at !== undefined) {
                this.events.due(tx, new Date(note.remind_at));
            }

            return note;
        });
    }

    async nextDue(): Promise<Date | null> {

        const { due } = (await this.db.row(queries.nextDue))!;
        return due === null ? null : new Date(due);
    }

    applyDue(until: Date, limit: number): Promise<AppliedTransition[]> {

        const at = until.toISOString();
        return claimEach(limit, () => this.claimNext(at));
    }

    // Finds the reminder due first by `at` and makes it, in one transaction; none when nothing is due.
    private claimNext(at: string): Promise<AppliedTransition | null> {

        return this.events.writing(this.context, async (tx) => {

            const row = await tx.row(queries.due, at);
            if (!row) {
                return null;
            }

            const note = noteRecord((await tx.row(queries.remind, row.id))!);
            await this.events.write(tx, this.context, remindedEvent(note));
            return { type: reminded, id: note.id, due: note.remind_at! };
        });
    }
}


const note = Joi.object({
    id: Joi.string().required(),
    text: Joi.string().required(),
    created_at: Joi.string().required(),
    remind_at: timestamp.description('When the note reminds: only on a note made with one'),
    reminded_at: timestamp.allow(null).description('When it reminded; null until the clock passes remind_at')
}).label('Note');

const notesOf = (request: Pick<Request, 'app'>) => dataOf(request).store(notesNamespace);

const notesPlugin: Plugin<void> = {
    name: 'localgate-test-notes',
    register(server) {

        server.route<{ Query: Page }>({
            method: 'GET',
            path: '/notes',
            options: {
                auth: false,
                description: 'Notes, oldest first',
                tags: ['api', 'notes'],
                validate: { query: Joi.object(pageQuery) },
                response: { status: { 200: listSchema(note, 'NoteList') } },
                handler: async (request, h) => listResponse(h, await notesOf(request).listNotes(request.query))
            }
        });

        server.route<{ Payload: { text: string; remind_at?: string } }>({
            method: 'POST',
            path: '/notes',
            options: {
                description: 'Adds a note',
                tags: ['api', 'notes'],
                validate: { payload: Joi.object({ text: visibleText(200).required(), remind_at: utcTimestamp() }).label('NewNote') },
                response: { status: { 201: note } },
                async handler(request, h) {

                    const made = await notesOf(request).createNote(request.payload.text, request.payload.remind_at);
                    return createdResponse(h, request, made);
                }
            }
        });
    }
};


export const notesNamespace: Namespace<NotesStore> = {
    name: 'notes',
    description: 'Short notes: a namespace added from the tests',
    plugin: notesPlugin,
    events: { migrations: { 2: 'events', 3: 'endpoint_state' } },
    eventTypes: {
        'notes.note.created': { description: 'A note was added: the note as the list reads it', data: note },
        [reminded]: { description: 'A note\'s remind_at came on the data set\'s clock: the note, reminded', data: note }
    },
    transitions: [reminded],
    readiness: 'migrated',
    migrations: Path.join(__dirname, 'migrations'),
    fixture: {
        collections: {
            notes: {
                schema: Joi.object({ id: recordId.min(1), created_at: utcTimestamp(), text: visibleText(200).required() }),
                references: {},
                toRow: (value) => value,
                fromRow: (row) => recordOf(row, ['id', 'text', 'created_at'])
            }
        },
        demo: Path.join(__dirname, 'notes.json')
    },
    stores: {
        sqlite: (db, context) => new SqliteNotes(db, context),
        postgres: () => Promise.resolve((db, context) => new PgNotes(db, context))
    },
    liveBodies: true,
    timed: (store) => store
};
