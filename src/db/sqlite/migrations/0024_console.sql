-- The console's views (CONTRACT §19).
--
-- Usage history: the collector's reading of each account's counters, the
-- last of each day (UTC). A day's bandwidth and uploads are its totals less
-- the previous reading's (when of the same period), so that nothing is
-- added to the upload's or the CDN's path. An unchanged account gets no row.
-- The rows go with their account (also when a binary that does not know this
-- table deletes it).
CREATE TABLE usage_days (
    account_id      TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    day             TEXT NOT NULL,
    period          TEXT NOT NULL,
    storage_bytes   INTEGER NOT NULL,
    bandwidth_total INTEGER NOT NULL,
    upload_total    INTEGER NOT NULL,
    PRIMARY KEY (account_id, day)
);

-- Webhook deliveries: each event's latest attempt per subscription, its
-- latest 100 kept (the outbox forgets an event once it is delivered).
CREATE TABLE webhook_deliveries (
    webhook_id  TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    event_id    TEXT NOT NULL,
    type        TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('delivered', 'retrying', 'failed')),
    http_status INTEGER,
    attempts    INTEGER NOT NULL,
    at          INTEGER NOT NULL,
    PRIMARY KEY (webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_recent ON webhook_deliveries(webhook_id, at);
