-- Providers whose moves take time: a move through one is pending until its settles_at, then completed or failed.

-- A provider's terms: how long its deposits and withdrawals take to settle (0 settles at once), and how its moves fail:
-- 'returned' (a move whose amount in minor units ends in 99 settles failed) or 'declined' (a deposit whose amount ends
-- in 02 is refused at once).
ALTER TABLE providers ADD COLUMN deposit_settlement_s INTEGER NOT NULL DEFAULT 0 CHECK (deposit_settlement_s BETWEEN 0 AND 31536000);
ALTER TABLE providers ADD COLUMN withdrawal_settlement_s INTEGER NOT NULL DEFAULT 0 CHECK (withdrawal_settlement_s BETWEEN 0 AND 31536000);
ALTER TABLE providers ADD COLUMN failure_mode TEXT NOT NULL DEFAULT 'none' CHECK (failure_mode IN ('none', 'returned', 'declined'));

INSERT INTO providers (id, name, supports_deposit, supports_withdrawal, status, created_at, deposit_settlement_s, withdrawal_settlement_s, failure_mode) VALUES
    ('bank-transfer', 'Bank transfer (deposits settle in 2 days, withdrawals in 1)', 1, 1, 'active', '2026-01-01T00:00:00.000Z', 172800, 86400, 'returned'),
    ('card', 'Card (settles at once, deposits may be declined)', 1, 1, 'active', '2026-01-01T00:00:00.000Z', 0, 0, 'declined');

INSERT INTO provider_assets (provider_id, currency, token_symbol) VALUES
    ('bank-transfer', 'EUR', NULL),
    ('bank-transfer', 'GBP', NULL),
    ('bank-transfer', 'USD', NULL),
    ('card', 'EUR', NULL),
    ('card', 'GBP', NULL),
    ('card', 'USD', NULL);

-- A wallet holds three accounts per asset: available (spendable), pending_in (deposits not settled yet) and
-- pending_out (withdrawals held until they settle). Clearing accounts are all 'available'.
ALTER TABLE accounts ADD COLUMN kind TEXT NOT NULL DEFAULT 'available' CHECK (kind IN ('available', 'pending_in', 'pending_out'));
DROP INDEX accounts_of_wallets;
CREATE UNIQUE INDEX accounts_of_wallets ON accounts (wallet_id, asset, kind) WHERE wallet_id IS NOT NULL;

-- Transactions gain their settlement. SQLite cannot alter a CHECK, so the table is made anew and its rows copied; the
-- entries that refer to it are moved to a new table too, since dropping a table still referred to would break their
-- foreign keys even once the new table carries its name. Entries are copied as they are: balances stay as posted.
CREATE TABLE transactions_settled (
    id TEXT PRIMARY KEY,
    wallet_id TEXT NOT NULL REFERENCES wallets (id),
    type TEXT NOT NULL CHECK (type IN ('deposit', 'withdrawal')),
    asset TEXT NOT NULL,
    amount INTEGER NOT NULL CHECK (amount BETWEEN 1 AND 100000000000),
    provider_id TEXT NOT NULL REFERENCES providers (id),
    status TEXT NOT NULL CHECK (status IN ('pending', 'completed', 'failed')),
    created_at TEXT NOT NULL,
    settles_at TEXT NOT NULL CHECK (settles_at >= created_at),
    settled_at TEXT CHECK (settled_at = settles_at),
    failure_code TEXT CHECK (failure_code IN ('returned')),
    CHECK ((status = 'pending') = (settled_at IS NULL)),
    CHECK ((status = 'failed') = (failure_code IS NOT NULL))
) STRICT;

INSERT INTO transactions_settled (id, wallet_id, type, asset, amount, provider_id, status, created_at, settles_at, settled_at, failure_code)
    SELECT id, wallet_id, type, asset, amount, provider_id, status, created_at, created_at, created_at, NULL FROM transactions;

CREATE TABLE entries_kept (
    id INTEGER PRIMARY KEY,
    transaction_id TEXT NOT NULL REFERENCES transactions_settled (id),
    account_id INTEGER NOT NULL REFERENCES accounts (id),
    amount INTEGER NOT NULL CHECK (amount <> 0),
    created_at TEXT NOT NULL
) STRICT;

INSERT INTO entries_kept (id, transaction_id, account_id, amount, created_at) SELECT id, transaction_id, account_id, amount, created_at FROM entries;

DROP TABLE entries;
DROP TABLE transactions;
ALTER TABLE transactions_settled RENAME TO transactions;
ALTER TABLE entries_kept RENAME TO entries;

CREATE INDEX transactions_by_wallet ON transactions (wallet_id, created_at, id);
-- The timeline's scan: the pending transactions by the instant they fall due.
CREATE INDEX transactions_due ON transactions (status, settles_at, id);
CREATE INDEX entries_by_transaction ON entries (transaction_id);
CREATE INDEX entries_by_account ON entries (account_id);

CREATE TRIGGER entries_same_asset BEFORE INSERT ON entries
WHEN (SELECT asset FROM accounts WHERE id = NEW.account_id) IS NOT (SELECT asset FROM transactions WHERE id = NEW.transaction_id)
BEGIN
    SELECT RAISE(ABORT, 'a ledger entry must be in the asset of its transaction');
END;

CREATE TRIGGER entries_post AFTER INSERT ON entries
BEGIN
    UPDATE accounts SET balance = balance + NEW.amount WHERE id = NEW.account_id;
END;

CREATE TRIGGER entries_no_update BEFORE UPDATE ON entries
BEGIN
    SELECT RAISE(ABORT, 'ledger entries are immutable');
END;

CREATE TRIGGER entries_no_delete BEFORE DELETE ON entries
BEGIN
    SELECT RAISE(ABORT, 'ledger entries are immutable');
END;

-- A transaction changes once: pending to completed or failed, with its settled_at and failure_code; nothing else moves.
CREATE TRIGGER transactions_no_update BEFORE UPDATE ON transactions
WHEN NOT (OLD.status = 'pending' AND NEW.status IN ('completed', 'failed')
    AND NEW.id IS OLD.id AND NEW.wallet_id IS OLD.wallet_id AND NEW.type IS OLD.type AND NEW.asset IS OLD.asset
    AND NEW.amount IS OLD.amount AND NEW.provider_id IS OLD.provider_id AND NEW.created_at IS OLD.created_at
    AND NEW.settles_at IS OLD.settles_at)
BEGIN
    SELECT RAISE(ABORT, 'transactions are immutable but for a pending one settling');
END;

CREATE TRIGGER transactions_no_delete BEFORE DELETE ON transactions
BEGIN
    SELECT RAISE(ABORT, 'transactions are immutable');
END;

-- An Idempotency-Key is kept until keep_until: 24 hours after its move, or after the move settled when that is later.
ALTER TABLE idempotency_keys ADD COLUMN keep_until TEXT NOT NULL DEFAULT '';
UPDATE idempotency_keys SET keep_until = strftime('%Y-%m-%dT%H:%M:%fZ', created_at, '+1 day');
-- A kept transaction replays with the settlement every transaction now carries: it settled as it was made.
UPDATE idempotency_keys SET outcome = json_set(outcome,
        '$.transaction.settles_at', json_extract(outcome, '$.transaction.created_at'),
        '$.transaction.settled_at', json_extract(outcome, '$.transaction.created_at'),
        '$.transaction.failure_code', json('null'))
    WHERE json_extract(outcome, '$.transaction') IS NOT NULL;
DROP INDEX idempotency_keys_by_age;
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (keep_until);
