-- The console's views; see SQLite's 0024_console.sql.
CREATE TABLE usage_days (
    account_id      TEXT COLLATE "C" NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    day             TEXT COLLATE "C" NOT NULL,
    period          TEXT COLLATE "C" NOT NULL,
    storage_bytes   BIGINT NOT NULL,
    bandwidth_total BIGINT NOT NULL,
    upload_total    BIGINT NOT NULL,
    PRIMARY KEY (account_id, day)
);

CREATE TABLE webhook_deliveries (
    webhook_id  TEXT COLLATE "C" NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    event_id    TEXT COLLATE "C" NOT NULL,
    type        TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('delivered', 'retrying', 'failed')),
    http_status INTEGER,
    attempts    INTEGER NOT NULL,
    at          BIGINT NOT NULL,
    PRIMARY KEY (webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_recent ON webhook_deliveries(webhook_id, at);
