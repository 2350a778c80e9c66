-- The PostgreSQL twin of migrations/sqlite/logistics/002.
-- The number of bookings of each customer, kept by the trigger below in the same transaction as the write that
-- changes it, so that a page of the caller's bookings reads its total instead of counting them.

CREATE TABLE customer_booking_counts (
    customer_id text COLLATE "C" PRIMARY KEY CHECK (length(customer_id) > 0),
    bookings integer NOT NULL CHECK (bookings >= 0)
);

INSERT INTO customer_booking_counts (customer_id, bookings)
    SELECT customer_id, count(*) FROM bookings GROUP BY customer_id;


CREATE FUNCTION bookings_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE customer_booking_counts SET bookings = bookings - 1 WHERE customer_id = OLD.customer_id;
    END IF;

    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO customer_booking_counts (customer_id, bookings) VALUES (NEW.customer_id, 1)
            ON CONFLICT (customer_id) DO UPDATE SET bookings = customer_booking_counts.bookings + 1;
    END IF;

    RETURN NULL;
END;
$$;

CREATE TRIGGER bookings_counted AFTER INSERT ON bookings FOR EACH ROW EXECUTE FUNCTION bookings_count();
CREATE TRIGGER bookings_uncounted AFTER DELETE ON bookings FOR EACH ROW EXECUTE FUNCTION bookings_count();
CREATE TRIGGER bookings_moved AFTER UPDATE OF customer_id ON bookings FOR EACH ROW EXECUTE FUNCTION bookings_count();
