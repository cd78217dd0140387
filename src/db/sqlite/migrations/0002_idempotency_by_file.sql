-- Deleting or expiring a file forgets its idempotency keys; without this
-- index that DELETE scans the whole table inside the write transaction.
CREATE INDEX idempotency_by_file ON idempotency_keys(file_id);
