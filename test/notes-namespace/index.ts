import Path from 'node:path';

import type { Plugin, Request } from '@hapi/hapi';
import Joi from 'joi';

import type { RecordContext } from '../../lib/data-set/clock';
import { recordId, utcTimestamp, visibleText } from '../../lib/fields';
import { recordOf } from '../../lib/fixtures';
import { createdResponse, listResponse, listSchema, pageQuery, type ListResult, type Page } from '../../lib/lists';
import type { Namespace } from '../../lib/namespaces';
import { createdAt } from '../../lib/records';
import { dataOf } from '../../lib/scope';
import { sql, type PgDatabase } from '../../lib/storage/postgres/database';
import type { Database } from '../../lib/storage/sqlite/open';


// A small namespace registered from the test tree, through the same list as the built-in ones: one table, a list route
// and a create route, a demo file and a fixture collection, with a store for each engine. Adding it edits nothing in lib/.

export interface Note {
    id: string;
    text: string;
    created_at: string;
}

export interface NotesStore {
    listNotes(page: Page): Promise<ListResult<Note>>;
    createNote(text: string): Promise<Note>;
}


const listNotes = 'SELECT id, text, created_at FROM notes ORDER BY created_at, id';


class SqliteNotes implements NotesStore {

    constructor(private readonly db: Database, private readonly context: RecordContext) { }

    listNotes(page: Page): Promise<ListResult<Note>> {

        const data = this.db.prepare<[number, number], Note>(`${listNotes} LIMIT ? OFFSET ?`).all(page.limit, page.offset);
        const total = this.db.prepare<[], number>('SELECT count(*) FROM notes').pluck().get()!;
        return Promise.resolve({ data, total });
    }

    createNote(text: string): Promise<Note> {

        return Promise.resolve(this.db.transaction(() => {

            const latest = this.db.prepare<[], string | null>('SELECT max(created_at) FROM notes').pluck().get()!;
            const note = { id: this.context.ids.next(), text, created_at: createdAt(this.context.clock, latest) };
            this.db.prepare('INSERT INTO notes (id, text, created_at) VALUES (@id, @text, @created_at)').run(note);
            return note;
        }).immediate());
    }
}


const queries = {
    list: sql<[number, number], Note>('notes.list', `${listNotes} LIMIT $1 OFFSET $2`),
    total: sql<[], { total: number }>('notes.total', 'SELECT count(*)::int AS total FROM notes'),
    latest: sql<[], { latest: string | null }>('notes.latest', 'SELECT max(created_at) AS latest FROM notes'),
    insert: sql<[string, string, string], Note>('notes.insert', 'INSERT INTO notes (id, text, created_at) VALUES ($1, $2, $3) RETURNING id, text, created_at')
};

class PgNotes implements NotesStore {

    constructor(private readonly db: PgDatabase, private readonly context: RecordContext) { }

    async listNotes(page: Page): Promise<ListResult<Note>> {

        const [data, count] = await Promise.all([this.db.rows(queries.list, page.limit, page.offset), this.db.row(queries.total)]);
        return { data, total: count!.total };
    }

    createNote(text: string): Promise<Note> {

        return this.db.transaction(async (tx) => {

            await tx.exec('LOCK TABLE notes IN EXCLUSIVE MODE');
            const { latest } = (await tx.row(queries.latest))!;
            return (await tx.row(queries.insert, this.context.ids.next(), text, createdAt(this.context.clock, latest)))!;
        });
    }
}


const note = Joi.object({
    id: Joi.string().required(),
    text: Joi.string().required(),
    created_at: Joi.string().required()
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

        server.route<{ Payload: { text: string } }>({
            method: 'POST',
            path: '/notes',
            options: {
                description: 'Adds a note',
                tags: ['api', 'notes'],
                validate: { payload: Joi.object({ text: visibleText(200).required() }).label('NewNote') },
                response: { status: { 201: note } },
                handler: async (request, h) => createdResponse(h, request, await notesOf(request).createNote(request.payload.text))
            }
        });
    }
};


export const notesNamespace: Namespace<NotesStore> = {
    name: 'notes',
    description: 'Short notes: a namespace added from the tests',
    plugin: notesPlugin,
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
    liveBodies: true
};
