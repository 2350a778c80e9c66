-- Endpoints that can be paused and rotated, as in migrations/sqlite/logistics/006_endpoint_state.sql.

ALTER TABLE webhook_endpoints ADD COLUMN disabled_at TEXT;
ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason TEXT CHECK (disabled_reason IN ('paused', 'given_up'));
ALTER TABLE webhook_endpoints ADD COLUMN given_up_in_a_row INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret TEXT;
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_until TEXT;
