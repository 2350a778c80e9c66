import type { AppliedCounts } from '../transitions';
import type { Scope } from '../scope';
import type { ScopedData } from './scoped-routes';
import { parseDurationMs } from '../durations';


/** A move of a clock as PUT …/clock takes it. */
export type ClockPayload = { now: string } | { advance: string };

/** What a move answers beside the clock: the transitions applied by type, the attempts made, those still to make. */
export interface ClockMoveCounts {
    applied: AppliedCounts;
    attempted: number;
    remaining: number;
}


/** A data set's clock as GET /_clock reads it: its instant, and the frozen one (null while it follows the wall clock). */
export function readClock(scope: Scope): { now: string; frozen: string | null } {

    const { clock } = scope.services;
    return { now: clock.now().toISOString(), frozen: clock.frozen };
}


/** Moves a data set's clock as PUT …/clock asks, walking through what falls due on the way. */
export async function moveClock(scoped: ScopedData, payload: ClockPayload): Promise<ClockMoveCounts> {

    const { counts, attempted, remaining } = await scoped.moveClock('now' in payload ? { now: new Date(payload.now) } : { advance: parseDurationMs(payload.advance) });
    return { applied: counts, attempted, remaining };
}
