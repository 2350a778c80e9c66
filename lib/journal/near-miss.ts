import type { Server } from '@hapi/hapi';

import type { NearMiss } from '../data-set/journal-entry';


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
        const scored = candidates.map((candidate) => {

            // A path parameter takes the segment sent in its place.
            const concrete = candidate.segments.map((segment, index) => (segment.startsWith('{') ? sent[index] ?? segment : segment)).join('/');
            return { candidate, distance: editDistance(compared, concrete.slice(0, maxNearMissChars)) + (candidate.method === method ? 0 : 1) };
        });

        // The first of the closest; there is always one, as the API has routes.
        const { candidate: best } = scored.reduce((closest, next) => (next.distance < closest.distance ? next : closest));
        return { method: best.method, path: best.path };
    };
}


/** The Levenshtein distance of two strings, in time proportional to the product of their lengths. */
export function editDistance(a: string, b: string): number {

    // The previous row of the table and the one being filled, swapped after each character of a.
    let previous = Uint32Array.from({ length: b.length + 1 }, (_, index) => index);
    let current = new Uint32Array(b.length + 1);
    let distance = b.length;
    for (let i = 0; i < a.length; ++i) {
        // The cell left of the one being filled, and the one above that: both read as the row is walked.
        let left = i + 1;
        let diagonal = i;
        current[0] = left;
        for (const [j, above] of previous.subarray(1).entries()) {
            left = Math.min(above + 1, left + 1, diagonal + (a[i] === b[j] ? 0 : 1));
            diagonal = above;
            current[j + 1] = left;
        }

        distance = left;
        [previous, current] = [current, previous];
    }

    return distance;
}
