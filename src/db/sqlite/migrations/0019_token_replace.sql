-- Paths (docs/api.md, "Paths and stable links"): an upload token whose
-- files replace the files at their paths (its policy's `replace`), and
-- what a resumable upload's file does at its path once complete (NULL,
-- 'replace' or 'absent'; the tus metadata `replace`, `if_absent`).
ALTER TABLE upload_tokens ADD COLUMN replace INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tus_uploads ADD COLUMN at_path TEXT;
