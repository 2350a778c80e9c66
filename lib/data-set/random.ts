/** A generator of numbers in [0, 1) that gives the same sequence for the same seed (mulberry32). */
export function seededRandom(seed: number): () => number {

    let state = seed >>> 0;
    return () => {

        state = (state + 0x6D2B79F5) >>> 0;
        let mixed = Math.imul(state ^ (state >>> 15), state | 1);
        mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
        return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
    };
}
