-- Data safety (CONTRACT §20): a file whose stored bytes were found missing
-- or no longer matching its SHA-256 is marked `damaged_at` (unix ms of the
-- first finding; NULL: not known damaged). The CDN and the S3 door never
-- serve it whole; `admin verify --repair-from` clears it. Few files carry
-- it: a partial index counts them.
ALTER TABLE files ADD COLUMN damaged_at BIGINT;
CREATE INDEX files_damaged ON files (id) WHERE damaged_at IS NOT NULL;

-- The background scrub's place (files in id order after `after`) and whose
-- turn it is: node `node` until `until_ms`, renewed as it goes; another
-- node takes it once the lease ran out or its node's session is gone
-- (`db/postgres/integrity.rs`). One row.
CREATE TABLE scrub_turn (
    id       SMALLINT PRIMARY KEY CHECK (id = 1),
    node     INTEGER NOT NULL,
    until_ms BIGINT NOT NULL,
    after    TEXT NOT NULL
);
