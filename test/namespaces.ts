import Path from 'node:path';

import Code from '@hapi/code';
import type { Server } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { SettingError } from '../lib';
import { wallContext } from '../lib/record-context';
import { resolveSettings } from '../lib/config';
import { liveBodyPaths } from '../lib/console/feed';
import { builtInNamespaces } from '../lib/namespaces';
import { weatherNamespace } from '../lib/namespaces/weather';
import { eventTypesOf, startReceiver } from '../lib/testing';
import { engines as storageEngines, locate } from '../lib/storage/engines';
import { noStores } from '../lib/storage/no-stores';
import { expectError } from './helpers/errors';
import { engineServer, engines } from './helpers/postgres';
import { adminBearer, bearer, body, type List, tempDir, testServer } from './helpers/server';
import { notesNamespace, type Note } from './notes-namespace';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


const namespaces = [...builtInNamespaces, notesNamespace];

const demoNotes = [
    { id: 'n-1', text: 'Water the plants', created_at: '2030-01-01T09:00:00.000Z' },
    { id: 'n-2', text: 'Call the harbour office', created_at: '2030-01-01T10:00:00.000Z' }
];


for (const engine of engines) {
    describe(`a namespace added from the tests (${engine})`, () => {

        let server: Server;

        before(async () => {

            server = await engineServer(engine, { namespaces });
        });

        after(async () => {

            await server.stop();
        });

        it('lists its demo data, loaded on start', async () => {

            const res = await server.inject('/v1/notes/notes');
            expect(res.statusCode).to.equal(200);
            expect(body(res)).to.equal({ data: demoNotes, count: 2, total: 2 });
        });

        it('creates a record through its create route, with the Location of the new record', async () => {

            const res = await server.inject({ method: 'POST', url: '/v1/notes/notes', headers: bearer(server, 'alice'), payload: { text: 'Fix the gate' } });
            expect(res.statusCode).to.equal(201);
            const note = body<Note>(res);
            expect(res.headers.location).to.equal(`/v1/notes/notes/${note.id}`);
            expect(note.text).to.equal('Fix the gate');

            const list = body<List<Note>>(await server.inject('/v1/notes/notes?limit=1&offset=2'));
            expect(list).to.equal({ data: [note], count: 1, total: 3 });
        });

        it('refuses a bad body in the one error shape, naming the field', async () => {

            const res = await server.inject({ method: 'POST', url: '/v1/notes/notes', headers: bearer(server, 'alice'), payload: { text: '   ' } });
            const error = expectError(res, 400, 'validation_failed', 'text');
            expect(error.details).to.equal([{ field: 'text', message: 'text must contain at least one character that is not white space' }]);
            expect((await server.inject({ method: 'POST', url: '/v1/notes/notes', payload: { text: 'No token' } })).statusCode).to.equal(401);
        });

        it('reports its database on /health beside the built-in ones', async () => {

            const res = await server.inject('/health');
            expect(res.statusCode).to.equal(200);
            const health = body<{ namespaces: Record<string, unknown> }>(res).namespaces;
            expect(Object.keys(health)).to.equal(['commerce', 'logistics', 'weather', 'pay', 'notes']);
            expect(health.notes).to.equal({ state: 'ready', engine, schema_version: 3, storage: engine === 'sqlite' ? 'memory' : 'server' });
        });

        it('exports its records with its migrations named', async () => {

            const res = await server.inject({ url: '/_export', headers: adminBearer(server) });
            expect(res.statusCode).to.equal(200);
            const file = body<{ localgate: { migrations: Record<string, string[]> }; notes: { notes: Note[] } }>(res);
            expect(file.localgate.migrations.notes).to.equal(['001_notes', '002_events', '003_endpoint_state']);
            expect(file.notes.notes.map((note) => note.id).slice(0, 2)).to.equal(['n-1', 'n-2']);
            expect(file.notes.notes).to.have.length(3);
        });

        it('lists its OpenAPI tag after the built-in ones', async () => {

            const res = await server.inject('/openapi.json');
            expect(res.statusCode).to.equal(200);
            const tags = body<{ tags: { name: string; description: string }[] }>(res).tags;
            expect(tags.slice(0, 5)).to.equal([
                { name: 'commerce', description: 'Local businesses, products, offers, inquiries and scam reports' },
                { name: 'logistics', description: 'Vehicles, bookings and pickup and drop-off locations' },
                { name: 'weather', description: 'Reserved: forecasts answer 501 until a weather backend is provisioned' },
                { name: 'pay', description: 'Wallets, token types and the fiat gateway: data endpoints answer 501 until pay is provisioned' },
                { name: 'notes', description: 'Short notes: a namespace added from the tests' }
            ]);
        });

        it('announces a note and, once the clock passes its remind_at, its reminder: an event type and a transition of its own', async () => {

            const admin = adminBearer(server);
            expect((await server.inject({ method: 'PUT', url: '/_clock', headers: admin, payload: { now: '2031-01-01T00:00:00.000Z' } })).statusCode).to.equal(200);
            const res = await server.inject({ method: 'POST', url: '/v1/notes/notes', headers: bearer(server, 'alice'), payload: { text: 'Ring the ferry', remind_at: '2031-01-01T01:00:00.000Z' } });
            expect(res.statusCode).to.equal(201);
            const note = body<Note>(res);
            expect(note).to.equal({ id: note.id, text: 'Ring the ferry', created_at: '2031-01-01T00:00:00.000Z', remind_at: '2031-01-01T01:00:00.000Z', reminded_at: null });

            const moved = await server.inject({ method: 'PUT', url: '/_clock', headers: admin, payload: { advance: '2h' } });
            expect(moved.statusCode).to.equal(200);
            expect(body<{ applied: object }>(moved).applied).to.equal({ 'notes.note.reminded': 1 });

            // The note the create test made was announced too.
            const [earlier] = body<List<Note>>(await server.inject('/v1/notes/notes?limit=1&offset=2')).data;
            const events = body<List<{ type: string; created_at: string; data: Note }>>(await server.inject({ url: '/_events?type=notes.*', headers: admin })).data;
            expect(events.map(({ type, created_at: at, data }) => ({ type, at, data }))).to.equal([
                { type: 'notes.note.created', at: earlier!.created_at, data: earlier },
                { type: 'notes.note.created', at: '2031-01-01T00:00:00.000Z', data: note },
                { type: 'notes.note.reminded', at: '2031-01-01T01:00:00.000Z', data: { ...note, reminded_at: '2031-01-01T01:00:00.000Z' } }
            ]);
            expect(body<List<Note>>(await server.inject('/v1/notes/notes?limit=1&offset=3')).data).to.equal([{ ...note, reminded_at: '2031-01-01T01:00:00.000Z' }]);
        });
    });
}


