-- Wallets, providers and a double-entry ledger in integer minor units.

-- The ISO 4217 currencies the gateway knows; decimals is the currency's minor-unit exponent.
CREATE TABLE currencies (
    code TEXT PRIMARY KEY CHECK (length(code) = 3 AND code GLOB '[A-Z][A-Z][A-Z]'),
    name TEXT NOT NULL,
    decimals INTEGER NOT NULL CHECK (decimals BETWEEN 0 AND 4)
) STRICT;

INSERT INTO currencies (code, name, decimals) VALUES
    ('EUR', 'Euro', 2),
    ('GBP', 'Pound sterling', 2),
    ('JPY', 'Japanese yen', 0),
    ('KES', 'Kenyan shilling', 2),
    ('USD', 'United States dollar', 2);

-- Fiat on/off-ramp processors.
CREATE TABLE providers (
    id TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 64),
    name TEXT NOT NULL,
    supports_deposit INTEGER NOT NULL CHECK (supports_deposit IN (0, 1)),
    supports_withdrawal INTEGER NOT NULL CHECK (supports_withdrawal IN (0, 1)),
    status TEXT NOT NULL CHECK (status IN ('active', 'disabled')),
    created_at TEXT NOT NULL
) STRICT;

-- What a provider moves: each row is exactly one fiat currency or one token type.
CREATE TABLE provider_assets (
    provider_id TEXT NOT NULL REFERENCES providers (id),
    currency TEXT REFERENCES currencies (code),
    token_symbol TEXT REFERENCES token_types (symbol),
    asset TEXT NOT NULL GENERATED ALWAYS AS (coalesce(currency, token_symbol)) VIRTUAL,
    CHECK ((currency IS NULL) <> (token_symbol IS NULL))
) STRICT;

CREATE UNIQUE INDEX provider_assets_by_provider ON provider_assets (provider_id, asset);

INSERT INTO providers (id, name, supports_deposit, supports_withdrawal, status, created_at) VALUES
    ('sandbox', 'Local sandbox (settles at once)', 1, 1, 'active', '2026-01-01T00:00:00.000Z'),
    ('legacy-bank', 'Legacy bank transfer (switched off)', 1, 1, 'disabled', '2026-01-01T00:00:00.000Z');

INSERT INTO provider_assets (provider_id, currency, token_symbol) VALUES
    ('sandbox', 'EUR', NULL),
    ('sandbox', 'GBP', NULL),
    ('sandbox', 'JPY', NULL),
    ('sandbox', 'KES', NULL),
    ('sandbox', 'USD', NULL),
    ('sandbox', NULL, 'MIT'),
    ('sandbox', NULL, 'MXT'),
    ('sandbox', NULL, 'NST'),
    ('legacy-bank', 'EUR', NULL),
    ('legacy-bank', 'USD', NULL);

-- One wallet per caller, opened on first use.
CREATE TABLE wallets (
    id TEXT PRIMARY KEY,
    owner_id TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
) STRICT;

-- Ledger accounts: one per wallet and asset, and one clearing account per provider and asset.
-- balance is kept by the entries trigger below, never written directly; 9007199254740991 is the largest safe integer in JSON clients.
CREATE TABLE accounts (
    id INTEGER PRIMARY KEY,
    wallet_id TEXT REFERENCES wallets (id),
    provider_id TEXT REFERENCES providers (id),
    asset TEXT NOT NULL CHECK (asset GLOB '[A-Z]*'),
    balance INTEGER NOT NULL DEFAULT 0 CHECK (balance BETWEEN -9007199254740991 AND 9007199254740991),
    created_at TEXT NOT NULL,
    CHECK ((wallet_id IS NULL) <> (provider_id IS NULL)),
    CHECK (wallet_id IS NULL OR balance >= 0)
) STRICT;

CREATE UNIQUE INDEX accounts_of_wallets ON accounts (wallet_id, asset) WHERE wallet_id IS NOT NULL;
CREATE UNIQUE INDEX accounts_of_providers ON accounts (provider_id, asset) WHERE provider_id IS NOT NULL;

-- A completed deposit or withdrawal of a wallet.
CREATE TABLE transactions (
    id TEXT PRIMARY KEY,
    wallet_id TEXT NOT NULL REFERENCES wallets (id),
    type TEXT NOT NULL CHECK (type IN ('deposit', 'withdrawal')),
    asset TEXT NOT NULL,
    amount INTEGER NOT NULL CHECK (amount BETWEEN 1 AND 100000000000),
    provider_id TEXT NOT NULL REFERENCES providers (id),
    status TEXT NOT NULL CHECK (status IN ('completed')),
    created_at TEXT NOT NULL
) STRICT;

CREATE INDEX transactions_by_wallet ON transactions (wallet_id, created_at, id);

-- Double-entry lines: the entries of one transaction sum to zero.
CREATE TABLE entries (
    id INTEGER PRIMARY KEY,
    transaction_id TEXT NOT NULL REFERENCES transactions (id),
    account_id INTEGER NOT NULL REFERENCES accounts (id),
    amount INTEGER NOT NULL CHECK (amount <> 0),
    created_at TEXT NOT NULL
) STRICT;

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

CREATE TRIGGER transactions_no_update BEFORE UPDATE ON transactions
BEGIN
    SELECT RAISE(ABORT, 'transactions are immutable');
END;

CREATE TRIGGER transactions_no_delete BEFORE DELETE ON transactions
BEGIN
    SELECT RAISE(ABORT, 'transactions are immutable');
END;

-- Idempotency-Key records per caller: the request's fingerprint and the outcome to replay.
CREATE TABLE idempotency_keys (
    owner_id TEXT NOT NULL,
    key TEXT NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    fingerprint TEXT NOT NULL,
    outcome TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (owner_id, key)
) STRICT, WITHOUT ROWID;

CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
