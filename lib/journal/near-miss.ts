import type { Server } from '@hapi/hapi';


/** The route closest to a request no route took. */
export interface NearMiss {
    method: string;
    path: string;
}

interface Candidate extends NearMiss {
    segments: string[];
}


// How much of a path the near-miss search compares.
export const maxNearMissChars = 200;

/** Finds, for an unmatched request, the API route with the closest method and path; built from the routing table once. */
export function nearMissFinder(server: Server): (method: string, path: string) => NearMiss {

    let candidates: Candidate[] | null = null;
    return (method, path) => {

        candidates ??= server.table()
            .filter((route) => route.path.startsWith('/v1/'))
            .map((route) => ({ method: route.method.toUpperCase(), path: route.path, segments: route.path.split('/') }));

        // The routes are short: the first maxNearMissChars characters tell them apart, and comparing no more keeps the
        // search's cost bounded whatever the length of the path sent.
        const sent = path.split('/');
        const compared = path.slice(0, maxNearMissChars);
        let best = candidates[0]!;
        let bestDistance = Infinity;
        for (const candidate of candidates) {
            // A path parameter takes the segment sent in its place.
            const concrete = candidate.segments.map((segment, index) => (segment.startsWith('{') ? sent[index] ?? segment : segment)).join('/');
            const distance = editDistance(compared, concrete.slice(0, maxNearMissChars)) + (candidate.method === method ? 0 : 1);
            if (distance < bestDistance) {
                best = candidate;
                bestDistance = distance;
            }
        }

        return { method: best.method, path: best.path };
    };
}


/** The Levenshtein distance of two strings, in time proportional to the product of their lengths. */
export function editDistance(a: string, b: string): number {

    let previous = Uint32Array.from({ length: b.length + 1 }, (_, index) => index);
    let current = new Uint32Array(b.length + 1);
    for (let i = 1; i <= a.length; ++i) {
        current[0] = i;
        for (let j = 1; j <= b.length; ++j) {
            current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
        }

        [previous, current] = [current, previous];
    }

    return previous[b.length]!;
}
