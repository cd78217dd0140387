-- The S3 door's own rows (CONTRACT §18): buckets made by CreateBucket (a
-- bucket is the account's top-level folder; one holding a file or a folder
-- marker exists without a row), folder markers (keys ending in '/' with no
-- bytes, never files), and multipart uploads with their parts. A part's
-- bytes are a blob of their own and count in the account's storage_bytes
-- from the moment its row is written (under the account row's lock, as
-- every quota check) until the upload completes, is aborted or is reaped
-- (docs/decisions.md, "S3 multipart uploads"): so `filestore_commit`'s
-- quota check counts them with no change to it. Keys and paths compare
-- in byte order (COLLATE "C"), as S3 lists them.
CREATE TABLE s3_buckets (
    account_id TEXT NOT NULL,
    name TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (account_id, name)
);

CREATE TABLE s3_markers (
    account_id TEXT NOT NULL,
    path TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (account_id, path)
);

CREATE TABLE s3_uploads (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    path TEXT COLLATE "C" NOT NULL,
    folder TEXT NOT NULL,
    name TEXT NOT NULL,
    content_type TEXT,
    metadata TEXT NOT NULL DEFAULT '{}',
    attrs TEXT,
    private BOOLEAN NOT NULL,
    created_by TEXT,
    created_at BIGINT NOT NULL,
    last_part_at BIGINT NOT NULL,
    completed_at BIGINT,
    file_id TEXT,
    completion TEXT
);
CREATE INDEX s3_uploads_by_path ON s3_uploads (account_id, path, id COLLATE "C");
CREATE INDEX s3_uploads_idle ON s3_uploads (last_part_at) WHERE completed_at IS NULL;
CREATE INDEX s3_uploads_done ON s3_uploads (completed_at) WHERE completed_at IS NOT NULL;

CREATE TABLE s3_parts (
    upload_id TEXT NOT NULL,
    number INTEGER NOT NULL,
    size BIGINT NOT NULL,
    md5 TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    blob_key TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (upload_id, number)
);
