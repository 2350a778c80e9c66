-- The key pair `localgate provision pay` printed, kept as SHA-256 hashes: pay counts as configured only for
-- settings that carry this pair, and recording a new pair (provision again, rotate-keys) retires the old one.
CREATE TABLE credentials (
    id integer PRIMARY KEY CHECK (id = 1),
    publishable_key_sha256 text COLLATE "C" NOT NULL CHECK (length(publishable_key_sha256) = 64),
    secret_key_sha256 text COLLATE "C" NOT NULL CHECK (length(secret_key_sha256) = 64),
    recorded_at text COLLATE "C" NOT NULL
);
