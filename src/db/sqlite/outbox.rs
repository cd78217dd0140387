//! The outbox on SQLite: webhook subscriptions and their events. Events are
//! written in the transaction of the change they tell of (`enqueue`), so one
//! is sent exactly when its change is committed; the sender claims due ones,
//! a file's in order and subscriptions in turn (`claim`), and removes each
//! once delivered or given up.

use super::{owned, DbError, OptionalExtension, SqliteStore};
use crate::db::model::{event_data, event_file, FileRow, OutboxEvent, WebhookRow};
use crate::db::store::OutboxRepo;
use crate::domain::secret::Secret;
use crate::domain::webhooks::{self, Budget, Candidate};
use async_trait::async_trait;
use rusqlite::{params, Connection, Row};

const COLUMNS: &str = "id, account_id, url, events, secret, created_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<WebhookRow> {
    let events: String = r.get(3)?;
    Ok(WebhookRow {
        id: r.get(0)?,
        account_id: r.get(1)?,
        url: r.get(2)?,
        events: events.split(',').map(String::from).collect(),
        secret: Secret::new(r.get::<_, String>(4)?),
        created_at: r.get(5)?,
    })
}

/// Queues event `kind` of `row`, at `now`, for each of its account's
/// subscriptions to it (inside the caller's transaction).
pub(super) fn enqueue(
    tx: &Connection,
    kind: &str,
    row: &FileRow,
    now: i64,
) -> Result<bool, DbError> {
    let queued = tx
        .prepare_cached(
            "INSERT INTO webhook_events (id, webhook_id, file_id, type, data, created_at, next_at)
         SELECT 'msg_' || lower(hex(randomblob(16))), id, ?2, ?3, ?4, ?5, ?5 FROM webhooks
         WHERE account_id = ?1 AND instr(',' || events || ',', ',' || ?3 || ',') > 0",
        )?
        .execute(params![row.account_id, row.id, kind, event_data(row)?, now])?;
    Ok(queued > 0)
}

/// The ids of `account_id`'s subscriptions to `kind`.
pub(super) fn subscriptions(
    tx: &Connection,
    account_id: &str,
    kind: &str,
) -> Result<Vec<String>, DbError> {
    let ids = tx
        .prepare_cached(
            "SELECT id FROM webhooks WHERE account_id = ?1
             AND instr(',' || events || ',', ',' || ?2 || ',') > 0 ORDER BY id",
        )?
        .query_map(params![account_id, kind], |r| r.get(0))?
        .collect::<Result<Vec<String>, _>>()?;
    Ok(ids)
}

/// Events of one kind for many files, written [`webhooks::EVENT_BATCH`] to
/// a row of `webhook_event_batches` for each subscription (inside the
/// caller's transaction); memory holds one batch.
pub(super) struct Batch<'a> {
    subscriptions: &'a [String],
    kind: &'a str,
    now: i64,
    data: String,
    events: u32,
}

impl<'a> Batch<'a> {
    pub(super) fn new(subscriptions: &'a [String], kind: &'a str, now: i64) -> Batch<'a> {
        Batch {
            subscriptions,
            kind,
            now,
            data: String::new(),
            events: 0,
        }
    }

    /// Adds `row`'s event; writes the batch once full.
    pub(super) fn push(&mut self, tx: &Connection, row: &FileRow) -> Result<(), DbError> {
        self.data.push(if self.events == 0 { '[' } else { ',' });
        self.data.push_str(&event_data(row)?);
        self.events += 1;
        if self.events == webhooks::EVENT_BATCH {
            self.flush(tx)?;
        }
        Ok(())
    }

    /// Writes what is held (nothing when empty).
    pub(super) fn flush(&mut self, tx: &Connection) -> Result<(), DbError> {
        if self.events == 0 {
            return Ok(());
        }
        self.data.push(']');
        let mut insert = tx.prepare_cached(
            "INSERT INTO webhook_event_batches (webhook_id, type, data, events, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for webhook_id in self.subscriptions {
            insert.execute(params![
                webhook_id,
                self.kind,
                self.data,
                self.events,
                self.now
            ])?;
        }
        self.data.clear();
        self.events = 0;
        Ok(())
    }
}

/// Turns the oldest event batch (a folder delete's, see
/// `webhook_event_batches`) of up to `max` subscriptions, the longest
/// waiting first, into their events, one row each in the batch's order, due
/// when the delete was made; the batches go. A batch that is not JSON, or
/// an element without an id (never written so), is dropped, logged.
fn expand_batches(conn: &Connection, max: u32) -> Result<(), DbError> {
    let batches = conn
        .prepare_cached(
            "SELECT min(seq) FROM webhook_event_batches GROUP BY webhook_id
             ORDER BY 1 LIMIT ?1",
        )?
        .query_map([max], |r| r.get::<_, i64>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    for seq in batches {
        let valid: bool = conn
            .prepare_cached("SELECT json_valid(data) FROM webhook_event_batches WHERE seq = ?1")?
            .query_row([seq], |r| r.get(0))?;
        if valid {
            conn.prepare_cached(
                "INSERT INTO webhook_events (id, webhook_id, file_id, type, data, created_at, next_at)
                 SELECT 'msg_' || lower(hex(randomblob(16))), b.webhook_id,
                     json_extract(j.value, '$.id'), b.type, j.value, b.created_at, b.created_at
                 FROM webhook_event_batches b, json_each(b.data) j
                 WHERE b.seq = ?1 AND json_extract(j.value, '$.id') IS NOT NULL
                 ORDER BY j.key",
            )?
            .execute([seq])?;
        } else {
            tracing::error!(seq, "an outbox batch is not JSON; its events are dropped");
        }
        conn.prepare_cached("DELETE FROM webhook_event_batches WHERE seq = ?1")?
            .execute([seq])?;
    }
    Ok(())
}

/// Whether a folder delete's events wait in a batch.
fn any_batch(conn: &Connection) -> Result<bool, DbError> {
    Ok(conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM webhook_event_batches)")?
        .query_row([], |r| r.get(0))?)
}

