import type { Database } from '../../lib/storage/sqlite/open';


/** Inserts rows into a table as they are stored (price_minor, 0/1 flags), below every rule of the API. */
export function insertRows(db: Database, table: string, rows: Record<string, unknown>[]): void {

    db.transaction(() => {

        for (const row of rows) {
            const names = Object.keys(row);
            const values = Object.values(row).map((value) => (typeof value === 'boolean' ? Number(value) : value));
            db.prepare(`INSERT INTO "${table}" (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`).run(...values);
        }
    }).immediate();
}
