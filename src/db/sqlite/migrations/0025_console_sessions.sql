-- The console's sessions (CONTRACT §19): the SHA-256 of the session id the
-- page's HttpOnly cookie holds (never the id itself), the key it was made
-- from (checked at every request as a Bearer key is; no foreign key: a
-- session of a key gone simply ends), and when it was made and last seen
-- (unix ms; idle past `[console] session_idle` ends it).
CREATE TABLE console_sessions (
    session_hash BLOB PRIMARY KEY,
    key_id       TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX console_sessions_seen ON console_sessions (last_seen_at);
