-- The console's sessions (CONTRACT §19): the SHA-256 of the session id the
-- page's HttpOnly cookie holds (never the id itself), the key it was made
-- from (checked at every request as a Bearer key is; no foreign key: a
-- session of a key gone simply ends), and when it was made and last seen
-- (unix ms; idle past `[console] session_idle` ends it). In the database,
-- so a session works on every node.
CREATE TABLE console_sessions (
    session_hash BYTEA PRIMARY KEY,
    key_id       TEXT COLLATE "C" NOT NULL,
    created_at   BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL
);
CREATE INDEX console_sessions_seen ON console_sessions (last_seen_at);
