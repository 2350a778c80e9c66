import Crypto from 'node:crypto';

import type { DataSnapshot, InstanceDataOptions } from './engine';


// An instance made again and again from the same fixture (the same prepared world for every test) starts from the
// image the first load made, not from loading every record again.

/** What loading a fixture into a new instance gave: its data, and the id counter after it. */
export interface FixtureImage<Snapshot extends DataSnapshot = DataSnapshot> {
    data: Snapshot;
    counter: number;
}


// Records parsed from JSON are at most a few levels deep; deeper ones (or a cycle) are loaded each time.
const maxDepth = 32;


// True for what JSON.parse gives: null, strings, booleans, finite numbers, arrays and plain objects of them.
function plainJson(value: unknown, depth: number): boolean {

    if (value === null || typeof value === 'string' || typeof value === 'boolean' || Number.isFinite(value)) {
        return true;
    }

    if (depth === maxDepth || typeof value !== 'object') {
        return false;
    }

    if (Array.isArray(value)) {
        for (const item of value) {
            if (!plainJson(item, depth + 1)) {
                return false;
            }
        }

        return true;
    }

    if (Object.getPrototypeOf(value) !== Object.prototype) {
        return false;
    }

    // A plain object's own enumerable values: what `for ... in` would visit, its prototype being Object's.
    for (const item of Object.values(value)) {
        if (!plainJson(item, depth + 1)) {
            return false;
        }
    }

    return true;
}


/**
 * The key of a fixture's image: a hash of its records and of every option that changes what loading them gives (demo
 * seed, pay, the clock, the id mode and counter). Null when the records hold more than plain JSON (a Date, undefined,
 * a class), which the hash of their JSON could not tell apart from what they turn into.
 */
export function fixtureImageKey({ seed, pay, context, fixture }: InstanceDataOptions): string | null {

    if (!plainJson(fixture?.records, 0)) {
        return null;
    }

    const text = JSON.stringify([seed, pay, context.clock.frozen, context.ids.mode, context.ids.counter, fixture?.records]);
    return Crypto.createHash('sha256').update(text).digest('base64');
}


/** The images fixtures were made into, the least recently used dropped past the bytes they may hold together. */
export class FixtureImages<Snapshot extends DataSnapshot = DataSnapshot> {

    private readonly images = new Map<string, FixtureImage<Snapshot>>();
    private held = 0;

    constructor(readonly maxBytes: number) { }

    /** The number of images kept. */
    get size(): number {

        return this.images.size;
    }

    /** The bytes the kept images hold together. */
    get bytes(): number {

        return this.held;
    }

    /** Whether an image is kept under the key; unlike find, it leaves the order of use as it is. */
    has(key: string): boolean {

        return this.images.has(key);
    }

    /** The image kept under the key, now the most recently used; undefined when there is none. */
    find(key: string): FixtureImage<Snapshot> | undefined {

        const image = this.images.get(key);
        if (image) {
            this.images.delete(key);
            this.images.set(key, image);
        }

        return image;
    }

    /** Keeps an image, dropping the least recently used ones to make room; one larger than the whole budget is not kept. */
    keep(key: string, image: FixtureImage<Snapshot>): void {

        if (image.data.bytes > this.maxBytes) {
            return;
        }

        for (const [oldKey, old] of this.images) {
            if (this.held + image.data.bytes <= this.maxBytes) {
                break;
            }

            this.images.delete(oldKey);
            this.held -= old.data.bytes;
        }

        this.images.set(key, image);
        this.held += image.data.bytes;
    }
}
