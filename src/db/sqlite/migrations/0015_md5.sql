-- MD5 beside SHA-256: each file's hex MD5 (lower case), computed while its
-- bytes arrive; NULL means not yet known (a file stored before this
-- migration: a background pass fills those in later). A resumable
-- upload's running MD5 is kept beside its SHA-256 state between PATCHes
-- (NULL for an upload begun before: its file's MD5 stays NULL).
ALTER TABLE files ADD COLUMN md5 TEXT;
ALTER TABLE tus_uploads ADD COLUMN md5_state TEXT;
