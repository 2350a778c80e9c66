-- An offer is valid until its valid_until and expired from then. The timeline moves the stored status (a conditional
-- update per offer), and reads show the status the data set's clock implies meanwhile, so an offer stored valid
-- reads expired as soon as its valid_until has passed. Offers stored before this migration start valid; those
-- already past their valid_until are expired by the timeline's first pass.

ALTER TABLE offers ADD COLUMN status TEXT NOT NULL DEFAULT 'valid' CHECK (status IN ('valid', 'expired'));

-- The due scan of the timeline: valid offers by the end of their validity, earliest first.
CREATE INDEX offers_due_to_expire ON offers (valid_until, id) WHERE status = 'valid';
