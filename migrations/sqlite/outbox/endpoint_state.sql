-- Endpoints that can be paused and rotated (docs/architecture.md, "Events and webhooks"): a disabled endpoint's
-- deliveries stay pending until it is enabled; the given-up deliveries in a row since its last delivery, the same in
-- each event-writing database of the data set, disable it at WEBHOOK_DISABLE_AFTER; a rotated secret keeps signing
-- beside the new one until its overlap ends, an instant on the data set's clock.

ALTER TABLE webhook_endpoints ADD COLUMN disabled_at TEXT;
ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason TEXT CHECK (disabled_reason IN ('paused', 'given_up'));
ALTER TABLE webhook_endpoints ADD COLUMN given_up_in_a_row INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret TEXT;
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_until TEXT;
