-- The test namespace's one table: short notes, listed oldest first.
CREATE TABLE notes (
    id TEXT PRIMARY KEY,
    text TEXT NOT NULL CHECK (length(text) BETWEEN 1 AND 200),
    created_at TEXT NOT NULL
) STRICT;

CREATE INDEX notes_order ON notes (created_at, id);
