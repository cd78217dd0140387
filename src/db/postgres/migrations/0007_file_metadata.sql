-- See SQLite's 0009_file_metadata.sql.
ALTER TABLE files ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
ALTER TABLE tus_uploads ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
