-- The files whose MD5 is not known yet (a spooled upload commits without
-- it; service::md5_fill computes it at idle priority, docs/decisions.md
-- "MD5 after the fact"). A partial index: it holds only those rows, so the
-- fill finds its work without a scan and the index is empty once done.
CREATE INDEX files_without_md5 ON files(id) WHERE md5 IS NULL;
