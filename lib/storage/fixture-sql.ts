import type { FixtureExclusion, FixtureRow } from '../fixtures';
import type { FixturePosting, Placeholder } from '../namespace';


// The SQL both engines run to store fixtures, written once: each engine passes how it writes the nth parameter.

/** The query for a stored row that a new one may not overlap: same key, not exempt, overlapping range, another id. */
export function overlapQuery(collection: string, { key, from, to, unless }: FixtureExclusion, placeholder: Placeholder): string {

    return `SELECT id, "${unless[0]}" AS state FROM "${collection}" WHERE "${key}" = ${placeholder(1)} AND "${unless[0]}" <> ${placeholder(2)} AND "${from}" < ${placeholder(3)} AND "${to}" > ${placeholder(4)} AND id <> ${placeholder(5)} LIMIT 1`;
}


/** The query for the stored row of an id, which a fixture row with that id must match. */
export function storedRowQuery(collection: string, placeholder: Placeholder): string {

    return `SELECT * FROM "${collection}" WHERE id = ${placeholder(1)}`;
}


/** The records of a posting's collection a load added, in the posting's order. */
export function postedInOrder(added: { collection: string; record: FixtureRow }[], posting: FixturePosting): FixtureRow[] {

    return added.filter(({ collection }) => collection === posting.collection).map(({ record }) => record).sort((a, b) => posting.order(a.row, b.row));
}


/**
 * The columns of a unique key that an engine's failure names in its text `field` (`pattern` captures them, comma
 * separated, each perhaps after its table's name and a dot); null when it names none.
 */
export function uniqueColumns(err: unknown, field: 'message' | 'detail', pattern: RegExp): string[] | null {

    const text: unknown = typeof err === 'object' && err !== null ? Reflect.get(err, field) : undefined;
    const listed = typeof text === 'string' ? pattern.exec(text)?.[1] : undefined;
    return listed === undefined ? null : listed.split(', ').map((column) => column.replace(/^.*\./, ''));
}
