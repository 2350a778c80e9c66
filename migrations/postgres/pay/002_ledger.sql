-- Wallets, providers and a double-entry ledger in integer minor units.

-- The ISO 4217 currencies the gateway knows; decimals is the currency's minor-unit exponent.
CREATE TABLE currencies (
    code text COLLATE "C" PRIMARY KEY CHECK (code ~ '^[A-Z]{3}$'),
    name text NOT NULL,
    decimals integer NOT NULL CHECK (decimals BETWEEN 0 AND 4)
);

INSERT INTO currencies (code, name, decimals) VALUES
    ('EUR', 'Euro', 2),
    ('GBP', 'Pound sterling', 2),
    ('JPY', 'Japanese yen', 0),
    ('KES', 'Kenyan shilling', 2),
    ('USD', 'United States dollar', 2);

-- Fiat on/off-ramp processors.
CREATE TABLE providers (
    id text COLLATE "C" PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 64),
    name text NOT NULL,
    supports_deposit boolean NOT NULL,
    supports_withdrawal boolean NOT NULL,
    status text COLLATE "C" NOT NULL CHECK (status IN ('active', 'disabled')),
    created_at text COLLATE "C" NOT NULL
);

-- What a provider moves: each row is exactly one fiat currency or one token type.
CREATE TABLE provider_assets (
    provider_id text COLLATE "C" NOT NULL REFERENCES providers (id),
    currency text COLLATE "C" REFERENCES currencies (code),
    token_symbol text COLLATE "C" REFERENCES token_types (symbol),
    asset text COLLATE "C" NOT NULL GENERATED ALWAYS AS (coalesce(currency, token_symbol)) STORED,
    CHECK ((currency IS NULL) <> (token_symbol IS NULL))
);

CREATE UNIQUE INDEX provider_assets_by_provider ON provider_assets (provider_id, asset);

INSERT INTO providers (id, name, supports_deposit, supports_withdrawal, status, created_at) VALUES
    ('sandbox', 'Local sandbox (settles at once)', true, true, 'active', '2026-01-01T00:00:00.000Z'),
    ('legacy-bank', 'Legacy bank transfer (switched off)', true, true, 'disabled', '2026-01-01T00:00:00.000Z');

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
    id text COLLATE "C" PRIMARY KEY,
    owner_id text COLLATE "C" NOT NULL UNIQUE,
    created_at text COLLATE "C" NOT NULL
);

-- Ledger accounts: one per wallet and asset, and one clearing account per provider and asset.
-- balance is kept by the entries trigger below, never written directly; 9007199254740991 is the largest safe integer in JSON clients.
CREATE TABLE accounts (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    wallet_id text COLLATE "C" REFERENCES wallets (id),
    provider_id text COLLATE "C" REFERENCES providers (id),
    asset text COLLATE "C" NOT NULL CHECK (asset ~ '^[A-Z]'),
    balance bigint NOT NULL DEFAULT 0 CHECK (balance BETWEEN -9007199254740991 AND 9007199254740991),
    created_at text COLLATE "C" NOT NULL,
    CHECK ((wallet_id IS NULL) <> (provider_id IS NULL)),
    CHECK (wallet_id IS NULL OR balance >= 0)
);

CREATE UNIQUE INDEX accounts_of_wallets ON accounts (wallet_id, asset) WHERE wallet_id IS NOT NULL;
CREATE UNIQUE INDEX accounts_of_providers ON accounts (provider_id, asset) WHERE provider_id IS NOT NULL;

-- A completed deposit or withdrawal of a wallet.
CREATE TABLE transactions (
    id text COLLATE "C" PRIMARY KEY,
    wallet_id text COLLATE "C" NOT NULL REFERENCES wallets (id),
    type text COLLATE "C" NOT NULL CHECK (type IN ('deposit', 'withdrawal')),
    asset text COLLATE "C" NOT NULL,
    amount bigint NOT NULL CHECK (amount BETWEEN 1 AND 100000000000),
    provider_id text COLLATE "C" NOT NULL REFERENCES providers (id),
    status text COLLATE "C" NOT NULL CHECK (status IN ('completed')),
    created_at text COLLATE "C" NOT NULL
);

CREATE INDEX transactions_by_wallet ON transactions (wallet_id, created_at, id);

-- Double-entry lines: the entries of one transaction sum to zero.
CREATE TABLE entries (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    transaction_id text COLLATE "C" NOT NULL REFERENCES transactions (id),
    account_id bigint NOT NULL REFERENCES accounts (id),
    amount bigint NOT NULL CHECK (amount <> 0),
    created_at text COLLATE "C" NOT NULL
);

CREATE INDEX entries_by_transaction ON entries (transaction_id);
CREATE INDEX entries_by_account ON entries (account_id);

CREATE FUNCTION entries_same_asset() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    IF (SELECT asset FROM accounts WHERE id = NEW.account_id) IS DISTINCT FROM (SELECT asset FROM transactions WHERE id = NEW.transaction_id) THEN
        RAISE EXCEPTION 'a ledger entry must be in the asset of its transaction';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER entries_same_asset BEFORE INSERT ON entries FOR EACH ROW EXECUTE FUNCTION entries_same_asset();

CREATE FUNCTION entries_post() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE accounts SET balance = balance + NEW.amount WHERE id = NEW.account_id;
    RETURN NULL;
END;
$$;

CREATE TRIGGER entries_post AFTER INSERT ON entries FOR EACH ROW EXECUTE FUNCTION entries_post();

-- Checked at commit, once every entry of the transaction is in: a transaction that does not balance rolls back.
-- Each function keeps the search_path it was created with, so that writes from any session find the pay tables.
CREATE FUNCTION entries_balanced() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    IF (SELECT sum(amount) FROM entries WHERE transaction_id = NEW.transaction_id) <> 0 THEN
        RAISE EXCEPTION 'the entries of transaction % do not sum to zero', NEW.transaction_id;
    END IF;
    RETURN NULL;
END;
$$;

CREATE CONSTRAINT TRIGGER entries_balanced AFTER INSERT ON entries DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION entries_balanced();

CREATE FUNCTION ledger_immutable() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    RAISE EXCEPTION '% are immutable', TG_ARGV[0];
END;
$$;

CREATE TRIGGER entries_no_update BEFORE UPDATE ON entries FOR EACH ROW EXECUTE FUNCTION ledger_immutable('ledger entries');
CREATE TRIGGER entries_no_delete BEFORE DELETE ON entries FOR EACH ROW EXECUTE FUNCTION ledger_immutable('ledger entries');
CREATE TRIGGER entries_no_truncate BEFORE TRUNCATE ON entries FOR EACH STATEMENT EXECUTE FUNCTION ledger_immutable('ledger entries');
CREATE TRIGGER transactions_no_update BEFORE UPDATE ON transactions FOR EACH ROW EXECUTE FUNCTION ledger_immutable('transactions');
CREATE TRIGGER transactions_no_delete BEFORE DELETE ON transactions FOR EACH ROW EXECUTE FUNCTION ledger_immutable('transactions');
CREATE TRIGGER transactions_no_truncate BEFORE TRUNCATE ON transactions FOR EACH STATEMENT EXECUTE FUNCTION ledger_immutable('transactions');

-- Idempotency-Key records per caller: the request's fingerprint and the outcome to replay.
CREATE TABLE idempotency_keys (
    owner_id text COLLATE "C" NOT NULL,
    key text COLLATE "C" NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    fingerprint text COLLATE "C" NOT NULL,
    outcome text NOT NULL,
    created_at text COLLATE "C" NOT NULL,
    PRIMARY KEY (owner_id, key)
);

CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
