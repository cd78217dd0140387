-- Image variants (docs/api.md, "Image variants"): renders of a file kept in
-- the blob store, one row each, keyed by the file and the settled
-- parameters. They go with their file, whichever way it goes (a delete, a
-- bulk or folder delete, expiry): the trigger queues their blobs for the
-- collector in the transaction that removes the file.
CREATE TABLE image_variants (
    file_id      TEXT NOT NULL,
    key          TEXT NOT NULL,
    blob_key     TEXT NOT NULL,
    size         INTEGER NOT NULL,
    content_type TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (file_id, key)
) WITHOUT ROWID;

CREATE TRIGGER image_variants_go_with_their_file AFTER DELETE ON files
BEGIN
    INSERT OR IGNORE INTO blob_deletions (blob_key, due_at)
        SELECT blob_key, 0 FROM image_variants WHERE file_id = OLD.id;
    DELETE FROM image_variants WHERE file_id = OLD.id;
END;
