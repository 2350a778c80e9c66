-- The PostgreSQL twin of migrations/sqlite/commerce/002.
-- An offer is valid until its valid_until and expired from then. Reads take that status off the data set's clock: an
-- offer stored valid reads expired once its valid_until has passed, and nothing stores its end (it is no transition of
-- the timeline). The column keeps what was set on purpose: an offer a fixture or an export stores expired stays
-- expired whatever the clock. Offers stored before this migration start valid.

ALTER TABLE offers ADD COLUMN status text COLLATE "C" NOT NULL DEFAULT 'valid' CHECK (status IN ('valid', 'expired'));
