-- A deposit or withdrawal keeps the metadata its client gave it, the JSON text of an object of string values; one
-- made before metadata existed has none: {}. A transaction an Idempotency-Key kept before replays with its wallet's
-- owner and {} (payTransaction in lib/namespaces/pay/rules.ts), so kept outcomes stay as they were written.

ALTER TABLE transactions ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