describe('a namespace added from the tests, in instances', () => {

    let server: Server;

    before(async () => {

        server = await testServer({ namespaces });
    });

    after(async () => {

        await server.stop();
    });

    it('delivers its events to a webhook endpoint subscribed to notes.*: the note made, then its reminder as the frozen clock passes it', async () => {

        const receiver = await startReceiver({ types: eventTypesOf(namespaces) });
        try {
            const admin = adminBearer(server);
            const instance = body<{ id: string; base_path: string }>(await server.inject({ method: 'POST', url: '/_instances', headers: admin, payload: { clock: '2031-01-01T00:00:00.000Z', seed: 'none' } }));
            const hooks = await server.inject({ method: 'PUT', url: `/_instances/${instance.id}/webhooks`, headers: admin, payload: { endpoints: [{ url: receiver.url, types: ['notes.*'], secret: receiver.secret }] } });
            expect(hooks.statusCode).to.equal(200);
            const created = await server.inject({ method: 'POST', url: `${instance.base_path}/v1/notes/notes`, headers: bearer(server, 'alice'), payload: { text: 'Ring the ferry', remind_at: '2031-01-01T01:00:00.000Z' } });
            expect(created.statusCode).to.equal(201);
            const note = body<Note>(created);

            const moved = await server.inject({ method: 'PUT', url: `/_instances/${instance.id}/clock`, headers: admin, payload: { advance: '2h' } });
            expect(moved.statusCode).to.equal(200);
            expect(body<{ applied: object; attempted: number }>(moved).applied).to.equal({ 'notes.note.reminded': 1 });
            expect(body<{ attempted: number }>(await server.inject({ method: 'POST', url: `/_instances/${instance.id}/webhooks/flush`, headers: admin })).attempted).to.equal(0);

            expect(receiver.deliveries.map(({ event, verified }) => ({ type: event?.type, data: event?.data, verified }))).to.equal([
                { type: 'notes.note.created', data: { ...note }, verified: true },
                { type: 'notes.note.reminded', data: { ...note, reminded_at: '2031-01-01T01:00:00.000Z' }, verified: true }
            ]);
        }
        finally {
            await receiver.close();
        }
    });

    it('gives each instance a database of its own, seeded or empty as asked', async () => {

        const seeded = body<{ base_path: string }>(await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server) }));
        const empty = body<{ base_path: string }>(await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server), payload: { seed: 'none' } }));
        const res = await server.inject({ method: 'POST', url: `${seeded.base_path}/v1/notes/notes`, headers: bearer(server, 'alice'), payload: { text: 'Only here' } });
        expect(res.statusCode).to.equal(201);
        expect(res.headers.location).to.equal(`${seeded.base_path}/v1/notes/notes/${body<Note>(res).id}`);

        expect(body<List<Note>>(await server.inject(`${seeded.base_path}/v1/notes/notes`)).total).to.equal(3);
        expect(body<List<Note>>(await server.inject(`${empty.base_path}/v1/notes/notes`)).total).to.equal(0);
        expect(body<List<Note>>(await server.inject('/v1/notes/notes')).total).to.equal(2);
    });

    it('loads a fixture of its records, and snapshots and restores them with the rest', async () => {

        const fixture = { notes: { notes: [{ id: 'n-9', text: 'From a fixture', created_at: '2030-02-01T00:00:00.000Z' }] } };
        const res = await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server), payload: { seed: 'none', fixture } });
        expect(res.statusCode).to.equal(201);
        const instance = body<{ id: string; base_path: string }>(res);
        expect(body<List<Note>>(await server.inject(`${instance.base_path}/v1/notes/notes`)).data).to.equal(fixture.notes.notes);

        const snapshot = body<{ snapshot_id: string }>(await server.inject({ method: 'POST', url: `/_instances/${instance.id}/snapshots`, headers: adminBearer(server) }));
        await server.inject({ method: 'POST', url: `${instance.base_path}/v1/notes/notes`, headers: bearer(server, 'alice'), payload: { text: 'After the snapshot' } });
        expect(body<List<Note>>(await server.inject(`${instance.base_path}/v1/notes/notes`)).total).to.equal(2);
        const restored = await server.inject({ method: 'POST', url: `/_instances/${instance.id}/restore`, headers: adminBearer(server), payload: snapshot });
        expect(restored.statusCode).to.equal(200);
        expect(body<List<Note>>(await server.inject(`${instance.base_path}/v1/notes/notes`)).data).to.equal(fixture.notes.notes);
    });

    it('refuses a fixture record that breaks its collection\'s schema, naming the record', async () => {

        const fixture = { notes: { notes: [{ id: 'n-9', text: '' }] } };
        const res = await server.inject({ method: 'POST', url: '/_instances', headers: adminBearer(server), payload: { seed: 'none', fixture } });
        expectError(res, 400, 'invalid_fixture');
    });
});


