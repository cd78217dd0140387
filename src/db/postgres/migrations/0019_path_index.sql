-- The files at a path, and an account's paths in byte order from any key
-- (docs/decisions.md, "Paths"). A file's path is `folder/name` (`name` in
-- the root): the expression below, which the queries of db/postgres/paths.rs
-- repeat word for word so that the planner uses this index. COLLATE "C"
-- makes its order the path's bytes, not the order of (folder, name) pairs
-- ('a-b/c' < 'a/b') nor a locale's. Within a path, newest first.
CREATE INDEX files_by_path ON files(
    account_id,
    ((COALESCE(folder || '/', '') || name) COLLATE "C"),
    created_at DESC,
    id DESC
);
