-- See SQLite's 0008_webhook_fairness.sql.
CREATE INDEX webhook_events_subscription ON webhook_events(webhook_id, next_at, seq);
