-- Endpoints that can be paused and rotated, as in migrations/postgres/logistics/006_endpoint_state.sql.

ALTER TABLE webhook_endpoints ADD COLUMN disabled_at text COLLATE "C";
ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason text COLLATE "C" CHECK (disabled_reason IN ('paused', 'given_up'));
ALTER TABLE webhook_endpoints ADD COLUMN given_up_in_a_row integer NOT NULL DEFAULT 0;
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret text COLLATE "C";
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_until text COLLATE "C";
