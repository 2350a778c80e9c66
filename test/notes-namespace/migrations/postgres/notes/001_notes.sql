-- The PostgreSQL twin of migrations/sqlite/notes/001: ids and times sort with COLLATE "C", SQLite's binary order.
CREATE TABLE notes (
    id text COLLATE "C" PRIMARY KEY,
    text text NOT NULL CHECK (length(text) BETWEEN 1 AND 200),
    created_at text COLLATE "C" NOT NULL
);

CREATE INDEX notes_order ON notes (created_at, id);
