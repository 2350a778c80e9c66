-- Providers whose moves take time: a move through one is pending until its settles_at, then completed or failed.

-- A provider's terms: how long its deposits and withdrawals take to settle (0 settles at once), and how its moves fail:
-- 'returned' (a move whose amount in minor units ends in 99 settles failed) or 'declined' (a deposit whose amount ends
-- in 02 is refused at once).
ALTER TABLE providers
    ADD COLUMN deposit_settlement_s integer NOT NULL DEFAULT 0 CHECK (deposit_settlement_s BETWEEN 0 AND 31536000),
    ADD COLUMN withdrawal_settlement_s integer NOT NULL DEFAULT 0 CHECK (withdrawal_settlement_s BETWEEN 0 AND 31536000),
    ADD COLUMN failure_mode text COLLATE "C" NOT NULL DEFAULT 'none' CHECK (failure_mode IN ('none', 'returned', 'declined'));

INSERT INTO providers (id, name, supports_deposit, supports_withdrawal, status, created_at, deposit_settlement_s, withdrawal_settlement_s, failure_mode) VALUES
    ('bank-transfer', 'Bank transfer (deposits settle in 2 days, withdrawals in 1)', true, true, 'active', '2026-01-01T00:00:00.000Z', 172800, 86400, 'returned'),
    ('card', 'Card (settles at once, deposits may be declined)', true, true, 'active', '2026-01-01T00:00:00.000Z', 0, 0, 'declined');

INSERT INTO provider_assets (provider_id, currency, token_symbol) VALUES
    ('bank-transfer', 'EUR', NULL),
    ('bank-transfer', 'GBP', NULL),
    ('bank-transfer', 'USD', NULL),
    ('card', 'EUR', NULL),
    ('card', 'GBP', NULL),
    ('card', 'USD', NULL);

-- A wallet holds three accounts per asset: available (spendable), pending_in (deposits not settled yet) and
-- pending_out (withdrawals held until they settle). Clearing accounts are all 'available'.
ALTER TABLE accounts ADD COLUMN kind text COLLATE "C" NOT NULL DEFAULT 'available' CHECK (kind IN ('available', 'pending_in', 'pending_out'));
DROP INDEX accounts_of_wallets;
CREATE UNIQUE INDEX accounts_of_wallets ON accounts (wallet_id, asset, kind) WHERE wallet_id IS NOT NULL;

-- Transactions gain their settlement; the rows there are settled as they were made.
ALTER TABLE transactions
    ADD COLUMN settles_at text COLLATE "C",
    ADD COLUMN settled_at text COLLATE "C",
    ADD COLUMN failure_code text COLLATE "C" CHECK (failure_code IN ('returned'));

ALTER TABLE transactions DISABLE TRIGGER transactions_no_update;
UPDATE transactions SET settles_at = created_at, settled_at = created_at;
ALTER TABLE transactions ENABLE TRIGGER transactions_no_update;

ALTER TABLE transactions
    ALTER COLUMN settles_at SET NOT NULL,
    DROP CONSTRAINT transactions_status_check,
    ADD CONSTRAINT transactions_status_check CHECK (status IN ('pending', 'completed', 'failed')),
    ADD CONSTRAINT transactions_settles_after_creation CHECK (settles_at >= created_at),
    ADD CONSTRAINT transactions_settled_when_due CHECK (settled_at = settles_at),
    ADD CONSTRAINT transactions_settled_unless_pending CHECK ((status = 'pending') = (settled_at IS NULL)),
    ADD CONSTRAINT transactions_failure_when_failed CHECK ((status = 'failed') = (failure_code IS NOT NULL));

-- The timeline's scan: the pending transactions by the instant they fall due.
CREATE INDEX transactions_due ON transactions (status, settles_at, id);

-- A transaction changes once: pending to completed or failed, with its settled_at and failure_code; nothing else moves.
CREATE FUNCTION transactions_settle_only() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    IF NOT (OLD.status = 'pending' AND NEW.status IN ('completed', 'failed')
        AND NEW.id IS NOT DISTINCT FROM OLD.id AND NEW.wallet_id IS NOT DISTINCT FROM OLD.wallet_id
        AND NEW.type IS NOT DISTINCT FROM OLD.type AND NEW.asset IS NOT DISTINCT FROM OLD.asset
        AND NEW.amount IS NOT DISTINCT FROM OLD.amount AND NEW.provider_id IS NOT DISTINCT FROM OLD.provider_id
        AND NEW.created_at IS NOT DISTINCT FROM OLD.created_at AND NEW.settles_at IS NOT DISTINCT FROM OLD.settles_at) THEN
        RAISE EXCEPTION 'transactions are immutable but for a pending one settling';
    END IF;
    RETURN NEW;
END;
$$;

DROP TRIGGER transactions_no_update ON transactions;
CREATE TRIGGER transactions_no_update BEFORE UPDATE ON transactions FOR EACH ROW EXECUTE FUNCTION transactions_settle_only();

-- An Idempotency-Key is kept until keep_until: 24 hours after its move, or after the move settled when that is later.
ALTER TABLE idempotency_keys ADD COLUMN keep_until text COLLATE "C" NOT NULL DEFAULT '';
UPDATE idempotency_keys SET keep_until = to_char((created_at::timestamptz + interval '1 day') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
-- A kept transaction replays with the settlement every transaction now carries: it settled as it was made.
UPDATE idempotency_keys SET outcome = jsonb_set(jsonb_set(jsonb_set(outcome::jsonb,
        '{transaction,settles_at}', outcome::jsonb #> '{transaction,created_at}'),
        '{transaction,settled_at}', outcome::jsonb #> '{transaction,created_at}'),
        '{transaction,failure_code}', 'null'::jsonb)::text
    WHERE outcome <> '' AND outcome::jsonb ? 'transaction';
DROP INDEX idempotency_keys_by_age;
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (keep_until);
