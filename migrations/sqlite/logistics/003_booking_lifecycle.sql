-- A booking moves with time: confirmed until its pickup_at, active from then, completed from its return_at; a
-- cancelled one stays cancelled. The timeline moves the stored status (a conditional update per transition), and
-- reads show the status the data set's clock implies meanwhile. Every booking that is not cancelled holds its vehicle.
--
-- SQLite cannot change a CHECK in place: the table is built again under its name, with its rows, indexes and the
-- counting triggers of 002 (dropping a table drops its triggers). Nothing refers to bookings, and the rows are copied
-- before the triggers exist, so customer_booking_counts keeps its numbers.

CREATE TABLE bookings_lifecycle (
    id TEXT PRIMARY KEY,
    vehicle_id TEXT NOT NULL REFERENCES vehicles (id),
    pickup_location_id TEXT NOT NULL REFERENCES locations (id),
    dropoff_location_id TEXT NOT NULL REFERENCES locations (id),
    pickup_at TEXT NOT NULL CHECK (pickup_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'),
    return_at TEXT NOT NULL CHECK (return_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'),
    notes TEXT NOT NULL DEFAULT '' CHECK (length(notes) <= 1000),
    customer_id TEXT NOT NULL CHECK (length(customer_id) > 0),
    -- Every booking but a cancelled one holds its vehicle.
    status TEXT NOT NULL CHECK (status IN ('confirmed', 'active', 'completed', 'cancelled')),
    created_at TEXT NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'),
    CHECK (return_at > pickup_at)
) STRICT;

INSERT INTO bookings_lifecycle (id, vehicle_id, pickup_location_id, dropoff_location_id, pickup_at, return_at, notes, customer_id, status, created_at)
    SELECT id, vehicle_id, pickup_location_id, dropoff_location_id, pickup_at, return_at, notes, customer_id, status, created_at FROM bookings;

DROP TABLE bookings;

ALTER TABLE bookings_lifecycle RENAME TO bookings;


-- The caller's bookings in list order.
CREATE INDEX bookings_by_customer ON bookings (customer_id, created_at, id);

-- The overlap check: the bookings of one vehicle that hold it and start before the requested return, latest first.
CREATE INDEX bookings_holding_vehicle ON bookings (vehicle_id, pickup_at, return_at, status) WHERE status <> 'cancelled';

-- The due scans of the timeline: confirmed bookings by pickup, active ones by return, earliest first.
CREATE INDEX bookings_due_to_start ON bookings (pickup_at, id) WHERE status = 'confirmed';
CREATE INDEX bookings_due_to_complete ON bookings (return_at, id) WHERE status = 'active';


CREATE TRIGGER bookings_counted AFTER INSERT ON bookings
BEGIN
    INSERT INTO customer_booking_counts (customer_id, bookings) VALUES (NEW.customer_id, 1)
        ON CONFLICT (customer_id) DO UPDATE SET bookings = bookings + 1;
END;

CREATE TRIGGER bookings_uncounted AFTER DELETE ON bookings
BEGIN
    UPDATE customer_booking_counts SET bookings = bookings - 1 WHERE customer_id = OLD.customer_id;
END;

CREATE TRIGGER bookings_moved AFTER UPDATE OF customer_id ON bookings
BEGIN
    UPDATE customer_booking_counts SET bookings = bookings - 1 WHERE customer_id = OLD.customer_id;
    INSERT INTO customer_booking_counts (customer_id, bookings) VALUES (NEW.customer_id, 1)
        ON CONFLICT (customer_id) DO UPDATE SET bookings = bookings + 1;
END;
