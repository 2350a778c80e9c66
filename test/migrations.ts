import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { commerceNamespace } from '../lib/namespaces/commerce';
import { logisticsNamespace } from '../lib/namespaces/logistics';
import type { NamespaceSchema } from '../lib/namespace';
import { migrationsRoot } from '../lib/paths';
import type { EngineName } from '../lib/storage/engines';
import { everyMigrationApplied, MigrationError, namespaceMigrations, paySchema, shippedMigrationNames, verifyApplied, type Migration } from '../lib/storage/migrations';
import { PgDatabase } from '../lib/storage/postgres/database';
import { appliedMigrations as pgApplied, migrate as pgMigrate } from '../lib/storage/postgres/migrate';
import { openNamespace } from '../lib/storage/sqlite/files';
import { appliedMigrations, migrate } from '../lib/storage/sqlite/migrate';
import { closeDatabase, openDatabase } from '../lib/storage/sqlite/open';
import { freshDatabase, skipWithoutPostgres } from './helpers/postgres';
import { tempDir } from './helpers/server';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


const eventWriters: NamespaceSchema[] = [commerceNamespace, logisticsNamespace, paySchema];

// Each event-writing namespace's copies of the outbox before they became one body: its versions and the checksums of
// its files as released (PostgreSQL's first line named the namespace's SQLite twin).
const released: Record<string, { events: number; endpointState: number; sums: Record<EngineName, [string, string]> }> = {
    commerce: {
        events: 3, endpointState: 4, sums: {
            sqlite: ['79fcb89366e81c1383f94d51fc455b147568f581047d0b2800a3a3ba4e7fcb1d', '0c30f0750bc13f1a7baa73c49085ef03cff560a6178a495d86f34ac77aab49f4'],
            postgres: ['d07874faf528ce5b3c777257c4906a476c658feb0209777a99953782e5a0a4e6', 'a70d275e3da00da754fe89a3083a99f6038500f409c597a43004da7ac451f49d']
        }
    },
    logistics: {
        events: 4, endpointState: 6, sums: {
            sqlite: ['79fcb89366e81c1383f94d51fc455b147568f581047d0b2800a3a3ba4e7fcb1d', '0c30f0750bc13f1a7baa73c49085ef03cff560a6178a495d86f34ac77aab49f4'],
            postgres: ['24d44bd9abe437d15a5d9cc2156959fb408c572ac81875bb2d593b7fe18c9a00', 'a70d275e3da00da754fe89a3083a99f6038500f409c597a43004da7ac451f49d']
        }
    },
    pay: {
        events: 5, endpointState: 7, sums: {
            sqlite: ['79fcb89366e81c1383f94d51fc455b147568f581047d0b2800a3a3ba4e7fcb1d', '0c30f0750bc13f1a7baa73c49085ef03cff560a6178a495d86f34ac77aab49f4'],
            postgres: ['218ba5c41813aae2bfd0ac4b975dca1295b42a976e94ab87884aa84897027569', 'a70d275e3da00da754fe89a3083a99f6038500f409c597a43004da7ac451f49d']
        }
    }
};


function sha256(text: string): string {

    return Crypto.createHash('sha256').update(text).digest('hex');
}


// A released copy rebuilt from the shared body: SQLite's is the body itself; PostgreSQL's named its SQLite twin in
// its first line and had no lines about the body's earlier forms.
function releasedCopy(engine: EngineName, namespace: string, migration: Migration): string {

    if (engine === 'sqlite') {
        return migration.sql;
    }

    const [first, ...rest] = migration.sql.split('\n');
    const own = rest.join('\n').replace(/--\n-- (?:This body is spliced|Spliced into)[\s\S]*?\n(?=\n)/, '');
    const twin = migration.name.endsWith('_events.sql') ?
        `-- The PostgreSQL twin of migrations/sqlite/${namespace}/${migration.name.slice(0, 3)}: the events of this namespace's changes and the webhook` :
        '-- The PostgreSQL twin of migrations/sqlite/commerce/004_endpoint_state.sql (the same body in each event-writing namespace).';
    expect(first!).to.startWith('-- The PostgreSQL twin of migrations/sqlite/outbox/');
    return `${twin}\n${own}`;
}


