-- Webhook subscriptions and their outbox; see SQLite's 0006_webhooks.sql.
CREATE TABLE webhooks (
    id         TEXT COLLATE "C" PRIMARY KEY,
    account_id TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
    url        TEXT NOT NULL,
    events     TEXT NOT NULL,
    secret     TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX webhooks_account ON webhooks(account_id);

CREATE TABLE webhook_events (
    seq        BIGSERIAL PRIMARY KEY,
    id         TEXT COLLATE "C" NOT NULL UNIQUE,
    webhook_id TEXT COLLATE "C" NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    file_id    TEXT COLLATE "C" NOT NULL,
    type       TEXT NOT NULL,
    data       TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    attempts   INTEGER NOT NULL DEFAULT 0,
    next_at    BIGINT NOT NULL,
    -- The node that claimed it last: when that node is gone, a starting
    -- node makes its claims due at once instead of after their lease.
    claim_node INTEGER,
    last_error TEXT
);
CREATE INDEX webhook_events_due ON webhook_events(next_at);
CREATE INDEX webhook_events_file ON webhook_events(webhook_id, file_id, seq);
