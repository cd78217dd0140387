-- Accounts own files and keys. storage_bytes is kept exact by the same
-- transactions that insert and delete files.
CREATE TABLE accounts (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    plan          TEXT NOT NULL,
    grace_period  INTEGER NOT NULL DEFAULT 0,
    storage_bytes INTEGER NOT NULL DEFAULT 0 CHECK (storage_bytes >= 0),
    created_at    INTEGER NOT NULL
);

-- API keys, stored only as the SHA-256 of the secret.
CREATE TABLE api_keys (
    id         TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    kind       TEXT NOT NULL CHECK (kind IN ('secret', 'public')),
    name       TEXT,
    key_hash   BLOB NOT NULL UNIQUE,
    origins    TEXT NOT NULL DEFAULT '[]',
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);
CREATE INDEX api_keys_account ON api_keys(account_id);

-- Files. Times are unix milliseconds (UTC).
CREATE TABLE files (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id),
    name         TEXT NOT NULL,
    folder       TEXT,
    size         INTEGER NOT NULL,
    content_type TEXT NOT NULL,
    private      INTEGER NOT NULL,
    sha256       TEXT NOT NULL,
    blob_key     TEXT NOT NULL UNIQUE,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER
);
CREATE INDEX files_by_account ON files(account_id, created_at DESC, id DESC);
CREATE INDEX files_by_folder ON files(account_id, folder, created_at DESC, id DESC);
CREATE INDEX files_by_expiry ON files(expires_at) WHERE expires_at IS NOT NULL;

-- Monthly counters; a new month is a new row, so nothing has to reset them.
CREATE TABLE usage_periods (
    account_id      TEXT NOT NULL REFERENCES accounts(id),
    period          TEXT NOT NULL,
    upload_count    INTEGER NOT NULL DEFAULT 0,
    bandwidth_bytes INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, period)
);

-- Blobs that must go. An upload registers its blob here before writing it
-- (due far ahead) and removes the row in the transaction that commits the
-- file; deletion and expiry add the blob due now. A worker deletes what is
-- due and retries failures, so no blob is ever orphaned, even across crashes.
CREATE TABLE blob_deletions (
    blob_key   TEXT PRIMARY KEY,
    due_at     INTEGER NOT NULL,
    attempts   INTEGER NOT NULL DEFAULT 0,
    last_error TEXT
);
CREATE INDEX blob_deletions_due ON blob_deletions(due_at);

-- Upload idempotency keys (24 h).
CREATE TABLE idempotency_keys (
    account_id TEXT NOT NULL REFERENCES accounts(id),
    key        TEXT NOT NULL,
    file_id    TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, key)
);

-- Small server facts (the signing secret when generated).
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
