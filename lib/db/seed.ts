import type Sqlite from 'better-sqlite3';

import type { Database } from './open';


export type Fixture = Record<string, Record<string, unknown>[]>;

export class SeedError extends Error {

    override name = 'SeedError';
}


/** Inserts fixture rows table by table in one transaction; a row whose key already exists is left as it is, any other constraint failure rolls the whole load back. */
export function loadFixture(db: Database, fixture: Fixture, origin: string): number {

    const plan = Object.entries(fixture).map(([table, rows]) => {

        const columns = tableColumns(db, table, origin);
        if (!Array.isArray(rows)) {
            throw new SeedError(`${origin}: table "${table}" must hold an array of records`);
        }

        return { table, columns, rows };
    });

    return db.transaction(() => {

        let inserted = 0;
        const statements = new Map<string, Sqlite.Statement>();
        for (const { table, columns, rows } of plan) {
            for (const [index, row] of rows.entries()) {
                const values = rowValues(row, columns, `${origin}: ${table}[${index}]`);
                const names = Object.keys(values);
                const sql = `INSERT INTO "${table}" (${names.map((name) => `"${name}"`).join(', ')}) VALUES (${names.map(() => '?').join(', ')}) ON CONFLICT DO NOTHING`;
                const statement = statements.get(sql) ?? db.prepare(sql);
                statements.set(sql, statement);
                inserted += statement.run(...Object.values(values)).changes;
            }
        }

        return inserted;
    }).immediate();
}


/** True when none of the fixture's tables has a row yet: a database that was never seeded. */
export function fixtureTablesEmpty(db: Database, fixture: Fixture, origin: string): boolean {

    return Object.keys(fixture).every((table) => {

        tableColumns(db, table, origin);
        return !db.prepare(`SELECT 1 FROM "${table}" LIMIT 1`).get();
    });
}


function tableColumns(db: Database, table: string, origin: string): Set<string> {

    const known = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ? AND name NOT LIKE 'sqlite_%' AND name != 'schema_migrations'`).get(table);
    if (!known) {
        throw new SeedError(`${origin}: there is no table "${table}"`);
    }

    const columns = db.pragma(`table_info("${table}")`) as { name: string }[];
    return new Set(columns.map((column) => column.name));
}


function rowValues(row: unknown, columns: Set<string>, where: string): Record<string, unknown> {

    if (!isRecord(row)) {
        throw new SeedError(`${where} must be an object`);
    }

    if (!Object.keys(row).length) {
        throw new SeedError(`${where} has no columns`);
    }

    const values: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(row)) {
        if (!columns.has(name)) {
            throw new SeedError(`${where} has an unknown column "${name}"`);
        }

        if (value !== null && typeof value === 'object') {
            throw new SeedError(`${where}.${name} must be a string, number, boolean or null`);
        }

        values[name] = typeof value === 'boolean' ? Number(value) : value;
    }

    return values;
}


/** True for a plain JSON object: not null, not an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {

    return typeof value === 'object' && value !== null && !Array.isArray(value);
}
