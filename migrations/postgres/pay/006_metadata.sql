-- The PostgreSQL twin of migrations/sqlite/pay/006. A deposit or withdrawal keeps the metadata its client gave it,
-- the JSON text of an object of string values (text, as every JSON of the project, so that it reads back byte for
-- byte as on SQLite); one made before metadata existed has none: {}. A transaction an Idempotency-Key kept before
-- replays with its wallet's owner and {} (payTransaction in lib/namespaces/pay/rules.ts).

ALTER TABLE transactions ADD COLUMN metadata text NOT NULL DEFAULT '{}';
