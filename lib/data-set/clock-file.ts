import Fs from 'node:fs';
import Path from 'node:path';

import { Clock } from '../record-context';
import type { Settings } from '../config';
import { safely, type FailureLog } from '../safe-listener';


/** Where the default data set's frozen clock is kept between runs, in the data directory. */
export const clockFileName = 'clock.json';

interface ClockFile {
    // The CLOCK the clock was started at, and the instant it stood at when last moved.
    start: string;
    now: string;
}


function isClockFile(kept: unknown): kept is ClockFile {

    return typeof kept === 'object' && kept !== null && 'start' in kept && 'now' in kept && typeof kept.start === 'string' && typeof kept.now === 'string' && !Number.isNaN(Date.parse(kept.now));
}


function readClockFile(file: string): ClockFile | null {

    try {
        const kept: unknown = JSON.parse(Fs.readFileSync(file, 'utf8'));
        return isClockFile(kept) ? kept : null;
    }
    catch {
        // None yet, or not one this server wrote: the clock starts at CLOCK.
        return null;
    }
}


/**
 * The clock of the default data set. Without CLOCK, the wall clock. With it, frozen there; on files, a restart with the
 * same CLOCK goes on from where the clock stood when the server stopped (each move is written to DATA_DIR/clock.json),
 * while another CLOCK starts over at the new instant. In memory, and where other processes serve the same databases
 * (shared: each process has a clock of its own), it starts at CLOCK every time.
 */
export function defaultClock(settings: Pick<Settings, 'clock' | 'storage' | 'dataDir'>, shared: boolean, log: FailureLog): Clock {

    const start = settings.clock;
    if (start === undefined) {
        return new Clock();
    }

    if (settings.storage === 'memory' || shared) {
        return new Clock(new Date(start));
    }

    const file = Path.join(settings.dataDir, clockFileName);
    const kept = readClockFile(file);
    const clock = new Clock(new Date(kept?.start === start ? kept.now : start));
    const write = (): void => {

        const temporary = `${file}.${process.pid}.tmp`;
        Fs.mkdirSync(settings.dataDir, { recursive: true });
        Fs.writeFileSync(temporary, `${JSON.stringify({ start, now: clock.now().toISOString() } satisfies ClockFile)}\n`);
        Fs.renameSync(temporary, file);
    };

    write();
    clock.onMove(safely('clock file', log, write));
    return clock;
}
