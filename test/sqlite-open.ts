import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';
import Sqlite from 'better-sqlite3';

import { SettingError } from '../lib/setting-error';
import { DomainError } from '../lib/errors';
import { startupFailure } from '../lib/storage';
import { namedDamage, namespaceFile, openNamespace, prepareDataDir } from '../lib/storage/sqlite/files';
import { namespaceImage } from '../lib/storage/sqlite/images';
import { openSqliteNamespace } from '../lib/storage/sqlite/namespace';
import { MigrationError, readMigrations } from '../lib/storage/migrations';
import { appliedMigrations, migrate, schemaVersion } from '../lib/storage/sqlite/migrate';
import { closeDatabase, openCopy, openDatabase, quickCheck } from '../lib/storage/sqlite/open';
import { settled } from '../lib/storage/sqlite/statements';
import { breakIntegrity, damagePages, tempDir } from './helpers/server';
import { weatherNamespace } from '../lib/namespaces/weather';
import { commerceNamespace } from '../lib/namespaces/commerce';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


// What every refusal of a damaged file says to do.
const remedy = 'stop every localgate that uses this file, then put back a copy of it, or move it away (with any -wal and -shm file beside it) so that the namespace starts anew';


function writeMigrations(files: Record<string, string>): string {

    const dir = tempDir('localgate-migrations-');
    for (const [name, sql] of Object.entries(files)) {
        Fs.writeFileSync(Path.join(dir, name), sql);
    }

    return dir;
}


describe('openDatabase()', () => {

    it('applies and asserts the pragmas on a file', () => {

        const file = Path.join(tempDir(), 'a.db');
        const db = openDatabase(file);
        expect(db.pragma('journal_mode', { simple: true })).to.equal('wal');
        expect(db.pragma('synchronous', { simple: true })).to.equal(1);
        expect(db.pragma('foreign_keys', { simple: true })).to.equal(1);
        expect(db.pragma('busy_timeout', { simple: true })).to.equal(5000);
        expect(db.pragma('trusted_schema', { simple: true })).to.equal(0);
        closeDatabase(db);
        expect(db.open).to.be.false();
        expect(Fs.existsSync(file + '-wal')).to.be.false();
        closeDatabase(db);
    });

    it('uses synchronous=FULL when asked and memory journaling in memory', () => {

        const db = openDatabase(':memory:', { synchronous: 'FULL' });
        expect(db.pragma('synchronous', { simple: true })).to.equal(2);
        expect(db.pragma('journal_mode', { simple: true })).to.equal('memory');
        closeDatabase(db);
    });

    it('opens private copies of an image with foreign keys on and untrusted schemas, each apart from the others', () => {

        const first = openCopy(namespaceImage(commerceNamespace, false));
        const second = openCopy(namespaceImage(commerceNamespace, false));
        expect(first.pragma('foreign_keys', { simple: true })).to.equal(1);
        expect(first.pragma('trusted_schema', { simple: true })).to.equal(0);
        first.exec(`INSERT INTO businesses (id, name, category, city, phone, created_at) VALUES ('b', 'B', 'C', 'D', 'E', '2025-01-01T00:00:00.000Z')`);
        expect(() => first.exec(`INSERT INTO products (id, name, price_minor, currency, business_id, created_by, created_at) VALUES ('p', 'P', 1, 'USD', 'nope', 'x', '2025-01-01T00:00:00.000Z')`)).to.throw(/FOREIGN KEY constraint failed/);
        expect(second.prepare('SELECT count(*) AS n FROM businesses').get()).to.equal({ n: 0 });
        closeDatabase(first);
        closeDatabase(second);
    });

    it('refuses a file that is not a database, saying what to do', () => {

        const file = Path.join(tempDir(), 'notes.db');
        Fs.writeFileSync(file, 'these are not the pages you are looking for'.repeat(100));
        expect(() => openDatabase(file)).to.throw(`${file}: file is not a database: ${remedy}`);
    });

    it('refuses a missing file when it must exist', () => {

        expect(() => openDatabase(Path.join(tempDir(), 'missing.db'), { fileMustExist: true })).to.throw(/unable to open database file/);
    });
});


