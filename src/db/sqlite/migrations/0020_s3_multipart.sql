-- The S3 door's own rows (CONTRACT §18): buckets made by CreateBucket (a
-- bucket is the account's top-level folder; one holding a file or a folder
-- marker exists without a row), folder markers (keys ending in '/' with no
-- bytes, never files), and multipart uploads with their parts. A part's
-- bytes are a blob of their own and count in the account's storage_bytes
-- from the moment its row is written until the upload completes, is
-- aborted or is reaped (docs/decisions.md, "S3 multipart uploads").
CREATE TABLE s3_buckets (
    account_id TEXT NOT NULL,
    name TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, name)
) WITHOUT ROWID;

CREATE TABLE s3_markers (
    account_id TEXT NOT NULL,
    -- The whole key, with its trailing '/'.
    path TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, path)
) WITHOUT ROWID;

CREATE TABLE s3_uploads (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    -- The object's key: folder '/' name (the folder starts with its bucket).
    path TEXT NOT NULL,
    folder TEXT NOT NULL,
    name TEXT NOT NULL,
    -- What the file gets: its type, metadata (JSON), S3 attributes (JSON).
    content_type TEXT,
    metadata TEXT NOT NULL DEFAULT '{}',
    attrs TEXT,
    private INTEGER NOT NULL,
    created_by TEXT,
    created_at INTEGER NOT NULL,
    -- The last part's arrival (the creation before any): idle past a day,
    -- the collector aborts it.
    last_part_at INTEGER NOT NULL,
    -- Once completed: when, the file made, the parts chosen ("n:md5,...").
    completed_at INTEGER,
    file_id TEXT,
    completion TEXT
);
CREATE INDEX s3_uploads_by_path ON s3_uploads (account_id, path, id);
CREATE INDEX s3_uploads_idle ON s3_uploads (last_part_at) WHERE completed_at IS NULL;
CREATE INDEX s3_uploads_done ON s3_uploads (completed_at) WHERE completed_at IS NOT NULL;

CREATE TABLE s3_parts (
    upload_id TEXT NOT NULL,
    number INTEGER NOT NULL,
    size INTEGER NOT NULL,
    md5 TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    blob_key TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (upload_id, number)
) WITHOUT ROWID;
