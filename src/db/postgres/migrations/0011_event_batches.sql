-- A folder delete's events in batches; see SQLite's 0013_folder_delete.sql.
-- Only adds: a node of an earlier schema runs on (it never writes a batch,
-- and a newer node expands them).
CREATE TABLE webhook_event_batches (
    seq        BIGSERIAL PRIMARY KEY,
    webhook_id TEXT COLLATE "C" NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    type       TEXT NOT NULL,
    data       TEXT NOT NULL,
    events     INTEGER NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX webhook_event_batches_subscription ON webhook_event_batches(webhook_id);
-- A batch is written once and read once: not worth compressing.
ALTER TABLE webhook_event_batches ALTER COLUMN data SET STORAGE EXTERNAL;
