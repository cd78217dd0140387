-- A file's metadata (docs/api.md, the upload form's `metadata`): a JSON object of strings, compact,
-- '{}' when none; a resumable upload holds it until it completes.
ALTER TABLE files ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
ALTER TABLE tus_uploads ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
