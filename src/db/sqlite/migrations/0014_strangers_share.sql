-- The strangers' share (docs/decisions.md, "The strangers' share"): of the
-- period's uploads, those an account's public keys and upload tokens made
-- (their own multipart uploads, and the resumable uploads they created),
-- counted in the transaction that commits each, against their share of the
-- plan's monthly uploads.
ALTER TABLE usage_periods ADD COLUMN stranger_uploads INTEGER NOT NULL DEFAULT 0;
