-- Timestamps are stored in one fixed form (2030-06-01T10:00:00.000Z) so that comparing them as text
-- compares them in time: the overlap check and the list order rely on it.

CREATE TABLE locations (
    id TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 100),
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    address TEXT NOT NULL CHECK (length(address) BETWEEN 1 AND 300),
    city TEXT NOT NULL CHECK (length(city) BETWEEN 1 AND 100),
    latitude REAL NOT NULL CHECK (latitude BETWEEN -90 AND 90),
    longitude REAL NOT NULL CHECK (longitude BETWEEN -180 AND 180),
    created_at TEXT NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z')
) STRICT;

CREATE INDEX locations_by_created ON locations (created_at, id);


CREATE TABLE vehicles (
    id TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 100),
    make TEXT NOT NULL CHECK (length(make) BETWEEN 1 AND 100),
    model TEXT NOT NULL CHECK (length(model) BETWEEN 1 AND 100),
    year INTEGER NOT NULL CHECK (year BETWEEN 1900 AND 2100),
    seats INTEGER NOT NULL CHECK (seats BETWEEN 1 AND 100),
    daily_rate REAL NOT NULL CHECK (daily_rate >= 0),
    currency TEXT NOT NULL CHECK (currency GLOB '[A-Z][A-Z][A-Z]'),
    is_available INTEGER NOT NULL CHECK (is_available IN (0, 1)),
    created_at TEXT NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z')
) STRICT;

-- The unfiltered list and the available=true|false list, each in list order.
CREATE INDEX vehicles_by_created ON vehicles (created_at, id);
CREATE INDEX vehicles_by_availability ON vehicles (is_available, created_at, id);


CREATE TABLE drivers (
    id TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 100),
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    phone TEXT NOT NULL CHECK (length(phone) BETWEEN 1 AND 50),
    license_number TEXT NOT NULL UNIQUE CHECK (length(license_number) BETWEEN 1 AND 50),
    vehicle_id TEXT REFERENCES vehicles (id),
    is_active INTEGER NOT NULL CHECK (is_active IN (0, 1)),
    created_at TEXT NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z')
) STRICT;

-- A vehicle has at most one assigned driver.
CREATE UNIQUE INDEX drivers_by_vehicle ON drivers (vehicle_id) WHERE vehicle_id IS NOT NULL;


CREATE TABLE bookings (
    id TEXT PRIMARY KEY,
    vehicle_id TEXT NOT NULL REFERENCES vehicles (id),
    pickup_location_id TEXT NOT NULL REFERENCES locations (id),
    dropoff_location_id TEXT NOT NULL REFERENCES locations (id),
    pickup_at TEXT NOT NULL CHECK (pickup_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'),
    return_at TEXT NOT NULL CHECK (return_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'),
    notes TEXT NOT NULL DEFAULT '' CHECK (length(notes) <= 1000),
    customer_id TEXT NOT NULL CHECK (length(customer_id) > 0),
    -- Only confirmed bookings hold their vehicle; a cancelled one frees its slot.
    status TEXT NOT NULL CHECK (status IN ('confirmed', 'cancelled')),
    created_at TEXT NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'),
    CHECK (return_at > pickup_at)
) STRICT;

-- The caller's bookings in list order.
CREATE INDEX bookings_by_customer ON bookings (customer_id, created_at, id);

-- The overlap check: only the confirmed bookings of one vehicle that start before the requested return.
CREATE INDEX bookings_by_vehicle_schedule ON bookings (vehicle_id, status, pickup_at, return_at);
