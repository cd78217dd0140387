-- What a file carries for S3 beyond /v1's record (CONTRACT §18,
-- `domain::object::ObjectAttrs`): its content headers, the checksum its
-- sender gave, a multipart object's ETag and part sizes, as compact JSON
-- (`ObjectAttrs::stored`). NULL for a file that has none (every /v1 file).
ALTER TABLE files ADD COLUMN attrs TEXT;
