-- See SQLite's 0010_upload_tokens.sql.
CREATE TABLE upload_tokens (
    id              TEXT COLLATE "C" PRIMARY KEY,
    account_id      TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
    created_by      TEXT COLLATE "C" NOT NULL,
    token_hash      BYTEA NOT NULL UNIQUE,
    folder          TEXT COLLATE "C",
    max_size        BIGINT,
    types           TEXT NOT NULL DEFAULT '[]',
    max_uploads     INTEGER NOT NULL CHECK (max_uploads BETWEEN 1 AND 1000),
    uploads_used    INTEGER NOT NULL DEFAULT 0 CHECK (uploads_used >= 0),
    uploads_open    INTEGER NOT NULL DEFAULT 0 CHECK (uploads_open >= 0),
    private         BOOLEAN NOT NULL DEFAULT FALSE,
    file_expires_ms BIGINT,
    metadata        TEXT NOT NULL DEFAULT '{}',
    created_at      BIGINT NOT NULL,
    expires_at      BIGINT NOT NULL,
    revoked_at      BIGINT,
    CHECK (uploads_used + uploads_open <= max_uploads)
);
CREATE INDEX upload_tokens_account ON upload_tokens(account_id);

ALTER TABLE api_keys ADD COLUMN max_size BIGINT;
ALTER TABLE api_keys ADD COLUMN types TEXT NOT NULL DEFAULT '[]';
ALTER TABLE api_keys ADD COLUMN folder TEXT COLLATE "C";
