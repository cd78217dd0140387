-- A resumable upload's lease: the one request (a PATCH or a termination, on
-- any node) that may change it now, until `lease_until` (renewed while it
-- runs; a node that dies lets it lapse).
ALTER TABLE tus_uploads ADD COLUMN lease_token TEXT;
ALTER TABLE tus_uploads ADD COLUMN lease_until BIGINT;

-- Each API key's current rate window, shared by every node
-- (`domain::ratelimit`): opened at `window_start`, ends at `window_end`,
-- `used` requests counted in it (refused ones too). UNLOGGED: counting a
-- request writes no WAL, so it never waits for a disk flush (a rate-limited
-- request would otherwise pay two: this and its commit); a crash of the
-- database empties it, which gives every key a fresh window, nothing worse.
CREATE UNLOGGED TABLE rate_windows (
    key_id       TEXT COLLATE "C" PRIMARY KEY,
    window_start BIGINT NOT NULL,
    window_end   BIGINT NOT NULL,
    used         BIGINT NOT NULL
);
CREATE INDEX rate_windows_end ON rate_windows(window_end);
