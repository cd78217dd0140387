-- A folder delete's events, `EVENT_BATCH` files a row (docs/decisions.md,
-- "Folder listing"): written in the delete's transaction, so the delete does
-- not write an outbox row and its five index entries per file; the sender
-- expands a batch into its `webhook_events` rows (one transaction) before it
-- claims. `data` is a JSON array of file rows, each as `webhook_events.data`
-- holds one; `events` their number.
CREATE TABLE webhook_event_batches (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    type       TEXT NOT NULL,
    data       TEXT NOT NULL,
    events     INTEGER NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX webhook_event_batches_subscription ON webhook_event_batches(webhook_id);

-- Whether a file has image variants: the trigger that takes them with their
-- file runs for those files only, not once per row of a folder delete.
ALTER TABLE files ADD COLUMN variants INTEGER NOT NULL DEFAULT 0;
UPDATE files SET variants = 1 WHERE id IN (SELECT file_id FROM image_variants);
DROP TRIGGER image_variants_go_with_their_file;
CREATE TRIGGER image_variants_go_with_their_file AFTER DELETE ON files WHEN OLD.variants
BEGIN
    INSERT OR IGNORE INTO blob_deletions (blob_key, due_at)
        SELECT blob_key, 0 FROM image_variants WHERE file_id = OLD.id;
    DELETE FROM image_variants WHERE file_id = OLD.id;
END;
