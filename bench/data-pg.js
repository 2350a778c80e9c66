'use strict';

// Loads a benchmark data set (bench/data.js) into the commerce and logistics schemas of a PostgreSQL database that
// localgate has migrated: every row of the SQLite files, the same ids and timestamps, so that the PostgreSQL targets
// serve the same records as the SQLite ones. Counters (product_count, scam_report_count, the catalogue and booking
// totals) are left to the schemas' triggers, which keep them as the rows go in. Batched multi-row INSERTs, each batch
// its own transaction, then ANALYZE, so that the planner does not meet a freshly filled table mid-run. (In one
// transaction, the trigger's 10,000 updates of the one catalogue_totals row each walk the row's versions made before
// them in that transaction: minutes of the server's CPU. A database the run drops needs no all-or-nothing load.)

const Path = require('node:path');

const Pg = require('pg');
const Sqlite = require('better-sqlite3');


const internals = {
    // In the order their references need; the counter tables are the triggers' business.
    tables: {
        commerce: ['businesses', 'products', 'offers', 'inquiries', 'scam_reports'],
        logistics: ['locations', 'vehicles', 'drivers', 'bookings']
    },
    counters: new Set(['product_count', 'scam_report_count']),
    batch: 500
};


/** Copies dataset.dir/{commerce,logistics}.db into the schemas of the same names at url; returns the rows copied by table. */
exports.load = async function (dataset, url) {

    const client = new Pg.Client({ connectionString: url });
    await client.connect();
    const copied = {};
    try {
        for (const [schema, tables] of Object.entries(internals.tables)) {
            const db = new Sqlite(Path.join(dataset.dir, `${schema}.db`), { readonly: true, fileMustExist: true });
            try {
                // The triggers name their tables without a schema, as localgate's connections see them.
                await client.query(`SET search_path = ${schema}, public`);
                for (const table of tables) {
                    copied[`${schema}.${table}`] = await internals.copy(db, client, schema, table);
                }
            }
            finally {
                db.close();
            }

            await client.query(`ANALYZE ${tables.map((table) => `${schema}.${table}`).join(', ')}`);
        }

        // Leave nothing for autovacuum to do during the rounds.
        await client.query('VACUUM (ANALYZE)');
    }
    finally {
        await client.end();
    }

    return copied;
};


internals.copy = async function (db, client, schema, table) {

    const { rows: columns } = await client.query('SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2', [schema, table]);
    const types = new Map(columns.map((column) => [column.column_name, column.data_type]));
    const names = db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(table).filter((name) => types.has(name) && !internals.counters.has(name));
    if (!names.length) {
        throw new Error(`bench/data-pg.js: ${schema}.${table} has no columns in common with the SQLite table`);
    }

    const booleans = names.map((name) => types.get(name) === 'boolean');
    const rows = db.prepare(`SELECT ${names.map((name) => `"${name}"`).join(', ')} FROM "${table}" ORDER BY rowid`).raw().all();
    for (let i = 0; i < rows.length; i += internals.batch) {
        const values = [];
        const tuples = rows.slice(i, i + internals.batch).map((row) => {

            const placeholders = row.map((value, index) => {

                values.push(booleans[index] && value !== null ? value === 1 : value);
                return `$${values.length}`;
            });

            return `(${placeholders.join(', ')})`;
        });

        await client.query(`INSERT INTO ${schema}.${table} (${names.map((name) => `"${name}"`).join(', ')}) VALUES ${tuples.join(', ')}`, values);
    }

    return rows.length;
};