// A namespace's migrations as a release before the shared body shipped them: the outbox's as the namespace's own files.
function releasedMigrations(engine: EngineName, namespace: NamespaceSchema): Migration[] {

    const dir = tempDir('localgate-released-');
    const migrations = namespaceMigrations(engine, namespace);
    const { events, endpointState, sums } = released[namespace.name]!;
    for (const migration of migrations) {
        const copy = [events, endpointState].includes(migration.version) ? releasedCopy(engine, namespace.name, migration) : migration.sql;
        Fs.writeFileSync(Path.join(dir, migration.name), copy);
    }

    const copies = migrations.map((migration) => {

        const sql = Fs.readFileSync(Path.join(dir, migration.name), 'utf8');
        return { ...migration, file: Path.join(dir, migration.name), sql, checksum: sha256(sql), earlier: [] };
    });

    // The copies are byte for byte the files released.
    expect([copies[events - 1]!.checksum, copies[endpointState - 1]!.checksum]).to.equal(sums[engine]);
    return copies;
}


describe('the outbox migrations', () => {

    it('splice one body into each event-writing namespace at the versions its descriptor names, under their recorded names', () => {

        for (const engine of ['sqlite', 'postgres'] as const) {
            for (const namespace of eventWriters) {
                const { events, endpointState } = released[namespace.name]!;
                const migrations = namespaceMigrations(engine, namespace);
                expect(migrations[events - 1]).to.include({ name: `00${events}_events.sql`, file: Path.join(migrationsRoot, engine, 'outbox', 'events.sql') });
                expect(migrations[endpointState - 1]).to.include({ name: `00${endpointState}_endpoint_state.sql`, file: Path.join(migrationsRoot, engine, 'outbox', 'endpoint_state.sql') });
                expect(migrations.map((migration) => migration.version)).to.equal(migrations.map((migration, index) => index + 1));
            }
        }

        expect(shippedMigrationNames(eventWriters)).to.equal({
            commerce: ['001_catalogue_inquiries_scam_reports', '002_offer_expiry', '003_events', '004_endpoint_state'],
            logistics: ['001_vehicles_locations_drivers_bookings', '002_booking_counts', '003_booking_lifecycle', '004_events', '005_metadata', '006_endpoint_state'],
            pay: ['001_token_types', '002_ledger', '003_credentials', '004_settlement', '005_events', '006_metadata', '007_endpoint_state']
        });
    });

    it('carries the checksums of the copies it replaced as its earlier forms', () => {

        expect(namespaceMigrations('sqlite', commerceNamespace)[2]!.earlier).to.equal([]);
        expect(namespaceMigrations('postgres', commerceNamespace)[2]!.earlier).to.equal(['commerce', 'logistics', 'pay'].map((name) => released[name]!.sums.postgres[0]));
        expect(namespaceMigrations('postgres', paySchema)[6]!.earlier).to.equal([released.pay!.sums.postgres[1]]);
    });

    it('refuses a descriptor whose outbox versions leave a gap or take a version of its own files', () => {

        const notes = (migrations: Record<number, 'events' | 'endpoint_state'>): NamespaceSchema => ({ name: 'notes', migrations: notesMigrations, events: { migrations } });
        expect(() => namespaceMigrations('sqlite', notes({ 3: 'events' }))).to.throw(MigrationError, `Migration ${Path.join(migrationsRoot, 'sqlite', 'outbox', 'events.sql')} should have version 002: versions start at 001 and have no gaps`);
        expect(() => namespaceMigrations('sqlite', notes({ 1: 'events' }))).to.throw(MigrationError, /should have version 002: versions start at 001 and have no gaps/);
    });

    it('serves a namespace from outside lib/: the outbox tables follow its own', () => {

        const notes: NamespaceSchema = { name: 'notes', migrations: notesMigrations, events: { migrations: { 2: 'events', 3: 'endpoint_state' } } };
        const db = openDatabase(':memory:');
        expect(migrate(db, namespaceMigrations('sqlite', notes))).to.equal([1, 2, 3]);
        expect(appliedMigrations(db).map((row) => row.name)).to.equal(['001_notes.sql', '002_events.sql', '003_endpoint_state.sql']);
        expect(db.prepare('SELECT name FROM pragma_table_info(?) WHERE name = ?').pluck().get('webhook_endpoints', 'disabled_at')).to.equal('disabled_at');
        closeDatabase(db);
    });

    it('accepts an earlier form as recorded, and still refuses any other checksum', () => {

        const [migration] = namespaceMigrations('postgres', commerceNamespace).slice(2);
        const place = { subject: 'It', name: 'it', elsewhere: 'another' };
        const row = (checksum: string) => ({ version: 3, name: '003_events', checksum, applied_at: '2030-01-01T00:00:00.000Z' });
        expect(() => verifyApplied([row(released.logistics!.sums.postgres[0])], [migration!], place)).to.not.throw();
        expect(() => verifyApplied([row(released.commerce!.sums.sqlite[0])], [migration!], place)).to.throw(MigrationError, /events\.sql was edited after it was applied to it/);
        expect(everyMigrationApplied([[3, released.pay!.sums.postgres[0]]], [migration!])).to.be.true();
        expect(everyMigrationApplied([[3, 'other']], [migration!])).to.be.false();
        expect(everyMigrationApplied([], [migration!])).to.be.false();
    });
});


