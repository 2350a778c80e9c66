-- A booking keeps the metadata its client gave it, the JSON text of an object of string values; one made before
-- metadata existed has none: {}.

ALTER TABLE bookings ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