describe('the list of namespaces', () => {

    it('loads the PostgreSQL store of each namespace that keeps records without a server, as an engine does when one is placed there', async () => {

        // A store holds its database handle until a method runs a query: none is made here, so none is needed.
        const handle = {} as Parameters<Awaited<ReturnType<NonNullable<typeof builtInNamespaces[number]['stores']>['postgres']>>>[0];
        // Pay's store is made the same way, over its database once provisioned; weather keeps no records.
        const kept = builtInNamespaces.filter((namespace) => namespace.stores !== undefined);
        expect(kept.map((namespace) => namespace.name)).to.equal(['commerce', 'logistics', 'pay']);
        for (const namespace of kept) {
            const make = await namespace.stores!.postgres();
            expect(make(handle, wallContext()), namespace.name).to.be.an.object();
        }
    });

    it('places a namespace where its own setting names it', async () => {

        const file = Path.join(tempDir(), 'notes.db');
        const server = await testServer({ namespaces, namespaceUrls: { notes: file } });
        try {
            expect(server.app.localgate.settings.placements.notes).to.equal({ engine: 'sqlite', file });
            const health = body<{ namespaces: Record<string, unknown> }>(await server.inject('/health')).namespaces;
            expect(health.notes).to.equal({ state: 'ready', engine: 'sqlite', schema_version: 3, storage: 'file' });
            expect(health.commerce).to.equal({ state: 'ready', engine: 'sqlite', schema_version: 4, storage: 'memory' });
        }
        finally {
            await server.stop();
        }
    });

    it('names the setting of an added namespace in a refusal', () => {

        const err = expect(() => resolveSettings(namespaces, { namespaceUrls: { notes: 'http://example.com/notes' } })).to.throw(SettingError);
        expect(err.message).to.equal('NOTES_DB_URL must be a postgres:// URL, a path or a file: URL on this machine');
    });

    it('refuses two namespaces of one name, and a name that is no lower-case word', () => {

        expect(() => resolveSettings([...namespaces, notesNamespace])).to.throw('Namespace names must be distinct, lower case letters and digits: commerce, logistics, weather, pay, notes, notes');
        expect(() => resolveSettings([{ ...notesNamespace, name: 'My notes' }])).to.throw('Namespace names must be distinct, lower case letters and digits: My notes');
    });

    it('shows the success bodies of the namespaces that say so in the live log', () => {

        const paths = liveBodyPaths(namespaces);
        expect(['/v1/notes/notes', '/v1/commerce/products', '/v1/weather/status', '/health'].map((path) => paths.test(path))).to.equal([true, true, true, true]);
        expect(['/v1/pay/wallets', '/openapi.json', '/v1/notesx/notes'].map((path) => paths.test(path))).to.equal([false, false, false]);
    });

    it('makes no store for a namespace that keeps no records, on either engine', async () => {

        // No handle is needed: the factories throw before they would read one.
        expect(() => noStores.sqlite(undefined as never, wallContext())).to.throw('This namespace keeps no records: it has no store');
        const make = await noStores.postgres();
        expect(() => make(undefined as never, wallContext())).to.throw('This namespace keeps no records: it has no store');
    });

    it('makes no store for a namespace that keeps no records', async () => {

        const server = await testServer();
        try {
            expect(() => server.app.localgate.data.store(weatherNamespace)).to.throw('This namespace keeps no records: it has no store');
        }
        finally {
            await server.stop();
        }
    });
});


describe('the table of engines', () => {

    it('offers a URL to each engine in turn, SQLite taking whatever names a file', () => {

        expect(locate('postgresql://db.example/app', 'DATABASE_URL')).to.equal({ engine: 'postgres', url: 'postgresql://db.example/app' });
        expect(locate('file:notes.db', 'NOTES_DB_URL')).to.equal({ engine: 'sqlite', file: Path.resolve('notes.db') });
        expect(() => locate('mysql://db.example/app', 'NOTES_DB_URL')).to.throw(SettingError, 'NOTES_DB_URL must be a postgres:// URL, a path or a file: URL on this machine, not a mysql: URL');
    });

    it('says what each engine can do', () => {

        expect(Object.entries(storageEngines).map(([name, engine]) => [name, engine.shared])).to.equal([['sqlite', false], ['postgres', true]]);
        expect(storageEngines.sqlite.files({ engine: 'sqlite' }, 'notes', '/srv/data')).to.equal(['/srv/data/notes.db']);
        expect(storageEngines.postgres.files({ engine: 'postgres', url: 'postgres://db.example/app' }, 'notes', '/srv/data')).to.equal([]);
    });
});