describe('openNamespace()', () => {

    it('creates, migrates and reopens a namespace database', () => {

        const file = Path.join(tempDir(), 'weather.db');
        let db = openNamespace(file, weatherNamespace);
        expect(schemaVersion(db)).to.equal(1);
        closeDatabase(db);
        db = openNamespace(file, weatherNamespace);
        expect(appliedMigrations(db)).to.have.length(1);
        closeDatabase(db);
    });

    it('refuses a database that fails its integrity check', () => {

        const file = Path.join(tempDir(), 'weather.db');
        breakIntegrity(file);

        expect(() => openNamespace(file, weatherNamespace)).to.throw(`Database ${file}: failed its integrity check: NULL value in t.a: ${remedy}`);
        const db = new Sqlite(file);
        expect(quickCheck(db)).to.equal(['NULL value in t.a']);
        db.close();
    });

    it('names a damaged file and what to do, when SQLite\'s check itself fails on it', () => {

        const file = Path.join(tempDir(), 'weather.db');
        closeDatabase(openNamespace(file, weatherNamespace));
        damagePages(file);

        expect(() => openNamespace(file, weatherNamespace)).to.throw(`${file}: database disk image is malformed: ${remedy}`);
        // The refusal closed the file: it opens again for whoever puts it right.
        Fs.rmSync(file);
        closeDatabase(openNamespace(file, weatherNamespace));
    });

    it('names the files of the data directory', () => {

        expect(namespaceFile('/tmp/x', 'commerce')).to.equal('/tmp/x/commerce.db');
    });
});


describe('migrations', () => {

    it('reads numbered files in order and ignores other files', () => {

        const dir = writeMigrations({ '002_second.sql': 'SELECT 2;', '001_first.sql': 'SELECT 1;', 'README.txt': 'hello' });
        const migrations = readMigrations(dir);
        expect(migrations.map((migration) => migration.name)).to.equal(['001_first.sql', '002_second.sql']);
        expect(migrations[0]!.checksum).to.have.length(64);
    });

    it('refuses misnamed files and gaps in the versions', () => {

        expect(() => readMigrations(writeMigrations({ 'first.sql': 'SELECT 1;' }))).to.throw(MigrationError, /first\.sql must be named NNN_name\.sql/);
        expect(() => readMigrations(writeMigrations({ '001_a.sql': '', '003_c.sql': '' }))).to.throw(MigrationError, /003_c\.sql should have version 002/);
    });

    it('applies pending migrations once, each recorded with its checksum', () => {

        const dir = writeMigrations({ '001_items.sql': 'CREATE TABLE items (id INTEGER PRIMARY KEY) STRICT;' });
        const db = openDatabase(':memory:');
        expect(schemaVersion(db)).to.equal(0);
        expect(migrate(db, readMigrations(dir))).to.equal([1]);
        expect(migrate(db, readMigrations(dir))).to.equal([]);

        Fs.writeFileSync(Path.join(dir, '002_more.sql'), 'ALTER TABLE items ADD COLUMN name TEXT;');
        expect(migrate(db, readMigrations(dir))).to.equal([2]);
        const applied = appliedMigrations(db);
        expect(applied.map((row) => row.name)).to.equal(['001_items.sql', '002_more.sql']);
        expect(applied[1]!.applied_at).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        closeDatabase(db);
    });

    it('stops on a migration edited after it was applied, naming the file', () => {

        const dir = writeMigrations({ '001_items.sql': 'CREATE TABLE items (id INTEGER PRIMARY KEY) STRICT;' });
        const db = openDatabase(':memory:');
        migrate(db, readMigrations(dir));
        Fs.writeFileSync(Path.join(dir, '001_items.sql'), 'CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT) STRICT;');
        expect(() => migrate(db, readMigrations(dir))).to.throw(MigrationError, `Migration ${Path.join(dir, '001_items.sql')} was edited after it was applied to :memory:: restore the file or start from a fresh database`);
        closeDatabase(db);
    });

    it('stops on a database newer than the code', () => {

        const dir = writeMigrations({ '001_a.sql': 'CREATE TABLE a (id INTEGER) STRICT;', '002_b.sql': 'CREATE TABLE b (id INTEGER) STRICT;' });
        const file = Path.join(tempDir(), 'x.db');
        const db = openDatabase(file);
        migrate(db, readMigrations(dir));
        Fs.rmSync(Path.join(dir, '002_b.sql'));
        expect(() => migrate(db, readMigrations(dir))).to.throw(MigrationError, `Database ${file} is at schema version 2 (002_b.sql), newer than this localgate knows: upgrade localgate or use another DATA_DIR`);
        closeDatabase(db);
    });

    it('rolls a failing migration back and leaves the database at the previous version', () => {

        const dir = writeMigrations({
            '001_a.sql': 'CREATE TABLE a (id INTEGER) STRICT;',
            '002_b.sql': 'CREATE TABLE b (id INTEGER) STRICT; INSERT INTO nowhere VALUES (1);'
        });
        const db = openDatabase(':memory:');
        expect(() => migrate(db, readMigrations(dir))).to.throw(MigrationError, `Migration ${Path.join(dir, '002_b.sql')} failed and was rolled back (:memory: stays at version 1): no such table: nowhere`);
        expect(schemaVersion(db)).to.equal(1);
        expect(db.prepare(`SELECT name FROM sqlite_master WHERE name = 'b'`).get()).to.be.undefined();
        closeDatabase(db);
    });
});


