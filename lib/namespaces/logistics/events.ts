import type { EventTypeSpec } from '../../namespace';
import type { AnnouncedEvent } from '../../storage/events-sql';
import { bookingSchema } from './schemas';
import type { Booking } from './store';


// What logistics' changes announce, decided here once for both engines: a store persists the events these functions
// answer and makes pending the instant they name.

/** The record each of logistics' event types carries. */
interface LogisticsEventData {
    'logistics.booking.created': Booking;
    'logistics.booking.started': Booking;
    'logistics.booking.completed': Booking;
    'logistics.booking.cancelled': Booking;
}

/** An event logistics announces. */
export type LogisticsEvent = AnnouncedEvent<LogisticsEventData>;

/** The event types of logistics' transitions: a booking starts at its pickup_at and completes at its return_at. */
export type BookingTransitionType = 'logistics.booking.started' | 'logistics.booking.completed';


/** What logistics' changes announce: each event's data is the booking as its customer reads it at the event's instant. */
export const logisticsEventTypes = {
    'logistics.booking.created': { description: 'A booking was made: the booking as its customer reads it', data: bookingSchema },
    'logistics.booking.started': { description: 'A booking\'s pickup_at came on the data set\'s clock: the booking, active', data: bookingSchema },
    'logistics.booking.completed': { description: 'A booking\'s return_at came on the data set\'s clock: the booking, completed', data: bookingSchema },
    'logistics.booking.cancelled': { description: 'A booking was cancelled: the booking, cancelled', data: bookingSchema }
} satisfies Record<keyof LogisticsEventData, EventTypeSpec>;

/** The event types of logistics' transitions, as its descriptor declares them. */
export const logisticsTransitions: readonly BookingTransitionType[] = ['logistics.booking.started', 'logistics.booking.completed'];


/** What a booking made announces: the booking as its customer reads it, at its created_at. */
export function bookingCreatedEvent(booking: Booking): LogisticsEvent {

    return { type: 'logistics.booking.created', created_at: booking.created_at, data: booking };
}


/**
 * The instant a booking made makes pending: its start and end are transitions of the data set's timeline, so the next
 * is due at pickup, or at return for one made past its pickup.
 */
export function bookingDue(booking: Booking): Date {

    return new Date(booking.status === 'confirmed' ? booking.pickup_at : booking.return_at);
}


/** What a cancellation announces: the booking, cancelled, at the instant `at` it was cancelled. */
export function bookingCancelledEvent(booking: Booking, at: string): LogisticsEvent {

    return { type: 'logistics.booking.cancelled', created_at: at, data: booking };
}


/** What a booking's transition announces: the booking as it reads at the transition's due instant, stamped with it. */
export function bookingMovedEvent(transition: { type: BookingTransitionType; due: string }, booking: Booking): LogisticsEvent {

    return { type: transition.type, created_at: transition.due, data: booking };
}
