-- The token types the pay namespace knows, with their lifecycle stage.
CREATE TABLE token_types (
    symbol text COLLATE "C" PRIMARY KEY CHECK (symbol ~ '^[A-Z]{3}'),
    name text COLLATE "C" NOT NULL,
    decimals integer NOT NULL CHECK (decimals BETWEEN 0 AND 18),
    stage text COLLATE "C" NOT NULL CHECK (stage IN ('planned', 'pilot', 'live', 'retired')),
    description text NOT NULL,
    created_at text COLLATE "C" NOT NULL
);

INSERT INTO token_types (symbol, name, decimals, stage, description, created_at) VALUES
    ('MIT', 'Market Token', 2, 'live', 'Spent and accepted at the businesses of the commerce namespace', '2026-01-01T00:00:00.000Z'),
    ('MXT', 'Mobility Token', 2, 'pilot', 'Pays for vehicle bookings of the logistics namespace, in pilot', '2026-01-01T00:00:00.000Z'),
    ('NST', 'Network Settlement Token', 6, 'planned', 'Settles balances between providers; not issued yet', '2026-01-01T00:00:00.000Z');
