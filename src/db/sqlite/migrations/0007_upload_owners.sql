-- Who created a resumable upload: the key id (`key_…`) that alone, with the
-- account's secret keys, may continue, read or end it (NULL for uploads made
-- before this was recorded: any key of the account, as then). `idle_ms`: how
-- long the upload lives without receiving a byte (24 h; 10 minutes when a
-- non-secret credential created it).
ALTER TABLE tus_uploads ADD COLUMN created_by TEXT;
ALTER TABLE tus_uploads ADD COLUMN idle_ms INTEGER NOT NULL DEFAULT 86400000;
