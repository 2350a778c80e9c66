-- The PostgreSQL twin of migrations/sqlite/weather/001.
-- Forecasts a weather backend would serve once one is provisioned; nothing writes them yet.
CREATE TABLE forecasts (
    id text COLLATE "C" PRIMARY KEY,
    location text NOT NULL,
    valid_from text COLLATE "C" NOT NULL,
    valid_until text COLLATE "C" NOT NULL,
    summary text NOT NULL,
    created_at text COLLATE "C" NOT NULL
);
