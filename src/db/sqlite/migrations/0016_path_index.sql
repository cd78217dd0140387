-- The files at a path, and an account's paths in byte order from any key
-- (docs/decisions.md, "Paths"). A file's path is `folder/name` (`name` in
-- the root): the expression below, which the queries of db/sqlite/paths.rs
-- repeat word for word so that SQLite uses this index. Its order is the
-- path's bytes (BINARY collation on UTF-8), not the order of (folder, name)
-- pairs: 'a-b/c' < 'a/b'. Within a path, newest first.
CREATE INDEX files_by_path ON files(
    account_id,
    COALESCE(folder || '/', '') || name,
    created_at DESC,
    id DESC
);
