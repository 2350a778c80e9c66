-- Forecasts a weather backend would serve once one is provisioned; nothing writes them yet.
CREATE TABLE forecasts (
    id TEXT PRIMARY KEY,
    location TEXT NOT NULL,
    valid_from TEXT NOT NULL,
    valid_until TEXT NOT NULL,
    summary TEXT NOT NULL,
    created_at TEXT NOT NULL
) STRICT;
