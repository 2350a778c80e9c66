import Assert from 'node:assert';
import Path from 'node:path';

import type { PositionTurn } from '../../record-context';
import { always } from '../../always';
import { prepareDataDir } from './files';
import { closeDatabase, openDatabase, type Database } from './open';
import { lazyStatements, sql, type Statements } from './statements';


// Two small files of the data set's own in DATA_DIR, beside its namespaces' (a namespace's name has no hyphen, so
// neither is ever a namespace's file). Each has a connection of its own, never ATTACHed to a namespace's: an
// immediate transaction there would lock every attached file, and nested writes across namespaces would wait on each
// other. The turn is an immediate transaction of the first that writes nothing, held from before a write begins until
// it has committed; the counter in the second is written, and committed, as each position is drawn, before the write
// that draws it commits. So a process killed between the two commits leaves a gap, never a position drawn twice.
export const turnFileName = 'event-positions-turn.db';
export const counterFileName = 'event-positions.db';

const queries = {
    last: sql<[], number>('SELECT last FROM event_positions'),
    setLast: sql<[number]>('UPDATE event_positions SET last = ?')
};


/**
 * The turn and the positions of a data set whose SQLite files other processes may open too. Its files are opened,
 * and made if need be, by the first write that takes the turn: a command that only reads (an export) or a load that
 * writes no event (a seed) leaves none behind, nor a data directory it would have made for them.
 */
export class SqlitePositions implements PositionTurn {

    // The writes under way in this process that hold the turn: a write nested in another runs in the outer's turn.
    private depth = 0;
    private files: { turn: Database; counter: Database; statements: Statements<typeof queries> } | null = null;

    constructor(private readonly dataDir: string) {}

    holding<Result>(work: () => Result): Result {

        if (this.depth === 0) {
            this.files ??= openFiles(this.dataDir);
            this.files.turn.exec('BEGIN IMMEDIATE');
        }

        this.depth += 1;
        try {
            return work();
        }
        finally {
            this.depth -= 1;
            if (this.depth === 0) {
                this.files?.turn.exec('COMMIT');
            }
        }
    }

    draw(past: number): number {

        Assert.ok(this.depth > 0 && this.files, 'An event position is drawn outside the turn of its write');
        const { statements } = this.files;
        const position = Math.max(past, always(statements.last.pluck().get(), 'the last event position')) + 1;
        statements.setLast.run(position);
        return position;
    }

    /** Closes both files, if a write opened them; a write under way cannot be, since every write is synchronous. */
    close(): void {

        if (this.files) {
            closeDatabase(this.files.turn);
            closeDatabase(this.files.counter);
            this.files = null;
        }
    }
}


/** The turn and counter of the data set whose databases are in `dataDir`; its files wait for its first write. */
export function openSqlitePositions(dataDir: string): SqlitePositions {

    return new SqlitePositions(dataDir);
}


// Opens (and on first use makes) the turn and counter files.
function openFiles(dataDir: string): { turn: Database; counter: Database; statements: Statements<typeof queries> } {

    prepareDataDir(dataDir);
    const opened: Database[] = [];
    try {
        const turn = openDatabase(Path.resolve(dataDir, turnFileName));
        opened.push(turn);
        const counter = openDatabase(Path.resolve(dataDir, counterFileName));
        opened.push(counter);
        // Two processes starting at once make it once: the second waits for the first's transaction, then finds the row.
        counter.transaction(() => {

            counter.exec('CREATE TABLE IF NOT EXISTS event_positions (last INTEGER NOT NULL)');
            counter.exec('INSERT INTO event_positions (last) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM event_positions)');
        }).immediate();

        return { turn, counter, statements: lazyStatements(counter, queries) };
    }
    catch (err) {
        opened.forEach(closeDatabase);
        throw err;
    }
}
