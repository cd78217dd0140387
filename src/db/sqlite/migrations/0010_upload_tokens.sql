-- Upload tokens (docs/api.md, "Upload tokens"): a counted, short-lived permission to
-- upload into one account; only the SHA-256 of the secret is kept. A
-- resumable upload holds one use from its creation (`uploads_open`) until
-- its file is created (then `uploads_used`) or it ends (given back). The
-- CHECK backs the guarded UPDATEs that keep `max_uploads` exact.
CREATE TABLE upload_tokens (
    id              TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL REFERENCES accounts(id),
    created_by      TEXT NOT NULL,
    token_hash      BLOB NOT NULL UNIQUE,
    folder          TEXT,
    max_size        INTEGER,
    types           TEXT NOT NULL DEFAULT '[]',
    max_uploads     INTEGER NOT NULL CHECK (max_uploads BETWEEN 1 AND 1000),
    uploads_used    INTEGER NOT NULL DEFAULT 0 CHECK (uploads_used >= 0),
    uploads_open    INTEGER NOT NULL DEFAULT 0 CHECK (uploads_open >= 0),
    private         INTEGER NOT NULL DEFAULT 0,
    file_expires_ms INTEGER,
    metadata        TEXT NOT NULL DEFAULT '{}',
    created_at      INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL,
    revoked_at      INTEGER,
    CHECK (uploads_used + uploads_open <= max_uploads)
);
CREATE INDEX upload_tokens_account ON upload_tokens(account_id);

-- A public key's upload policy (folder, max_size, types: a JSON list).
ALTER TABLE api_keys ADD COLUMN max_size INTEGER;
ALTER TABLE api_keys ADD COLUMN types TEXT NOT NULL DEFAULT '[]';
ALTER TABLE api_keys ADD COLUMN folder TEXT;