/// The subscriptions with events in the outbox, in id order: a skip scan,
/// one index probe per subscription however long its backlog.
const SUBSCRIPTIONS: &str = "WITH RECURSIVE subs(id) AS (
         SELECT (SELECT min(webhook_id) FROM webhook_events)
         UNION ALL
         SELECT (SELECT min(webhook_id) FROM webhook_events WHERE webhook_id > subs.id)
         FROM subs WHERE subs.id IS NOT NULL)
     SELECT id FROM subs WHERE id IS NOT NULL";

/// Up to `?3` of subscription `?1`'s events due at `?2`, longest due first,
/// each the oldest undelivered of its file for it: `webhook_events_subscription`
/// walks exactly the due ones in that order (what is in flight or waiting
/// for its retry is not due, so never read).
const DUE: &str = "SELECT e.seq, e.next_at FROM webhook_events e
     WHERE e.webhook_id = ?1 AND e.next_at <= ?2
       AND NOT EXISTS (SELECT 1 FROM webhook_events p
           WHERE p.webhook_id = e.webhook_id AND p.file_id = e.file_id AND p.seq < e.seq)
     ORDER BY e.next_at, e.seq LIMIT ?3";

/// Each subscription's longest due events, as many as `budget` gives it
/// (`first`: stop at the first one found).
fn candidates(
    conn: &Connection,
    now: i64,
    budget: &Budget,
    first: bool,
) -> Result<Vec<Candidate>, DbError> {
    let subs = conn
        .prepare_cached(SUBSCRIPTIONS)?
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    let mut due = conn.prepare_cached(DUE)?;
    let mut out = Vec::new();
    for webhook_id in subs {
        let n = budget.of(&webhook_id);
        if n == 0 {
            continue;
        }
        let rows = due
            .query_map(params![webhook_id, now, n], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        for (seq, since) in rows {
            out.push(Candidate {
                seq,
                due: since,
                webhook_id: webhook_id.clone(),
            });
            if first {
                return Ok(out);
            }
        }
    }
    Ok(out)
}

/// Claims events due at `now` within `budget`, taken round-robin across
/// subscriptions (`webhooks::fair_pick`), each the oldest undelivered of its
/// file for its subscription: their next attempt moves to `lease_until` and
/// their attempts count one more. The oldest batches are expanded first.
fn claim(
    conn: &Connection,
    now: i64,
    lease_until: i64,
    budget: &Budget,
) -> Result<Vec<OutboxEvent>, DbError> {
    expand_batches(conn, webhooks::EXPANDED_PER_CLAIM)?;
    let picked = webhooks::fair_pick(&candidates(conn, now, budget, false)?, budget);
    let mut stmt = conn.prepare_cached(
        "UPDATE webhook_events SET next_at = ?2, attempts = attempts + 1 WHERE seq = ?1
         RETURNING seq, id, webhook_id,
             (SELECT url FROM webhooks w WHERE w.id = webhook_id),
             (SELECT secret FROM webhooks w WHERE w.id = webhook_id),
             type, data, created_at, attempts",
    )?;
    let mut rows = Vec::with_capacity(picked.len());
    for seq in picked {
        rows.push(stmt.query_row(params![seq, lease_until], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, String>(6)?,
                r.get::<_, i64>(7)?,
                r.get::<_, u32>(8)?,
            ))
        })?);
    }
    let mut events = Vec::new();
    for (seq, id, webhook_id, url, secret, kind, data, created_at, attempts) in rows {
        let Some(file) = event_file(seq, &data) else {
            done(conn, seq)?;
            continue;
        };
        events.push(OutboxEvent {
            seq,
            id,
            webhook_id,
            url,
            secret: Secret::new(secret),
            kind,
            file,
            created_at,
            attempts,
        });
    }
    events.sort_by_key(|e| e.seq);
    Ok(events)
}

/// Makes every event due now (at start: no attempt of this one node is in
/// flight, whatever a crash left claimed; a retry waiting for its time is
/// tried at once too).
pub(super) fn release_claims(conn: &Connection, now: i64) -> Result<usize, DbError> {
    Ok(conn
        .prepare_cached("UPDATE webhook_events SET next_at = ?1 WHERE next_at > ?1")?
        .execute([now])?)
}

