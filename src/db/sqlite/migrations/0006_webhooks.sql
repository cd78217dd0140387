-- Webhook subscriptions (docs/decisions.md, "Webhooks"). The secret is kept as given to the
-- operator once (`whsec_…`): signing needs it, so it cannot be a hash; the
-- database file is readable by the server's user only.
CREATE TABLE webhooks (
    id         TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    url        TEXT NOT NULL,
    -- Comma-separated event names.
    events     TEXT NOT NULL,
    secret     TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX webhooks_account ON webhooks(account_id);

-- The outbox: one row per (event, subscription), written in the transaction
-- of the change, removed once delivered (or given up). `seq` orders a
-- file's events; `id` is the `webhook-id` of every attempt; `data` the file
-- row as JSON (the File record is built from it when sent); `next_at` when
-- it may be attempted (a claim moves it a lease ahead).
CREATE TABLE webhook_events (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT NOT NULL UNIQUE,
    webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    file_id    TEXT NOT NULL,
    type       TEXT NOT NULL,
    data       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    attempts   INTEGER NOT NULL DEFAULT 0,
    next_at    INTEGER NOT NULL,
    last_error TEXT
);
CREATE INDEX webhook_events_due ON webhook_events(next_at);
CREATE INDEX webhook_events_file ON webhook_events(webhook_id, file_id, seq);
