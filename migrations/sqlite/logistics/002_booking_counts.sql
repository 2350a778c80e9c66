-- The number of bookings of each customer, kept by the triggers below in the same transaction as the write that
-- changes it, so that a page of the caller's bookings reads its total instead of counting them.

CREATE TABLE customer_booking_counts (
    customer_id TEXT PRIMARY KEY CHECK (length(customer_id) > 0),
    bookings INTEGER NOT NULL CHECK (bookings >= 0)
) STRICT, WITHOUT ROWID;

INSERT INTO customer_booking_counts (customer_id, bookings)
    SELECT customer_id, count(*) FROM bookings GROUP BY customer_id;


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
