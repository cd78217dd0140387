-- Each account's number of files, kept by the database itself (CONTRACT
-- §22: the metrics' `filestore_files` gauge reads the sum of these, never a
-- scan of the files). Statement triggers keep it, so every path that adds
-- or removes file rows (the commit function, copy, delete, bulk and folder
-- deletes, expiry, replace) counts without a line of its own, once per
-- statement and account. Accounts are updated one at a time in byte order,
-- as every statement of several accounts takes them (no deadlock with a
-- group commit or an expiry pass); a commit or delete holds its account's
-- row already. Expand only: the previous release's binary inserts and
-- deletes files as before, and the triggers count them.
ALTER TABLE accounts ADD COLUMN file_count BIGINT NOT NULL DEFAULT 0;
UPDATE accounts a SET file_count = c.n
    FROM (SELECT account_id, COUNT(*) AS n FROM files GROUP BY account_id) c
    WHERE a.id = c.account_id;

CREATE FUNCTION files_counted_in() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r RECORD;
BEGIN
    FOR r IN SELECT account_id, COUNT(*) AS n FROM new_files GROUP BY account_id
             ORDER BY account_id LOOP
        UPDATE accounts SET file_count = file_count + r.n WHERE id = r.account_id;
    END LOOP;
    RETURN NULL;
END $$;

CREATE FUNCTION files_counted_out() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r RECORD;
BEGIN
    FOR r IN SELECT account_id, COUNT(*) AS n FROM old_files GROUP BY account_id
             ORDER BY account_id LOOP
        UPDATE accounts SET file_count = file_count - r.n WHERE id = r.account_id;
    END LOOP;
    RETURN NULL;
END $$;

CREATE TRIGGER files_counted_in AFTER INSERT ON files
    REFERENCING NEW TABLE AS new_files
    FOR EACH STATEMENT EXECUTE FUNCTION files_counted_in();

CREATE TRIGGER files_counted_out AFTER DELETE ON files
    REFERENCING OLD TABLE AS old_files
    FOR EACH STATEMENT EXECUTE FUNCTION files_counted_out();
