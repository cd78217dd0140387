-- Resumable uploads (tus). A row lives from creation until 24 h after its
-- last PATCH (incomplete) or after completion (then `file_id` names the file
-- it became). While incomplete, its declared length is reserved against the
-- account's storage quota and it holds one of the month's uploads.
CREATE TABLE tus_uploads (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id),
    -- The file's id and blob key, chosen at creation.
    file_id      TEXT NOT NULL UNIQUE,
    blob_key     TEXT NOT NULL UNIQUE,
    length       INTEGER NOT NULL CHECK (length >= 0),
    received     INTEGER NOT NULL DEFAULT 0 CHECK (received >= 0 AND received <= length),
    name         TEXT NOT NULL,
    content_type TEXT,
    folder       TEXT,
    private      INTEGER NOT NULL,
    expires_ms   INTEGER,
    -- The SHA-256 of the bytes received (`domain::sha256_state`).
    hash_state   TEXT NOT NULL,
    -- What the blob store keeps of the bytes received (S3: the multipart
    -- upload's id and parts), and the bytes not yet in it (S3: less than a part).
    store_state  TEXT NOT NULL,
    tail         BLOB,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    completed_at INTEGER,
    -- The creation's Idempotency-Key: a retried creation finds this upload.
    idempotency_key TEXT
);
CREATE UNIQUE INDEX tus_uploads_idempotency ON tus_uploads(account_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX tus_uploads_account ON tus_uploads(account_id, completed_at);
CREATE INDEX tus_uploads_expiry ON tus_uploads(expires_at);
