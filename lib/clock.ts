import Crypto from 'node:crypto';

import { DomainError } from './errors';


/** Where an instance's time comes from: the wall clock, or an instant that stands still until moved. */
export class Clock {

    private frozenAt: number | null;

    constructor(frozenAt: Date | null = null) {

        this.frozenAt = frozenAt ? frozenAt.getTime() : null;
    }

    /** The current instant of this clock. */
    now(): Date {

        return new Date(this.frozenAt ?? Date.now());
    }

    /** The frozen instant as ISO 8601, null while the clock follows the wall clock. */
    get frozen(): string | null {

        return this.frozenAt === null ? null : new Date(this.frozenAt).toISOString();
    }

    /** Freezes the clock at an instant, or with null lets it follow the wall clock again. */
    freeze(instant: Date | null): void {

        this.frozenAt = instant ? instant.getTime() : null;
    }
}


export type IdMode = 'random' | 'sequential';

// A sequential id spells its counter in the last 12 hex digits of a UUID: ffffffffffff is the last one there is.
export const maxIdCounter = 0xffffffffffff;


/** Where new record ids come from: random UUIDs, or UUID-shaped ids derived from a counter so that runs repeat. */
export class IdSource {

    counter = 0;

    constructor(public readonly mode: IdMode = 'random') { }

    /** The next id. */
    next(): string {

        if (this.mode === 'random') {
            return Crypto.randomUUID();
        }

        // Past the last id the next would no longer be a UUID: refused, never made twice.
        if (this.counter >= maxIdCounter) {
            throw new DomainError('conflict', 'ids_exhausted', `The sequential ids of this data set are used up: its id counter is at ${maxIdCounter}, the last id a UUID's final 12 hex digits hold`);
        }

        this.counter += 1;
        return `00000000-0000-4000-8000-${this.counter.toString(16).padStart(12, '0')}`;
    }
}


/** What a store reads time and ids from: its instance's clock and id source. */
export interface RecordContext {
    clock: Clock;
    ids: IdSource;
}


/** The context of a data set that follows the wall clock and makes random ids. */
export function wallContext(): RecordContext {

    return { clock: new Clock(), ids: new IdSource() };
}
