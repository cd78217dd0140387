-- Small files keep their bytes in the database, beside their row: one write
-- (and one shared fsync) stores them, one read serves them. `inline` says
-- where a file's bytes are; inline_blobs holds them under the file's blob key.
ALTER TABLE files ADD COLUMN inline INTEGER NOT NULL DEFAULT 0;
CREATE TABLE inline_blobs (
    blob_key TEXT PRIMARY KEY,
    data     BLOB NOT NULL
);
