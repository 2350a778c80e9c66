import Fs from 'node:fs';
import Path from 'node:path';

import { Clock, IdSource, unheard, type RecordContext } from '../../lib/record-context';
import type { CommerceStore } from '../../lib/namespaces/commerce/store';
import type { LogisticsStore } from '../../lib/namespaces/logistics/store';


// Scenarios of records that move with time, run on a store of either engine through its interface: what each step
// answered, so that a test can hold one engine to exact values and the other to the same transcript.

const demoOf = (name: string) => JSON.parse(Fs.readFileSync(Path.join(__dirname, '..', '..', 'data', 'demo', `${name}.json`), 'utf8')) as Record<string, Record<string, unknown>[]>;

const logisticsDemo = demoOf('logistics');

/** The demo offers, as the shipped file has them. */
export const demoOffers = demoOf('commerce').offers!.map((offer) => ({ id: String(offer.id), valid_until: String(offer.valid_until) }));


/** A context on a clock frozen at the instant, with sequential ids from 1. */
export function frozenContext(instant: string, clock = new Clock(new Date(instant))): RecordContext {

    return { clock, ids: new IdSource('sequential'), committed: unheard };
}


/**
 * Books three bookings of one vehicle on the clock (2031-03-01T09:00): one on 2 March 10:00-12:00, one picking up as it
 * returns (12:00 to 4 March), one on 5 March that is cancelled; then moves the clock past pickups and returns, reading
 * statuses before and after applying what fell due. Returns every answer, in order.
 */
export async function bookingLifecycle(store: LogisticsStore, clock: Clock): Promise<unknown[]> {

    const vehicle = String(logisticsDemo.vehicles!.find((row) => row.is_available !== false)!.id);
    const location = String(logisticsDemo.locations![0]!.id);
    const book = (pickupAt: string, returnAt: string) => store.createBooking('booker', { vehicle_id: vehicle, pickup_location_id: location, dropoff_location_id: location, pickup_at: pickupAt, return_at: returnAt, notes: '', metadata: {} });
    const statuses = async () => (await store.listBookings('booker', { limit: 10, offset: 0 })).data.map((booking) => booking.status);
    const at = (instant: string) => clock.freeze(new Date(instant));

    const transcript: unknown[] = [];
    const first = await book('2031-03-02T10:00:00.000Z', '2031-03-02T12:00:00.000Z');
    const second = await book('2031-03-02T12:00:00.000Z', '2031-03-04T00:00:00.000Z');
    const third = await book('2031-03-05T10:00:00.000Z', '2031-03-06T10:00:00.000Z');
    transcript.push([first.id, second.id, third.id], await store.cancelBooking('booker', third.id));
    transcript.push(await store.nextDue(), await statuses());

    // Between the instants and the timeline: reads show the clock's status while the stored one waits.
    at('2031-03-02T10:00:00.000Z');
    transcript.push(await statuses(), (await store.getBooking('booker', first.id)).status);
    at('2031-03-02T12:00:00.000Z');
    transcript.push(await statuses(), await store.nextDue());

    // Earliest first, ties by id, at most the limit: the first completes as the second starts, at the same instant.
    transcript.push(await store.applyDue(new Date('2031-03-02T12:00:00.000Z'), 2));
    transcript.push(await store.applyDue(new Date('2031-03-02T12:00:00.000Z'), 10));
    transcript.push(await store.applyDue(new Date('2031-03-02T12:00:00.000Z'), 10), await store.nextDue());

    // A clock set back shows what is stored: time never takes a booking back.
    at('2031-03-01T09:00:00.000Z');
    transcript.push(await statuses());
    transcript.push(await store.applyDue(new Date('2031-03-10T00:00:00.000Z'), 0));
    transcript.push(await store.applyDue(new Date('2031-03-10T00:00:00.000Z'), 10), await store.nextDue(), await statuses());
    return transcript;
}


/**
 * Reads the demo offers' statuses as the clock moves from 2026-01-01 to 2026-12-01, to 2030 and back to 2026-01-01:
 * an offer's end is read off the clock, never stored. Returns every answer, in order.
 */
export async function offerStatusesOverTime(store: CommerceStore, clock: Clock): Promise<unknown[]> {

    const statuses = async () => (await store.listOffers({}, { limit: 100, offset: 0 })).data.map((offer) => [offer.id, offer.status]);
    const transcript: unknown[] = [await statuses()];
    for (const instant of ['2026-12-01T00:00:00.000Z', '2030-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z']) {
        clock.freeze(new Date(instant));
        transcript.push(await statuses());
    }

    return transcript;
}
