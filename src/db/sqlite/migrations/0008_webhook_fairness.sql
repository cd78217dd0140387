-- A claim takes each subscription's longest due events in turn: this index
-- walks exactly one subscription's due events, in that order (and lists the
-- subscriptions with events, one probe each), whatever the others queued.
CREATE INDEX webhook_events_subscription ON webhook_events(webhook_id, next_at, seq);
