-- Which node registered an upload guard: the number under which that node
-- holds a session advisory lock while it runs (see `PgStore::connect`). A
-- node starting makes due the guards of nodes that hold no lock any more
-- (crashed), never those of uploads in flight on live nodes. NULL: not a
-- guard (a deletion), or a guard already made due.
ALTER TABLE blob_deletions ADD COLUMN owner INTEGER;
