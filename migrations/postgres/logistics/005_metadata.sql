-- The PostgreSQL twin of migrations/sqlite/logistics/005. A booking keeps the metadata its client gave it, the JSON
-- text of an object of string values (text, so that it reads back byte for byte as on SQLite); one made before
-- metadata existed has none: {}.

ALTER TABLE bookings ADD COLUMN metadata text NOT NULL DEFAULT '{}';
