-- The outbox tables, in the shape the built-in namespaces' migrations give them: copied from
-- migrations/sqlite/logistics/004_events.sql.

CREATE TABLE events (
    position INTEGER PRIMARY KEY CHECK (position > 0),
    id TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    created_at TEXT NOT NULL,
    -- The record as its owner reads it through the API, as JSON.
    data TEXT NOT NULL
) STRICT;


CREATE TABLE webhook_endpoints (
    id TEXT PRIMARY KEY,
    ordinal INTEGER NOT NULL,
    url TEXT NOT NULL,
    -- The patterns as given, as a JSON array; NULL: every type.
    types TEXT,
    secret TEXT NOT NULL,
    signing_clock TEXT NOT NULL CHECK (signing_clock IN ('wall', 'instance')),
    -- The delays after each failed attempt, in milliseconds, as a JSON array.
    retry_schedule TEXT NOT NULL,
    created_at TEXT NOT NULL,
    delivered INTEGER NOT NULL DEFAULT 0,
    failed INTEGER NOT NULL DEFAULT 0
) STRICT;

-- The endpoint's patterns as rows, so that the deliveries of a new event are found in one INSERT … SELECT: 'pay.'
-- with prefix 1 for 'pay.*', '' with prefix 1 for '*'.
CREATE TABLE webhook_endpoint_types (
    endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    pattern TEXT NOT NULL,
    prefix INTEGER NOT NULL CHECK (prefix IN (0, 1)),
    PRIMARY KEY (endpoint_id, pattern, prefix)
) STRICT, WITHOUT ROWID;


-- One row per event and endpoint it matches: attempts made so far, and the next one's instant on the data set's
-- clock; leased_until (the wall clock) while a process is sending it.
CREATE TABLE webhook_deliveries (
    event_position INTEGER NOT NULL REFERENCES events (position) ON DELETE CASCADE,
    endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'given_up')),
    due_at TEXT NOT NULL,
    leased_until TEXT,
    PRIMARY KEY (event_position, endpoint_id)
) STRICT, WITHOUT ROWID;

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (due_at, event_position) WHERE state = 'pending';
-- The deliveries to one endpoint, found when it is removed (the cascade) without reading every row.
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id);
