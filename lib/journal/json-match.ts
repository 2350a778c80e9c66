// JSON compared as WireMock's equalToJson compares it: equal, or with extra object keys and array items, and array
// order, ignored; pairing array items under both spends a bounded budget of steps.

// The comparison steps one request may spend pairing array items under ignoreExtraElements with ignoreArrayOrder: a
// pairing is a bipartite matching, whose cost grows with the product of the arrays' lengths.
export const maxMatchingSteps = 1_000_000;


/** The steps one request spends comparing JSON, shared by every comparison it makes. */
export interface MatchingBudget {
    // Steps left; below 0 once spent, when every comparison under way answers false.
    left: number;
    // Above 0 while array items are being paired, the only comparisons that spend steps.
    pairing: number;
}


/** A budget with every step of one request left. */
export function matchingBudget(): MatchingBudget {

    return { left: maxMatchingSteps, pairing: 0 };
}


/** How loosely jsonEqual compares: extra elements allowed, array order ignored. */
export interface JsonOptions {
    extra: boolean;
    anyOrder: boolean;
}


/**
 * Whether a JSON value equals the expected one; extra object keys and array items, and array order, may be ignored.
 * Pairing array items under both spends the budget's steps; once it is spent, the answer is false and budget.left < 0.
 */
export function jsonEqual(expected: unknown, actual: unknown, options: JsonOptions, budget: MatchingBudget = matchingBudget()): boolean {

    if (budget.pairing > 0 && --budget.left < 0) {
        return false;
    }

    if (Array.isArray(expected)) {
        if (!Array.isArray(actual) || (options.extra ? actual.length < expected.length : actual.length !== expected.length)) {
            return false;
        }

        if (!options.anyOrder) {
            return expected.every((item, index) => jsonEqual(item, actual[index], options, budget));
        }

        return options.extra ? pairs(expected, actual, options, budget) : sameItems(expected, actual);
    }

    if (expected !== null && typeof expected === 'object') {
        if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) {
            return false;
        }

        const keys = Object.keys(expected);
        if (!options.extra && keys.length !== Object.keys(actual).length) {
            return false;
        }

        return keys.every((key) => Object.hasOwn(actual, key) && jsonEqual(Reflect.get(expected, key), Reflect.get(actual, key), options, budget));
    }

    return expected === actual;
}


// The items of each expected array, counted by canonical key: made once per pattern, not once per record.
const expectedCounts = new WeakMap<unknown[], Map<string, number>>();


// Without extra items, two arrays in any order are equal when they hold the same items as many times: a count of
// canonical keys, linear in the arrays.
function sameItems(expected: unknown[], actual: unknown[]): boolean {

    let counts = expectedCounts.get(expected);
    if (!counts) {
        counts = new Map();
        for (const item of expected) {
            const key = canonicalKey(item);
            counts.set(key, (counts.get(key) ?? 0) + 1);
        }

        expectedCounts.set(expected, counts);
    }

    const left = new Map(counts);
    for (const item of actual) {
        const key = canonicalKey(item);
        const count = left.get(key);
        if (!count) {
            return false;
        }

        left.set(key, count - 1);
    }

    // As many items on each side, and none more than expected: every count is 0.
    return true;
}


// JSON with object keys sorted and array items sorted by their own keys: equal for values equal in any order.
function canonicalKey(value: unknown): string {

    if (Array.isArray(value)) {
        return `[${value.map(canonicalKey).sort().join(',')}]`;
    }

    if (value !== null && typeof value === 'object') {
        return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonicalKey(Reflect.get(value, key))}`).join(',')}}`;
    }

    return JSON.stringify(value);
}


// With extra items, each expected item needs an actual item of its own that it matches: a bipartite matching, found
// by augmenting paths (Kuhn's algorithm) walked with an explicit stack, every comparison spending the budget.
function pairs(expected: unknown[], actual: unknown[], options: JsonOptions, budget: MatchingBudget): boolean {

    ++budget.pairing;
    try {
        // The expected item each actual item is paired with, and the search that last visited it (none yet: absent).
        const pairedWith = new Map<number, number>();
        const visitedBy = new Map<number, number>();
        for (let i = 0; i < expected.length; ++i) {
            // The path from the free expected item: an expected item each step, and the next actual item it tries.
            const path = [{ item: i, next: 0 }];
            let paired = false;
            while (!paired) {
                const top = path.at(-1);
                if (!top) {
                    break;
                }

                const candidate = top.next;
                if (candidate === actual.length) {
                    path.pop();
                    continue;
                }

                top.next = candidate + 1;
                // Every candidate tried is a step, a visited one too: the search stops within the budget.
                if (--budget.left < 0) {
                    return false;
                }

                if (visitedBy.get(candidate) === i || !jsonEqual(expected[top.item], actual[candidate], options, budget)) {
                    continue;
                }

                visitedBy.set(candidate, i);
                const owner = pairedWith.get(candidate);
                if (owner === undefined) {
                    // Each expected item on the path takes the actual item it tried last.
                    for (const step of path) {
                        pairedWith.set(step.next - 1, step.item);
                    }

                    paired = true;
                }
                else {
                    path.push({ item: owner, next: 0 });
                }
            }

            if (!paired) {
                return false;
            }
        }

        return true;
    }
    finally {
        --budget.pairing;
    }
}
