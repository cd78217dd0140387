//! Webhook subscriptions and their outbox on SQLite. Events are written in
//! the transaction of the change they tell of (`enqueue`), so one is sent
//! exactly when its change is committed; the sender claims due ones, a
//! file's in order (`claim`), and removes each once delivered or given up.

use super::{DbError, OptionalExtension};
use crate::db::model::{event_data, event_file, FileRow, OutboxEvent, WebhookRow};
use crate::domain::secret::Secret;
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

pub(crate) fn create(conn: &Connection, w: &WebhookRow) -> Result<(), DbError> {
    conn.prepare_cached(&format!(
        "INSERT INTO webhooks ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
    ))?
    .execute(params![
        w.id,
        w.account_id,
        w.url,
        w.events.join(","),
        w.secret.expose(),
        w.created_at
    ])?;
    Ok(())
}

/// Every subscription, or one account's, oldest first.
pub(crate) fn list(
    conn: &Connection,
    account_id: Option<&str>,
) -> Result<Vec<WebhookRow>, DbError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM webhooks WHERE ?1 IS NULL OR account_id = ?1
         ORDER BY created_at, id"
    ))?;
    let rows = stmt
        .query_map([account_id], from_row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// Removes a subscription and its undelivered events; it as it was.
pub(crate) fn delete(conn: &Connection, id: &str) -> Result<Option<WebhookRow>, DbError> {
    conn.prepare_cached("DELETE FROM webhook_events WHERE webhook_id = ?1")?
        .execute([id])?;
    Ok(conn
        .prepare_cached(&format!(
            "DELETE FROM webhooks WHERE id = ?1 RETURNING {COLUMNS}"
        ))?
        .query_row([id], from_row)
        .optional()?)
}

/// Queues event `kind` of `row`, at `now`, for each of its account's
/// subscriptions to it (inside the caller's transaction).
pub(crate) fn enqueue(tx: &Connection, kind: &str, row: &FileRow, now: i64) -> Result<(), DbError> {
    tx.prepare_cached(
        "INSERT INTO webhook_events (id, webhook_id, file_id, type, data, created_at, next_at)
         SELECT 'msg_' || lower(hex(randomblob(16))), id, ?2, ?3, ?4, ?5, ?5 FROM webhooks
         WHERE account_id = ?1 AND instr(',' || events || ',', ',' || ?3 || ',') > 0",
    )?
    .execute(params![row.account_id, row.id, kind, event_data(row)?, now])?;
    Ok(())
}

/// Claims up to `max` events due at `now`, each the oldest undelivered of
/// its file for its subscription: their next attempt moves to `lease_until`
/// and their attempts count one more.
pub(crate) fn claim(
    conn: &Connection,
    now: i64,
    lease_until: i64,
    max: u32,
) -> Result<Vec<OutboxEvent>, DbError> {
    let mut stmt = conn.prepare_cached(
        "UPDATE webhook_events SET next_at = ?2, attempts = attempts + 1
         WHERE seq IN (
             SELECT e.seq FROM webhook_events e WHERE e.next_at <= ?1
               AND NOT EXISTS (SELECT 1 FROM webhook_events p
                   WHERE p.webhook_id = e.webhook_id AND p.file_id = e.file_id AND p.seq < e.seq)
             ORDER BY e.seq LIMIT ?3)
         RETURNING seq, id, webhook_id,
             (SELECT url FROM webhooks w WHERE w.id = webhook_id),
             (SELECT secret FROM webhooks w WHERE w.id = webhook_id),
             type, data, created_at, attempts",
    )?;
    let rows = stmt
        .query_map(params![now, lease_until, max], |r| {
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
        })?
        .collect::<Result<Vec<_>, _>>()?;
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
pub(crate) fn release_claims(conn: &Connection, now: i64) -> Result<usize, DbError> {
    Ok(conn
        .prepare_cached("UPDATE webhook_events SET next_at = ?1 WHERE next_at > ?1")?
        .execute([now])?)
}

/// An event was delivered (or given up): it leaves the outbox.
pub(crate) fn done(conn: &Connection, seq: i64) -> Result<(), DbError> {
    conn.prepare_cached("DELETE FROM webhook_events WHERE seq = ?1")?
        .execute([seq])?;
    Ok(())
}

/// An attempt failed: the next is at `retry_at`.
pub(crate) fn failed(
    conn: &Connection,
    seq: i64,
    retry_at: i64,
    error: &str,
) -> Result<(), DbError> {
    conn.prepare_cached("UPDATE webhook_events SET next_at = ?2, last_error = ?3 WHERE seq = ?1")?
        .execute(params![seq, retry_at, error])?;
    Ok(())
}

/// Whether any event is due at `now` (a read: the sender claims, which
/// writes, only then).
pub(crate) fn any_due(conn: &Connection, now: i64) -> Result<bool, DbError> {
    Ok(conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM webhook_events WHERE next_at <= ?1)")?
        .query_row([now], |r| r.get(0))?)
}

/// Events not delivered yet.
pub(crate) fn pending(conn: &Connection) -> Result<u64, DbError> {
    Ok(conn
        .prepare_cached("SELECT COUNT(*) FROM webhook_events")?
        .query_row([], |r| r.get(0))?)
}
