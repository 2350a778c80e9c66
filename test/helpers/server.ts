import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Os from 'node:os';
import Path from 'node:path';

import type { Server, ServerInjectResponse } from '@hapi/hapi';
import Sqlite from 'better-sqlite3';

import { createServer, mintToken, type Options } from '../../lib';


/**
 * A fresh in-memory server with responses validated against their schemas; stop it in an after(). Started, it takes a
 * free port, so that test runs side by side on one machine never collide.
 */
export function testServer(options: Options = {}): Promise<Server> {

    return createServer({
        dataDir: ':memory:',
        port: 0,
        logLevel: 'silent',
        jwtSecret: Crypto.randomBytes(32).toString('hex'),
        validateResponses: true,
        ...options
    });
}


/** Authorization headers carrying a freshly minted token for a subject, signed with the server's secret. */
export function bearer(server: Server, subject: string, ttlSec?: number): { authorization: string } {

    return { authorization: `Bearer ${mintToken(server.app.localgate.secret, subject, ttlSec)}` };
}


/** Authorization headers carrying an admin token (role: admin), as `localgate token --admin` prints. */
export function adminBearer(server: Server, subject = 'admin'): { authorization: string } {

    return { authorization: `Bearer ${mintToken(server.app.localgate.secret, subject, 3600, { admin: true })}` };
}


/** A new empty directory under the system's temp folder. */
export function tempDir(prefix = 'localgate-test-'): string {

    return Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix));
}


/** The parsed JSON body of an injected response. */
export function body<T = Record<string, unknown>>(res: ServerInjectResponse): T {

    return JSON.parse(res.payload) as T;
}


/** The list envelope every list endpoint answers. */
export interface List<T> {
    data: T[];
    count: number;
    total: number;
}


/** Fills a database with a table of a few pages, then overwrites three of them: a file SQLite calls malformed. */
export function damagePages(file: string): void {

    const raw = new Sqlite(file);
    raw.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
    const insert = raw.prepare('INSERT INTO t (v) VALUES (?)');
    for (let i = 0; i < 400; ++i) {
        insert.run(`${'x'.repeat(100)}${i}`);
    }

    raw.close();
    // Pages 3 to 5 overwritten with one byte, as a disk or a copy gone wrong leaves them: SQLite's check itself fails.
    const fd = Fs.openSync(file, 'r+');
    for (let i = 2; i < 5; ++i) {
        Fs.writeSync(fd, Buffer.alloc(4096, 0xab), 0, 4096, i * 4096);
    }

    Fs.closeSync(fd);
}


/** Leaves a database whose schema promises NOT NULL over a row holding NULL: what PRAGMA quick_check reports. */
export function breakIntegrity(file: string): void {

    const raw = new Sqlite(file);
    raw.exec('CREATE TABLE t (a); INSERT INTO t VALUES (NULL)');
    raw.unsafeMode(true);
    raw.pragma('writable_schema = ON');
    raw.prepare(`UPDATE sqlite_master SET sql = 'CREATE TABLE t (a NOT NULL)' WHERE name = 't'`).run();
    raw.close();
}
