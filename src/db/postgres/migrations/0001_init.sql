-- The schema of SQLite's migrations 0001-0004 in one, on PostgreSQL. Times
-- are unix milliseconds (UTC) as BIGINT; bytes are bytea. Ids, folders and
-- names compare bytewise (COLLATE "C") like SQLite's, so keyset pages and
-- folder ranges order the same on both.

-- Accounts own files and keys. storage_bytes is kept exact by the same
-- transactions that insert and delete files; those lock the account row
-- (SELECT ... FOR UPDATE) before checking a quota.
CREATE TABLE accounts (
    id            TEXT COLLATE "C" PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    plan          TEXT NOT NULL,
    grace_period  BOOLEAN NOT NULL DEFAULT FALSE,
    storage_bytes BIGINT NOT NULL DEFAULT 0 CHECK (storage_bytes >= 0),
    created_at    BIGINT NOT NULL
);

-- API keys, stored only as the SHA-256 of the secret.
CREATE TABLE api_keys (
    id         TEXT COLLATE "C" PRIMARY KEY,
    account_id TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
    kind       TEXT NOT NULL CHECK (kind IN ('secret', 'public')),
    name       TEXT,
    key_hash   BYTEA NOT NULL UNIQUE,
    origins    TEXT NOT NULL DEFAULT '[]',
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);
CREATE INDEX api_keys_account ON api_keys(account_id);

-- Files. `inline`: the bytes are in inline_blobs, not in the blob store.
CREATE TABLE files (
    id           TEXT COLLATE "C" PRIMARY KEY,
    account_id   TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
    name         TEXT NOT NULL,
    folder       TEXT COLLATE "C",
    size         BIGINT NOT NULL,
    content_type TEXT NOT NULL,
    private      BOOLEAN NOT NULL,
    sha256       TEXT NOT NULL,
    blob_key     TEXT COLLATE "C" NOT NULL UNIQUE,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT,
    inline       BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX files_by_account ON files(account_id, created_at DESC, id DESC);
CREATE INDEX files_by_folder ON files(account_id, folder, created_at DESC, id DESC);
CREATE INDEX files_by_expiry ON files(expires_at) WHERE expires_at IS NOT NULL;

-- Small files' bytes, under the file's blob key.
CREATE TABLE inline_blobs (
    blob_key TEXT COLLATE "C" PRIMARY KEY,
    data     BYTEA NOT NULL
);

-- Monthly counters; a new month is a new row, so nothing has to reset them.
CREATE TABLE usage_periods (
    account_id      TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
    period          TEXT NOT NULL,
    upload_count    BIGINT NOT NULL DEFAULT 0,
    bandwidth_bytes BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, period)
);

-- Blobs that must go (see SQLite's 0001_init.sql). A collector claims due
-- rows by moving their due_at past a lease (FOR UPDATE SKIP LOCKED), so
-- nodes collecting at once never take the same blob, and a node dying
-- mid-deletion leaves the row to be taken again when the lease ends.
CREATE TABLE blob_deletions (
    blob_key   TEXT COLLATE "C" PRIMARY KEY,
    due_at     BIGINT NOT NULL,
    attempts   INTEGER NOT NULL DEFAULT 0,
    last_error TEXT
);
CREATE INDEX blob_deletions_due ON blob_deletions(due_at);

-- Upload idempotency keys (24 h).
CREATE TABLE idempotency_keys (
    account_id TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
    key        TEXT NOT NULL,
    file_id    TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (account_id, key)
);
CREATE INDEX idempotency_by_file ON idempotency_keys(file_id);

-- Small server facts (the signing secret when generated).
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- Resumable uploads (tus); see SQLite's 0004_tus_uploads.sql.
CREATE TABLE tus_uploads (
    id           TEXT COLLATE "C" PRIMARY KEY,
    account_id   TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
    file_id      TEXT COLLATE "C" NOT NULL UNIQUE,
    blob_key     TEXT COLLATE "C" NOT NULL UNIQUE,
    length       BIGINT NOT NULL CHECK (length >= 0),
    received     BIGINT NOT NULL DEFAULT 0 CHECK (received >= 0 AND received <= length),
    name         TEXT NOT NULL,
    content_type TEXT,
    folder       TEXT COLLATE "C",
    private      BOOLEAN NOT NULL,
    expires_ms   BIGINT,
    hash_state   TEXT NOT NULL,
    store_state  TEXT NOT NULL,
    tail         BYTEA,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    completed_at BIGINT,
    idempotency_key TEXT
);
CREATE UNIQUE INDEX tus_uploads_idempotency ON tus_uploads(account_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX tus_uploads_account ON tus_uploads(account_id, completed_at);
CREATE INDEX tus_uploads_expiry ON tus_uploads(expires_at);
