-- The PostgreSQL twin of migrations/sqlite/outbox/events.sql: the events of a namespace's changes and the webhook
-- outbox (docs/architecture.md, "Events and webhooks"). An event and its deliveries are written by the store in the
-- change's own transaction. Instants and ids are text in the one form of every created_at, compared with COLLATE "C"
-- (SQLite's binary order), so that text order is time order; JSON is kept as text, read back byte for byte.
--
-- Positions are the data set's order across its namespaces: nextval of one sequence per database, in the public
-- schema that every namespace's search_path ends with, so that the namespaces placed on one database share it. Each
-- namespace's events migration creates it when it is missing; migrations run under the one migration lock of the
-- database (storage/postgres/migrate.ts), so two processes or namespaces never create it at once.
--
-- This body is spliced into every event-writing namespace at the version its descriptor names. Databases made when
-- each namespace had a copy of its own record that copy's checksum: the same body, its first line naming its twin.
-- earlier form: sha256 d07874faf528ce5b3c777257c4906a476c658feb0209777a99953782e5a0a4e6 (commerce/003_events.sql)
-- earlier form: sha256 24d44bd9abe437d15a5d9cc2156959fb408c572ac81875bb2d593b7fe18c9a00 (logistics/004_events.sql)
-- earlier form: sha256 218ba5c41813aae2bfd0ac4b975dca1295b42a976e94ab87884aa84897027569 (pay/005_events.sql)

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
