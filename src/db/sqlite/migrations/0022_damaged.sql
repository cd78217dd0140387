-- Data safety (CONTRACT §20): a file whose stored bytes were found missing
-- or no longer matching its SHA-256 is marked `damaged_at` (unix ms of the
-- first finding; NULL: not known damaged). The CDN and the S3 door never
-- serve it whole; `admin verify --repair-from` clears it. Few files carry
-- it: a partial index counts them.
ALTER TABLE files ADD COLUMN damaged_at INTEGER;
CREATE INDEX files_damaged ON files (id) WHERE damaged_at IS NOT NULL;

-- The background scrub's place (files in id order after `after`) and whose
-- turn it is (`node` until `until_ms`; one node on SQLite): one row.
CREATE TABLE scrub_turn (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    node     INTEGER NOT NULL,
    until_ms INTEGER NOT NULL,
    after    TEXT NOT NULL
);