const notesMigrations = Path.join(__dirname, 'notes-namespace', 'migrations');


describe('a database made before the outbox was one body', () => {

    it('opens on SQLite: every migration recorded as released, none applied again', () => {

        const dir = tempDir();
        for (const namespace of eventWriters) {
            const file = Path.join(dir, `${namespace.name}.db`);
            const db = openDatabase(file);
            const old = releasedMigrations('sqlite', namespace);
            expect(migrate(db, old)).to.equal(old.map((migration) => migration.version));
            closeDatabase(db);

            const reopened = openNamespace(file, namespace);
            expect(migrate(reopened, namespaceMigrations('sqlite', namespace))).to.equal([]);
            const applied = appliedMigrations(reopened);
            expect(applied.map((row) => row.checksum)).to.equal(old.map((migration) => migration.checksum));
            expect(everyMigrationApplied(applied.map((row) => [row.version, row.checksum] as const), namespaceMigrations('sqlite', namespace))).to.be.true();
            closeDatabase(reopened);
        }
    });

    it('opens on PostgreSQL: every migration recorded as released, none applied again', { skip: skipWithoutPostgres('the released outbox on PostgreSQL'), timeout: 30_000 }, async () => {

        const database = await freshDatabase();
        try {
            for (const namespace of eventWriters) {
                const db = new PgDatabase(database.url, namespace.name, { poolMax: 2, connectTimeoutMs: 5000, statementTimeoutMs: 10_000 });
                try {
                    const old = releasedMigrations('postgres', namespace);
                    expect(await pgMigrate(db, old)).to.equal(old.map((migration) => migration.version));
                    expect(await pgMigrate(db, namespaceMigrations('postgres', namespace))).to.equal([]);
                    const applied = await pgApplied(db);
                    expect(applied.map((row) => row.checksum)).to.equal(old.map((migration) => migration.checksum));
                    expect(everyMigrationApplied(applied.map((row) => [row.version, row.checksum] as const), namespaceMigrations('postgres', namespace))).to.be.true();
                }
                finally {
                    await db.close();
                }
            }
        }
        finally {
            await database.drop();
        }
    });
});
