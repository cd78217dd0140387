-- Image variants (docs/api.md, "Image variants"): renders of a file kept in
-- the blob store, one row each, keyed by the file and the settled
-- parameters. They go with their file, whichever way it goes (a delete, a
-- bulk or folder delete, expiry): the statement trigger queues their blobs
-- for the collector in the transaction that removes the files, one join
-- per statement (a folder delete of 100,000 files is one).
CREATE TABLE image_variants (
    file_id      TEXT NOT NULL,
    key          TEXT NOT NULL,
    blob_key     TEXT NOT NULL,
    size         BIGINT NOT NULL,
    content_type TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (file_id, key)
);

CREATE FUNCTION image_variants_go_with_their_file() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM image_variants) THEN
        WITH gone AS (
            DELETE FROM image_variants v USING gone_files g
            WHERE v.file_id = g.id RETURNING v.blob_key)
        INSERT INTO blob_deletions (blob_key, due_at)
            SELECT blob_key, 0 FROM gone ON CONFLICT (blob_key) DO NOTHING;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER image_variants_go_with_their_file AFTER DELETE ON files
    REFERENCING OLD TABLE AS gone_files
    FOR EACH STATEMENT EXECUTE FUNCTION image_variants_go_with_their_file();
