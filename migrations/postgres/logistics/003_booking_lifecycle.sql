-- The PostgreSQL twin of migrations/sqlite/logistics/003.
-- A booking moves with time: confirmed until its pickup_at, active from then, completed from its return_at; a
-- cancelled one stays cancelled. The timeline moves the stored status (a conditional update per transition), and
-- reads show the status the data set's clock implies meanwhile. Every booking that is not cancelled holds its vehicle:
-- the exclusion constraint now covers active and completed bookings too. The counting triggers of 002 count rows
-- whatever their status and stay as they are.

ALTER TABLE bookings DROP CONSTRAINT bookings_status_check;
ALTER TABLE bookings ADD CONSTRAINT bookings_status_check CHECK (status IN ('confirmed', 'active', 'completed', 'cancelled'));

ALTER TABLE bookings DROP CONSTRAINT bookings_no_overlap;
ALTER TABLE bookings ADD CONSTRAINT bookings_no_overlap
    EXCLUDE USING gist (vehicle_id WITH =, booking_period(pickup_at, return_at) WITH &&) WHERE (status <> 'cancelled');

-- The overlap check: the bookings of one vehicle that hold it and start before the requested return, latest first.
DROP INDEX bookings_by_vehicle_schedule;
CREATE INDEX bookings_holding_vehicle ON bookings (vehicle_id, pickup_at, return_at, status) WHERE status <> 'cancelled';

-- The due scans of the timeline: confirmed bookings by pickup, active ones by return, earliest first.
CREATE INDEX bookings_due_to_start ON bookings (pickup_at, id) WHERE status = 'confirmed';
CREATE INDEX bookings_due_to_complete ON bookings (return_at, id) WHERE status = 'active';