/// An event was delivered (or given up): it leaves the outbox.
fn done(conn: &Connection, seq: i64) -> Result<(), DbError> {
    conn.prepare_cached("DELETE FROM webhook_events WHERE seq = ?1")?
        .execute([seq])?;
    Ok(())
}

#[async_trait]
impl OutboxRepo for SqliteStore {
    fn take_queued_events(&self) -> bool {
        self.queued_events
            .swap(false, std::sync::atomic::Ordering::AcqRel)
    }

    async fn create_webhook(&self, webhook: WebhookRow) -> Result<(), DbError> {
        self.db
            .write(move |c| {
                c.prepare_cached(&format!(
                    "INSERT INTO webhooks ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
                ))?
                .execute(params![
                    webhook.id,
                    webhook.account_id,
                    webhook.url,
                    webhook.events.join(","),
                    webhook.secret.expose(),
                    webhook.created_at
                ])?;
                Ok(())
            })
            .await
    }

    /// Every subscription, or one account's, oldest first.
    async fn list_webhooks(&self, account_id: Option<&str>) -> Result<Vec<WebhookRow>, DbError> {
        let account_id = account_id.map(owned);
        self.db
            .run(move |c| {
                let mut stmt = c.prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM webhooks WHERE ?1 IS NULL OR account_id = ?1
                     ORDER BY created_at, id"
                ))?;
                let rows = stmt
                    .query_map([account_id], from_row)?
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(rows)
            })
            .await
    }

    /// Removes a subscription and its undelivered events; it as it was.
    async fn delete_webhook(&self, id: &str) -> Result<Option<WebhookRow>, DbError> {
        let id = owned(id);
        self.db
            .write(move |c| {
                c.prepare_cached("DELETE FROM webhook_events WHERE webhook_id = ?1")?
                    .execute([&id])?;
                c.prepare_cached("DELETE FROM webhook_event_batches WHERE webhook_id = ?1")?
                    .execute([&id])?;
                Ok(c.prepare_cached(&format!(
                    "DELETE FROM webhooks WHERE id = ?1 RETURNING {COLUMNS}"
                ))?
                .query_row([&id], from_row)
                .optional()?)
            })
            .await
    }

    async fn claim_events(
        &self,
        now: i64,
        lease_until: i64,
        budget: &Budget,
    ) -> Result<Vec<OutboxEvent>, DbError> {
        let budget = budget.clone();
        self.db
            .write(move |c| claim(c, now, lease_until, &budget))
            .await
    }

    async fn event_done(&self, seq: i64) -> Result<(), DbError> {
        self.db.write(move |c| done(c, seq)).await
    }

    /// An attempt failed: the next is at `retry_at`.
    async fn event_failed(&self, seq: i64, retry_at: i64, error: &str) -> Result<(), DbError> {
        let error = owned(error);
        self.db
            .write(move |c| {
                c.prepare_cached(
                    "UPDATE webhook_events SET next_at = ?2, last_error = ?3 WHERE seq = ?1",
                )?
                .execute(params![seq, retry_at, error])?;
                Ok(())
            })
            .await
    }

    /// Whether a claim at `now` within `budget` would take any event (a read:
    /// the sender claims, which writes, only then).
    async fn any_due_events(&self, now: i64, budget: &Budget) -> Result<bool, DbError> {
        let budget = budget.clone();
        self.db
            .run(move |c| Ok(any_batch(c)? || !candidates(c, now, &budget, true)?.is_empty()))
            .await
    }

    /// Events not delivered yet (those still in a batch too).
    async fn pending_events(&self) -> Result<u64, DbError> {
        self.db
            .run(|c| {
                Ok(c.prepare_cached(
                    "SELECT (SELECT COUNT(*) FROM webhook_events)
                         + (SELECT coalesce(sum(events), 0) FROM webhook_event_batches)",
                )?
                .query_row([], |r| r.get(0))?)
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How SQLite runs `sql`: its query plan, one step a line.
    fn plan(conn: &Connection, sql: &str, params: impl rusqlite::Params) -> String {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let steps = stmt
            .query_map(params, |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        steps.join("\n")
    }

    /// A claim's cost does not grow with a backlog: the subscriptions are
    /// found by index probes and each one's events walked in order by an
    /// index, with no scan of the outbox and no sort.
    #[test]
    fn a_claim_probes_indexes_and_never_scans_or_sorts_the_outbox() {
        let (_dir, db) = crate::db::sqlite::test_db();
        let conn = db.conn().unwrap();
        let subs = plan(&conn, SUBSCRIPTIONS, []);
        let due = plan(&conn, DUE, params!["wh_x", 1, 4]);
        for p in [&subs, &due] {
            assert!(!p.contains("SCAN webhook_events"), "{p}");
            assert!(!p.contains("TEMP B-TREE"), "{p}");
        }
        assert!(
            subs.contains("USING COVERING INDEX webhook_events_subscription (webhook_id>?)"),
            "{subs}"
        );
        assert!(
            due.contains("USING INDEX webhook_events_subscription (webhook_id=? AND next_at<?)"),
            "{due}"
        );
    }
}
