-- The outbox tables, in the shape the built-in namespaces' migrations give them: copied from
-- migrations/postgres/logistics/004_events.sql.

CREATE SEQUENCE IF NOT EXISTS public.localgate_event_positions;

CREATE TABLE events (
    position bigint PRIMARY KEY CHECK (position > 0),
    id text COLLATE "C" NOT NULL UNIQUE,
    type text COLLATE "C" NOT NULL,
    created_at text COLLATE "C" NOT NULL CHECK (created_at ~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$'),
    -- The record as its owner reads it through the API, as JSON.
    data text NOT NULL
);


CREATE TABLE webhook_endpoints (
    id text COLLATE "C" PRIMARY KEY,
    ordinal integer NOT NULL,
    url text NOT NULL,
    -- The patterns as given, as a JSON array; NULL: every type.
    types text,
    secret text NOT NULL,
    signing_clock text COLLATE "C" NOT NULL CHECK (signing_clock IN ('wall', 'instance')),
    -- The delays after each failed attempt, in milliseconds, as a JSON array.
    retry_schedule text NOT NULL,
    created_at text COLLATE "C" NOT NULL,
    delivered integer NOT NULL DEFAULT 0,
    failed integer NOT NULL DEFAULT 0
);

-- The endpoint's patterns as rows, so that the deliveries of a new event are found in one INSERT … SELECT: 'pay.'
-- with prefix 1 for 'pay.*', '' with prefix 1 for '*'.
CREATE TABLE webhook_endpoint_types (
    endpoint_id text COLLATE "C" NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    pattern text COLLATE "C" NOT NULL,
    prefix integer NOT NULL CHECK (prefix IN (0, 1)),
    PRIMARY KEY (endpoint_id, pattern, prefix)
);


-- One row per event and endpoint it matches: attempts made so far, and the next one's instant on the data set's
-- clock; leased_until (the wall clock) while a process is sending it.
CREATE TABLE webhook_deliveries (
    event_position bigint NOT NULL REFERENCES events (position) ON DELETE CASCADE,
    endpoint_id text COLLATE "C" NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    state text COLLATE "C" NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'given_up')),
    due_at text COLLATE "C" NOT NULL,
    leased_until text COLLATE "C",
    PRIMARY KEY (event_position, endpoint_id)
);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (due_at, event_position) WHERE state = 'pending';
-- The deliveries to one endpoint, found when it is removed (the cascade) without reading every row.
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id);