describe('openSqliteNamespace()', () => {

    it('opens a namespace in memory when storage is memory, touching no disk', async () => {

        const dataDir = Path.join(tempDir(), 'data');
        const namespace = openSqliteNamespace(commerceNamespace, undefined, { storage: 'memory', dataDir, seed: true });
        expect(namespace.db.memory).to.be.true();
        expect(await namespace.health()).to.equal({ state: 'ready', engine: 'sqlite', schema_version: schemaVersion(namespace.db), storage: 'memory' });
        await namespace.close();
        expect(Fs.existsSync(dataDir)).to.be.false();
    });
});


describe('prepareDataDir()', () => {

    it('creates a missing directory', () => {

        const dir = Path.join(tempDir(), 'nested', 'data');
        prepareDataDir(dir);
        expect(Fs.statSync(dir).isDirectory()).to.be.true();
    });

    it('names DATA_DIR when the directory cannot be made', () => {

        const file = Path.join(tempDir(), 'plain-file');
        Fs.writeFileSync(file, '');
        expect(() => prepareDataDir(Path.join(file, 'data'))).to.throw(SettingError, /^DATA_DIR is not a readable and writable directory: .*plain-file\/data \(ENOTDIR\)$/);
    });
});


describe('settled()', () => {

    // Constraints the stores check first still answer honestly when a write gets past them.
    it('turns the constraint failures of store work into the domain errors they stand for, and passes any other failure on as it is', async () => {

        const db = openDatabase(':memory:');
        db.exec(`CREATE TABLE parents (id TEXT PRIMARY KEY) STRICT;
            CREATE TABLE children (id TEXT PRIMARY KEY, parent_id TEXT NOT NULL REFERENCES parents (id)) STRICT;
            INSERT INTO parents VALUES ('p1');`);

        const outcome = (statement: string) => settled(() => db.exec(statement)).then(() => null, (err: unknown) => err);
        const foreign = await outcome(`INSERT INTO children VALUES ('c1', 'nope')`) as DomainError;
        expect(foreign).to.be.an.instanceof(DomainError);
        expect({ kind: foreign.kind, code: foreign.code, message: foreign.message }).to.equal({ kind: 'unprocessable', code: 'reference_not_found', message: 'A referenced record does not exist' });

        const unique = await outcome(`INSERT INTO parents VALUES ('p1')`) as DomainError;
        expect(unique).to.be.an.instanceof(DomainError);
        expect({ kind: unique.kind, code: unique.code, message: unique.message }).to.equal({ kind: 'conflict', code: 'conflict', message: 'A record with the same key already exists' });

        const syntax = await outcome('SELEC nothing') as Error & { code: string };
        expect(syntax).to.be.an.instanceof(Sqlite.SqliteError);
        expect(syntax.code).to.equal('SQLITE_ERROR');
        expect(await settled(() => db.prepare('SELECT count(*) FROM children').pluck().get())).to.equal(0);
        closeDatabase(db);
    });
});


describe('namedDamage()', () => {

    const malformed = (): Error => Object.assign(new Error('database disk image is malformed'), { code: 'SQLITE_CORRUPT' });

    it('answers a failure that is no damage as it is', () => {

        const failure = Object.assign(new Error('no such table: events'), { code: 'SQLITE_ERROR' });
        expect(namedDamage(failure, [])).to.shallow.equal(failure);
    });

    it('names the damaged files among those given, with what their full check finds', () => {

        const dir = tempDir();
        const sound = Path.join(dir, 'commerce.db');
        const damaged = Path.join(dir, 'logistics.db');
        closeDatabase(openNamespace(sound, weatherNamespace));
        closeDatabase(openNamespace(damaged, weatherNamespace));
        damagePages(damaged);

        const named = namedDamage(malformed(), [sound, damaged, Path.join(dir, 'missing.db')]) as Error;
        expect(named.message).to.equal(`${damaged}: database disk image is malformed (its integrity check: database disk image is malformed): ${remedy}`);
    });

    it('looks at the pay file too where the settings place pay on SQLite', () => {

        const dir = tempDir();
        const pay = Path.join(dir, 'pay.db');
        closeDatabase(openNamespace(pay, weatherNamespace));
        damagePages(pay);
        const named = startupFailure({ placements: { commerce: { engine: 'postgres', url: 'postgres://127.0.0.1/none' } }, payLocation: { engine: 'sqlite', file: pay }, dataDir: dir }, malformed()) as Error;
        expect(named.message).to.equal(`${pay}: database disk image is malformed (its integrity check: database disk image is malformed): ${remedy}`);
    });

    it('names every file given where none is found damaged', () => {

        const dir = tempDir();
        const sound = Path.join(dir, 'commerce.db');
        closeDatabase(openNamespace(sound, weatherNamespace));
        expect((namedDamage(malformed(), [sound]) as Error).message).to.equal(`${sound}: database disk image is malformed, in one of these files: ${remedy}`);
    });
});
