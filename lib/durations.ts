// The one reader and writer of durations as settings, flags and routes word them: a whole number and a unit.

const unitMs = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

type Unit = keyof typeof unitMs;

/** A duration in ms, s, m, h or d, as the clock's and the webhooks' schemas accept it (500ms, 90s, 30m, 2h, 7d). */
export const durationPattern = /^(\d+)(ms|[smhd])$/;

// A duration in seconds, a bare number counting seconds, as settings and flags accept it (90, 90s, 30m, 2h, 7d).
const secondsPattern = /^(\d+)([smhd]?)$/;


/** Parses 90, 90s, 30m, 2h or 7d into seconds; null when it is not such a duration or is zero. */
export function parseDurationSeconds(text: string): number | null {

    const match = secondsPattern.exec(text.trim());
    const seconds = match ? Number(match[1]) * msOfUnit(match[2]) / 1000 : 0;
    return seconds || null;
}


/** The milliseconds of a duration as durationPattern takes it (500ms, 90s, 30m, 2h, 7d); anything else throws. */
export function parseDurationMs(duration: string): number {

    const match = durationPattern.exec(duration);
    if (!match) {
        throw new TypeError(`${JSON.stringify(duration)} is not a duration such as 500ms, 90s, 30m, 2h or 7d`);
    }

    return Number(match[1]) * msOfUnit(match[2]);
}


// The milliseconds of the unit a pattern matched; none (a bare number) counts seconds.
function msOfUnit(unit: string | undefined): number {

    return Object.entries(unitMs).find(([name]) => name === unit)?.[1] ?? unitMs.s;
}


/** Seconds in their largest whole unit (2d, 36h, 90m, 45s), 0s for none: how a settlement delay reads back. */
export function durationText(seconds: number): string {

    return inLargestUnit(seconds * 1000, ['d', 'h', 'm'], 's');
}


/** Milliseconds in their largest whole unit (300000 is 5m, 1500 is 1500ms): how a retry delay reads back. */
export function durationTextMs(ms: number): string {

    return inLargestUnit(ms, ['d', 'h', 'm', 's'], 'ms');
}


function inLargestUnit(ms: number, units: Unit[], smallest: Unit): string {

    const unit = units.find((name) => ms > 0 && ms % unitMs[name] === 0) ?? smallest;
    return `${ms / unitMs[unit]}${unit}`;
}
