-- The PostgreSQL twin of migrations/sqlite/notes/001: ids and times sort with COLLATE "C", SQLite's binary order.
CREATE TABLE notes (
    id text COLLATE "C" PRIMARY KEY,
    text text NOT NULL CHECK (length(text) BETWEEN 1 AND 200),
    created_at text COLLATE "C" NOT NULL,
    remind_at text COLLATE "C",
    reminded_at text COLLATE "C"
);

CREATE INDEX notes_order ON notes (created_at, id);
CREATE INDEX notes_reminders ON notes (remind_at, id) WHERE remind_at IS NOT NULL AND reminded_at IS NULL;
