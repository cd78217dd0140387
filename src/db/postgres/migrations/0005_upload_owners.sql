-- Who created a resumable upload and how long it lives without a byte; see
-- SQLite's 0007_upload_owners.sql. `lease_node`: the node (its session
-- advisory lock's second key) whose request holds the lease; once that node's
-- session is gone, the lease is free at once.
ALTER TABLE tus_uploads ADD COLUMN created_by TEXT;
ALTER TABLE tus_uploads ADD COLUMN idle_ms BIGINT NOT NULL DEFAULT 86400000;
ALTER TABLE tus_uploads ADD COLUMN lease_node INTEGER;
