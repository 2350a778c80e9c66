import type { Server } from '@hapi/hapi';

import { moveClock, readClock, type ClockPayload } from './clock';
import { clockMoveSchemas, clockSchema, defaultClockSchema } from './schemas';
import { scopedOf, scopedRoutes, scopeOf } from './scoped-routes';


const clockNotes = [
    '{"now": "2030-01-01T00:00:00Z"} freezes it at an instant; {"advance": "2h"} moves it forward. Either way it then stands still until moved again.',
    'The move walks from the clock\'s instant to the new one through every instant at which something falls due, earliest first:',
    'the transitions due at an instant (a pending payment settling, a booking starting or ending), each stamped with its own due instant,',
    'then the webhook attempts due at it (first attempts of the events written on the way, and retries), so that a receiver sees what the wall clock would show it.',
    'applied counts the transitions by type, whoever applied them while the move ran; attempted counts the attempts made.',
    'A move answers within CLOCK_MOVE_DEADLINE_MS (10 s by default): past it, the transitions left are applied at once and remaining counts the deliveries',
    'with an attempt due by the new instant still to make, which are made after the answer, in due order.',
    'Moving back applies nothing and undoes nothing: what was applied stays, and what is pending applies when the clock reaches its instant again.',
    'Offers are no transitions: each reads expired from its valid_until by the clock, so a clock moved back reads it valid again.'
].join(' ');

const clockErrors = {
    422: 'clock_out_of_range: an advance would take the clock past 9999-12-31, which records cannot hold (a now before 1970 is a 400, as its pattern says)'
};


/** GET /_clock, and PUT /_clock and /_instances/{instance_id}/clock: a data set's clock, read and moved. */
export function clockRoutes(server: Server): void {

    const moveSchemas = clockMoveSchemas(server.app.localgate.settings.namespaces);
    scopedRoutes(server, (target) => {

        // An instance's clock reads in its record (GET /_instances/{instance_id}).
        if (!target.instance) {
            target.route({
                method: 'GET',
                path: target.path('clock'),
                options: {
                    description: 'Read the default data set\'s clock',
                    notes: 'Admin token required. frozen is null while the clock follows the wall clock (the default; CLOCK=<instant> starts it frozen).',
                    response: { status: { 200: defaultClockSchema } },
                    handler: (request) => readClock(scopeOf(request))
                }
            });
        }

        target.route<{ Payload: ClockPayload }>({
            method: 'PUT',
            path: target.path('clock'),
            options: {
                description: `Set or advance ${target.whose} clock, applying what falls due`,
                notes: target.instance ? clockNotes : `Admin token required. ${clockNotes} With CLOCK set and the data on files, a restart goes on from where the clock stands.`,
                plugins: { localgate: { errors: clockErrors } },
                validate: { payload: clockSchema },
                response: { status: { 200: target.instance ? moveSchemas.instance : moveSchemas.default } },
                async handler(request) {

                    const scoped = scopedOf(request);
                    const moved = await moveClock(scoped, request.payload);
                    // An instance answers as GET /_instances/{instance_id} reads it, the default data set as GET /_clock.
                    return { ...(scoped.describe ? scoped.describe() : readClock(scoped.scope)), ...moved };
                }
            }
        });
    });
}
