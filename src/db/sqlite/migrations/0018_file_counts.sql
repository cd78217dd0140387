-- Each account's number of files, kept by the database itself (CONTRACT
-- §22: the metrics' `filestore_files` gauge reads the sum of these, never a
-- scan of the files). Triggers keep it, so every path that adds or removes
-- a file row (commit, copy, delete, bulk and folder deletes, expiry,
-- replace) counts without a line of its own.
ALTER TABLE accounts ADD COLUMN file_count INTEGER NOT NULL DEFAULT 0;
UPDATE accounts SET file_count = (SELECT COUNT(*) FROM files WHERE files.account_id = accounts.id);

CREATE TRIGGER files_counted_in AFTER INSERT ON files
BEGIN
    UPDATE accounts SET file_count = file_count + 1 WHERE id = NEW.account_id;
END;

CREATE TRIGGER files_counted_out AFTER DELETE ON files
BEGIN
    UPDATE accounts SET file_count = file_count - 1 WHERE id = OLD.account_id;
END;
