-- A resumable upload's lease: the one request (a PATCH or a termination)
-- that may change it now, until `lease_until` (renewed while it runs).
ALTER TABLE tus_uploads ADD COLUMN lease_token TEXT;
ALTER TABLE tus_uploads ADD COLUMN lease_until INTEGER;
