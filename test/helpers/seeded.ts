/** A small seeded generator of numbers in [0, 1), so that every run of a load sends the same mix. */
export function seeded(seed: number): () => number {

    let state = seed;
    return () => {

        state = (state + 0x6D2B79F5) | 0;
        let t = Math.imul(state ^ (state >>> 15), 1 | state);
        t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}
