-- The test namespace's one table: short notes, listed oldest first. A note with remind_at is reminded (reminded_at
-- set to it) once the data set's clock passes that instant.
CREATE TABLE notes (
    id TEXT PRIMARY KEY,
    text TEXT NOT NULL CHECK (length(text) BETWEEN 1 AND 200),
    created_at TEXT NOT NULL,
    remind_at TEXT,
    reminded_at TEXT
) STRICT;

CREATE INDEX notes_order ON notes (created_at, id);
-- The reminders still to make, earliest first.
CREATE INDEX notes_reminders ON notes (remind_at, id) WHERE remind_at IS NOT NULL AND reminded_at IS NULL;
