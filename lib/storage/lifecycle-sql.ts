// The SQL both engines read statuses that move with time through, written once: each engine passes how it writes the
// parameter holding now (the store's clock as text, in the form records keep, so text order is time order).
//
// A read shows the status of its data set's clock: the stored status, moved on by the instants the row already keeps.
// It is one CASE over the columns of the row being read, with no further lookup (bookings: bookingStatusAt's rule, for
// a row stored confirmed). A booking's moves are also stored by the timeline, so a read only runs ahead of it (between
// the instant and the timer, or while a frozen clock was moved), and time never takes a booking back: a stored status
// later than the clock's stands (a clock set back), and a cancelled booking stays cancelled. An offer's end is never
// stored: it is this read alone, so an offer reads valid again under a clock set back before its valid_until, unless
// it was stored expired (a fixture's or an export's).

/** A booking's status at now, as the column `status`. */
export function bookingStatusColumn(now: string): string {

    return `CASE
        WHEN status IN ('cancelled', 'completed') THEN status
        WHEN return_at <= ${now} THEN 'completed'
        WHEN status = 'active' OR pickup_at <= ${now} THEN 'active'
        ELSE 'confirmed'
    END AS status`;
}


/** An offer's status at now, as the column `status`: expired from its valid_until on, or stored expired. */
export function offerStatusColumn(now: string): string {

    return `CASE WHEN status = 'valid' AND valid_until <= ${now} THEN 'expired' ELSE status END AS status`;
}


/**
 * The booking transition due first, if it is due by `until`: its booking's id, its due instant and its type. At one
 * instant a completion comes before a start (its type sorts first), so a vehicle returned at noon is free before the
 * next booking of it starts at noon. `lock`
 * is what locks the rows read where the engine locks rows (PostgreSQL: skip a row another claim holds).
 */
export function nextBookingTransition(until: string, lock = ''): string {

    return `SELECT id, due, type FROM (
        SELECT * FROM (SELECT id, pickup_at AS due, 'logistics.booking.started' AS type FROM bookings
            WHERE status = 'confirmed' ORDER BY pickup_at, id LIMIT 1 ${lock}) starts
        UNION ALL
        SELECT * FROM (SELECT id, return_at AS due, 'logistics.booking.completed' AS type FROM bookings
            WHERE status = 'active' ORDER BY return_at, id LIMIT 1 ${lock}) completions
    ) pending WHERE due <= ${until} ORDER BY due, type, id LIMIT 1`;
}


/** The earliest due instant of a booking transition, null when none is pending. */
export const nextBookingDue = `SELECT min(due) AS due FROM (
    SELECT min(pickup_at) AS due FROM bookings WHERE status = 'confirmed'
    UNION ALL
    SELECT min(return_at) AS due FROM bookings WHERE status = 'active'
) pending`;
