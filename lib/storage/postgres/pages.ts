import type { ListResult } from '../../lists';


/** The parameters every page statement starts with. */
export type PageParams = [limit: number, offset: number];

/** A row of a page read together with its total: every column null on the one row of a page past the end. */
export type Paged<Row> = { [Column in keyof Row]: Row[Column] | null } & { total: number };


/** The database server's clock as a timestamp in the form records keep (2030-06-01T10:00:00.000Z). */
export const serverNow = `to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;


/** The records of a page read with its total (the total's row joined to the page), each made by toRecord, and that total. */
export function pageOf<Row extends { id: string }, Record = Row>(rows: Paged<Row>[], toRecord = (row: Row) => row as unknown as Record): ListResult<Record> {

    const data: Record[] = [];
    let total = 0;
    for (const { total: pageTotal, ...row } of rows) {
        total = pageTotal;
        if (row.id !== null) {
            data.push(toRecord(row as unknown as Row));
        }
    }

    return { data, total };
}


/**
 * A page and its total in one statement, so from one snapshot: they agree. The total's row is joined to the page, so
 * that a page past the end still reads the total (its one row then has null columns).
 */
export function paged(columns: string, from: string, total: string): string {

    return `SELECT page.*, totals.total FROM (SELECT (${total})::int AS total) totals
        LEFT JOIN LATERAL (SELECT ${columns} FROM ${from} ORDER BY created_at, id LIMIT $1 OFFSET $2) page ON true
        ORDER BY page.created_at, page.id`;
}
