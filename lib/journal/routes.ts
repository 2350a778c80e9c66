import type { Server } from '@hapi/hapi';

import { noContent } from '../fields';
import { maxJsonDepth } from '../nesting';
import { scopedRoutes, scopeOf } from '../instances/scoped-routes';
import { listResponse, type Page } from '../lists';
import { maxMatchingSteps } from './json-match';
import { maxRegexProgram, maxUnionFanOut, requestPatternSchema, type RequestPattern } from './pattern-schema';
import { journalCountSchema, journalFindSchema, journalListQuery, journalListSchema } from './schemas';
import { recordsOf, type JournalApi } from './service';


const patternNotes = `The body is a request pattern in WireMock's JSON: method (or ANY); url, urlPath, urlPathPattern or urlPattern; headers and queryParameters with equalTo, contains, matches or absent; bodyPatterns with equalToJson (ignoreExtraElements, ignoreArrayOrder), matchesJsonPath (an expression, or {expression} with a sub-matcher) or contains. An empty body matches every request. Regular expressions run on RE2 (no backreferences or lookaround, at most 200 compiled instructions); a JSONPath holds one recursive descent at most, unions of at most 16 branches together, and no function calls. Pairing array items under both ignoreArrayOrder and ignoreExtraElements spends at most ${maxMatchingSteps} comparison steps a request, else a 400.`;

// What the schemas of a pattern cannot say, and the server refuses with 400 validation_failed naming the field.
const patternErrors = `a urlPathPattern, urlPattern or matches that RE2 cannot compile or that compiles past ${maxRegexProgram} instructions; a matchesJsonPath that does not parse, or holds a second recursive descent, unions past ${maxUnionFanOut} branches or a function call; an equalToJson string that is not JSON, or JSON nested past ${maxJsonDepth} levels (code validation_failed naming the field)`;


/** The default data set's journal at /_requests, an instance's under /_instances/{instance_id}/requests. */
export function journalRoutes(server: Server, api: JournalApi): void {

    scopedRoutes(server, ({ path, what, route }) => {

        route<{ Query: Page & { unmatched: boolean } }>({
            method: 'GET',
            path: path('requests'),
            options: {
                description: `The requests ${what} received`,
                notes: 'Admin token required. In arrival order, at most JOURNAL_SIZE kept (the oldest dropped). unmatched=true lists only requests no route took (404, 405), each with its near_miss.',
                validate: { query: journalListQuery },
                response: { status: { 200: journalListSchema } },
                handler(request, h) {

                    const { limit, offset, unmatched } = request.query;
                    // The route reads the records, so that a page builds the entries it shows and parses no other body.
                    const kept = recordsOf(scopeOf(request)).filter(({ head }) => !unmatched || head.near_miss !== null);
                    return listResponse(h, { data: kept.slice(offset, offset + limit).map(({ entry }) => entry), total: kept.length });
                }
            }
        });

        route<{ Payload: RequestPattern }>({
            method: 'POST',
            path: path('requests/count'),
            options: {
                description: `Count the requests ${what} received that match a pattern`,
                notes: `Admin token required. ${patternNotes}`,
                plugins: { localgate: { errors: { 400: patternErrors } } },
                validate: { payload: requestPatternSchema },
                response: { status: { 200: journalCountSchema } },
                handler: (request) => ({ count: api.find(scopeOf(request), request.payload).length })
            }
        });

        route<{ Payload: RequestPattern }>({
            method: 'POST',
            path: path('requests/find'),
            options: {
                description: `Find the requests ${what} received that match a pattern`,
                notes: `Admin token required. ${patternNotes}`,
                plugins: { localgate: { errors: { 400: patternErrors } } },
                validate: { payload: requestPatternSchema },
                response: { status: { 200: journalFindSchema } },
                handler: (request) => ({ requests: api.find(scopeOf(request), request.payload) })
            }
        });

        route({
            method: 'DELETE',
            path: path('requests'),
            options: {
                description: `Forget the requests ${what} received`,
                response: { status: { 204: noContent } },
                handler(request, h) {

                    api.clear(scopeOf(request));
                    return h.response().code(204);
                }
            }
        });
    });
}
