-- The PostgreSQL twin of migrations/sqlite/logistics/001: the same tables, checks and indexes.
-- Timestamps are stored as text in one fixed form (2030-06-01T10:00:00.000Z) so that comparing them as text
-- compares them in time, and so that they read back byte for byte as on SQLite: the overlap check and the list
-- order rely on it. Ids and timestamps sort with COLLATE "C", SQLite's binary order.
--
-- The store decides the overlap rule under a lock on the vehicle's row. The exclusion constraint on bookings is the
-- backstop the database itself keeps: no two confirmed bookings of one vehicle overlap, whatever wrote them. Its
-- periods are ranges of those text timestamps (half-open, [pickup_at, return_at)), compared in "C" order, and its
-- equality on vehicle_id needs btree_gist.

CREATE EXTENSION IF NOT EXISTS btree_gist;

CREATE TYPE booking_period AS RANGE (subtype = text, collation = "C");


CREATE TABLE locations (
    id text COLLATE "C" PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 100),
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    address text NOT NULL CHECK (length(address) BETWEEN 1 AND 300),
    city text NOT NULL CHECK (length(city) BETWEEN 1 AND 100),
    latitude double precision NOT NULL CHECK (latitude BETWEEN -90 AND 90),
    longitude double precision NOT NULL CHECK (longitude BETWEEN -180 AND 180),
    created_at text COLLATE "C" NOT NULL CHECK (created_at ~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$')
);

CREATE INDEX locations_by_created ON locations (created_at, id);


CREATE TABLE vehicles (
    id text COLLATE "C" PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 100),
    make text NOT NULL CHECK (length(make) BETWEEN 1 AND 100),
    model text NOT NULL CHECK (length(model) BETWEEN 1 AND 100),
    year integer NOT NULL CHECK (year BETWEEN 1900 AND 2100),
    seats integer NOT NULL CHECK (seats BETWEEN 1 AND 100),
    daily_rate double precision NOT NULL CHECK (daily_rate >= 0),
    currency text COLLATE "C" NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    is_available boolean NOT NULL,
    created_at text COLLATE "C" NOT NULL CHECK (created_at ~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$')
);

-- The unfiltered list and the available=true|false list, each in list order.
CREATE INDEX vehicles_by_created ON vehicles (created_at, id);
CREATE INDEX vehicles_by_availability ON vehicles (is_available, created_at, id);


CREATE TABLE drivers (
    id text COLLATE "C" PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 100),
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    phone text NOT NULL CHECK (length(phone) BETWEEN 1 AND 50),
    license_number text NOT NULL UNIQUE CHECK (length(license_number) BETWEEN 1 AND 50),
    vehicle_id text COLLATE "C" REFERENCES vehicles (id),
    is_active boolean NOT NULL,
    created_at text COLLATE "C" NOT NULL CHECK (created_at ~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$')
);

-- A vehicle has at most one assigned driver.
CREATE UNIQUE INDEX drivers_by_vehicle ON drivers (vehicle_id) WHERE vehicle_id IS NOT NULL;


CREATE TABLE bookings (
    id text COLLATE "C" PRIMARY KEY,
    vehicle_id text COLLATE "C" NOT NULL REFERENCES vehicles (id),
    pickup_location_id text COLLATE "C" NOT NULL REFERENCES locations (id),
    dropoff_location_id text COLLATE "C" NOT NULL REFERENCES locations (id),
    pickup_at text COLLATE "C" NOT NULL CHECK (pickup_at ~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$'),
    return_at text COLLATE "C" NOT NULL CHECK (return_at ~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$'),
    notes text NOT NULL DEFAULT '' CHECK (length(notes) <= 1000),
    customer_id text COLLATE "C" NOT NULL CHECK (length(customer_id) > 0),
    -- Only confirmed bookings hold their vehicle; a cancelled one frees its slot.
    status text COLLATE "C" NOT NULL CHECK (status IN ('confirmed', 'cancelled')),
    created_at text COLLATE "C" NOT NULL CHECK (created_at ~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$'),
    CHECK (return_at > pickup_at),
    CONSTRAINT bookings_no_overlap EXCLUDE USING gist (vehicle_id WITH =, booking_period(pickup_at, return_at) WITH &&) WHERE (status = 'confirmed')
);

-- The caller's bookings in list order.
CREATE INDEX bookings_by_customer ON bookings (customer_id, created_at, id);

-- The overlap check: only the confirmed bookings of one vehicle that start before the requested return.
CREATE INDEX bookings_by_vehicle_schedule ON bookings (vehicle_id, status, pickup_at, return_at);
