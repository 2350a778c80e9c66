-- The PostgreSQL twin of migrations/sqlite/outbox/endpoint_state.sql.
-- Endpoints that can be paused and rotated (docs/architecture.md, "Events and webhooks"): a disabled endpoint's
-- deliveries stay pending until it is enabled; the given-up deliveries in a row since its last delivery, the same in
-- each event-writing database of the data set, disable it at WEBHOOK_DISABLE_AFTER; a rotated secret keeps signing
-- beside the new one until its overlap ends, an instant on the data set's clock.
--
-- Spliced into every event-writing namespace at the version its descriptor names; databases made when each namespace
-- had a copy of its own record that copy's checksum, the same body but for its first line.
-- earlier form: sha256 a70d275e3da00da754fe89a3083a99f6038500f409c597a43004da7ac451f49d (commerce/004, logistics/006, pay/007)

ALTER TABLE webhook_endpoints ADD COLUMN disabled_at text COLLATE "C";
ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason text COLLATE "C" CHECK (disabled_reason IN ('paused', 'given_up'));
ALTER TABLE webhook_endpoints ADD COLUMN given_up_in_a_row integer NOT NULL DEFAULT 0;
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret text COLLATE "C";
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_until text COLLATE "C";
