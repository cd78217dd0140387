//! Webhook subscriptions and their outbox on PostgreSQL ([`OutboxRepo`]);
//! see SQLite's `outbox` for the rules. Several nodes send at once: a claim
//! takes its rows `FOR UPDATE SKIP LOCKED` and moves them a lease ahead, so
//! an event is attempted by one node at a time, and a file's later event
//! waits while an earlier one is undelivered, whichever node holds it. Each
//! node shares its claims among subscriptions by its own budget. Also the
//! enqueueing of a file's events, inside the transaction that changes it.

use super::{execute, has_nul, query, query_one, query_opt, unsigned, DbError, PgStore, NODE_LOCK};
use crate::db::model::{event_data, event_file, FileRow, OutboxEvent, WebhookRow};
use crate::db::store::OutboxRepo;
use crate::domain::secret::Secret;
use crate::domain::webhooks::{self, Budget, Candidate};
use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use tokio_postgres::Row;

const COLUMNS: &str = "id, account_id, url, events, secret, created_at";

fn webhook(r: &Row) -> WebhookRow {
    let events: String = r.get(3);
    WebhookRow {
        id: r.get(0),
        account_id: r.get(1),
        url: r.get(2),
        events: events.split(',').map(String::from).collect(),
        secret: Secret::new(r.get::<_, String>(4)),
        created_at: r.get(5),
    }
}

/// Queues event `kind` of `row` for each subscription of its account to it
/// (inside the caller's transaction).
pub(super) async fn enqueue<C: GenericClient>(
    c: &C,
    kind: &str,
    row: &FileRow,
    now: i64,
) -> Result<(), DbError> {
    execute(
        c,
        "INSERT INTO webhook_events (id, webhook_id, file_id, type, data, created_at, next_at)
         SELECT 'msg_' || replace(gen_random_uuid()::TEXT, '-', ''), id, $2, $3, $4, $5, $5
         FROM webhooks
         WHERE account_id = $1 AND $3 = ANY(string_to_array(events, ','))",
        &[&row.account_id, &row.id, &kind, &event_data(row)?, &now],
    )
    .await?;
    Ok(())
}

/// Each subscription's longest due events, as many as its budget (`$2`, `$3`:
/// the subscriptions with a budget of their own, `$4` every other's), each
/// the oldest undelivered of its file for it. The subscriptions with events
/// are found by a skip scan (one index probe each), and each one's due
/// events walked in order by `webhook_events_subscription`, so a long
/// backlog costs a claim nothing. `$lock` locks what a claim takes, `$limit` bounds the
/// rows.
macro_rules! candidates {
    ($lock:literal, $limit:literal) => {
        concat!(
            "WITH RECURSIVE subs(id) AS (
         SELECT min(webhook_id) FROM webhook_events
         UNION ALL
         SELECT (SELECT min(webhook_id) FROM webhook_events WHERE webhook_id > s.id)
         FROM subs s WHERE s.id IS NOT NULL),
     budgets AS (
         SELECT s.id, COALESCE(l.n, $4) AS n FROM subs s
         LEFT JOIN unnest($2::TEXT[], $3::INTEGER[]) AS l(id, n) ON l.id = s.id COLLATE \"C\"
         WHERE s.id IS NOT NULL)
     SELECT c.seq, c.next_at, b.id FROM budgets b CROSS JOIN LATERAL (
         SELECT e.seq, e.next_at FROM webhook_events e
         WHERE e.webhook_id = b.id AND e.next_at <= $1
           AND NOT EXISTS (SELECT 1 FROM webhook_events p
               WHERE p.webhook_id = e.webhook_id AND p.file_id = e.file_id AND p.seq < e.seq)
         ORDER BY e.next_at, e.seq LIMIT b.n ",
            $lock,
            ") c WHERE b.n > 0 ",
            $limit
        )
    };
}

/// What a claim takes, locked: other nodes step over it until it commits.
const CLAIMABLE: &str = candidates!("FOR UPDATE OF e SKIP LOCKED", "");

/// Whether there is anything to claim: a due event, or a batch to expand
/// (a row with no subscription, in the same statement).
const ANY_DUE: &str = concat!(
    candidates!("", ""),
    " UNION ALL SELECT 0, 0, '' WHERE EXISTS (SELECT 1 FROM webhook_event_batches) LIMIT 1"
);

async fn candidates<C: GenericClient>(
    c: &C,
    now: i64,
    budget: &Budget,
    claim: bool,
) -> Result<Vec<Candidate>, DbError> {
    let sql = if claim { CLAIMABLE } else { ANY_DUE };
    let (ids, limits): (Vec<&str>, Vec<i32>) = budget
        .limits
        .iter()
        .map(|(id, n)| (id.as_str(), i32::try_from(*n).unwrap_or(i32::MAX)))
        .unzip();
    let each = i32::try_from(budget.each.min(budget.max)).unwrap_or(i32::MAX);
    Ok(query(c, sql, &[&now, &ids, &limits, &each])
        .await?
        .iter()
        .map(|r| Candidate {
            seq: r.get(0),
            due: r.get(1),
            webhook_id: r.get(2),
        })
        .collect())
}

/// Turns the oldest event batch (a folder delete's) of up to `max`
/// subscriptions, the longest waiting first, into their events, one row
/// each in the batch's order, due when the delete was made; the batches go.
/// Batches another node is expanding are skipped; an element without an id
/// (never written so) is dropped.
async fn expand_batches<C: GenericClient>(c: &C, max: u32) -> Result<(), DbError> {
    execute(
        c,
        "WITH b AS (
             DELETE FROM webhook_event_batches WHERE seq IN (
                 SELECT seq FROM webhook_event_batches WHERE seq IN (
                     SELECT min(seq) FROM webhook_event_batches GROUP BY webhook_id
                     ORDER BY 1 LIMIT $1)
                 FOR UPDATE SKIP LOCKED)
             RETURNING *)
         INSERT INTO webhook_events (id, webhook_id, file_id, type, data, created_at, next_at)
         SELECT 'msg_' || replace(gen_random_uuid()::TEXT, '-', ''), b.webhook_id,
             j.value ->> 'id', b.type, j.value::TEXT, b.created_at, b.created_at
         FROM b CROSS JOIN LATERAL json_array_elements(b.data::json) WITH ORDINALITY AS j(value, n)
         WHERE j.value ->> 'id' IS NOT NULL
         ORDER BY b.seq, j.n",
        &[&i64::from(max)],
    )
    .await?;
    Ok(())
}

/// Claims events due at `now` within `budget`, taken round-robin across
/// subscriptions (`webhooks::fair_pick`); see `MetaStore::claim_events`.
/// Inside a transaction: the candidates stay locked (other nodes step over
/// them) until the claim commits. The oldest batches are expanded first.
async fn claim<C: GenericClient>(
    c: &C,
    now: i64,
    lease_until: i64,
    budget: &Budget,
    node: i32,
) -> Result<Vec<OutboxEvent>, DbError> {
    expand_batches(c, webhooks::EXPANDED_PER_CLAIM).await?;
    let picked = webhooks::fair_pick(&candidates(c, now, budget, true).await?, budget);
    if picked.is_empty() {
        return Ok(Vec::new());
    }
    let rows = query(
        c,
        "UPDATE webhook_events AS u SET next_at = $2, attempts = u.attempts + 1, claim_node = $3
         FROM webhooks w
         WHERE w.id = u.webhook_id AND u.seq = ANY($1)
         RETURNING u.seq, u.id, u.webhook_id, w.url, w.secret, u.type, u.data, u.created_at,
             u.attempts",
        &[&picked, &lease_until, &node],
    )
    .await?;
    let mut events = Vec::new();
    for r in &rows {
        let seq: i64 = r.get(0);
        let Some(file) = event_file(seq, r.get(6)) else {
            done(c, seq).await?;
            continue;
        };
        events.push(OutboxEvent {
            seq,
            id: r.get(1),
            webhook_id: r.get(2),
            url: r.get(3),
            secret: Secret::new(r.get::<_, String>(4)),
            kind: r.get(5),
            file,
            created_at: r.get(7),
            attempts: u32::try_from(r.get::<_, i32>(8)).unwrap_or(0),
        });
    }
    events.sort_by_key(|e| e.seq);
    Ok(events)
}

/// Makes due now the events claimed by nodes that are gone (they hold no
/// session lock): their attempts died with them.
pub(super) async fn release_dead_claims<C: GenericClient>(c: &C, now: i64) -> Result<u64, DbError> {
    execute(
        c,
        "UPDATE webhook_events SET next_at = $1, claim_node = NULL
         WHERE claim_node IS NOT NULL AND next_at > $1 AND claim_node::BIGINT NOT IN (
             SELECT objid::BIGINT FROM pg_locks
             WHERE locktype = 'advisory' AND classid::BIGINT = $2 AND objsubid = 2 AND granted
               AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))",
        &[&now, &i64::from(NODE_LOCK)],
    )
    .await
}

async fn done<C: GenericClient>(c: &C, seq: i64) -> Result<(), DbError> {
    execute(c, "DELETE FROM webhook_events WHERE seq = $1", &[&seq]).await?;
    Ok(())
}

#[async_trait]
impl OutboxRepo for PgStore {
    fn take_queued_events(&self) -> bool {
        self.queued_events
            .swap(false, std::sync::atomic::Ordering::AcqRel)
    }

    async fn create_webhook(&self, w: WebhookRow) -> Result<(), DbError> {
        on_conn!(self, |c| {
            execute(
                c,
                &format!("INSERT INTO webhooks ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)"),
                &[
                    &w.id,
                    &w.account_id,
                    &w.url,
                    &w.events.join(","),
                    &w.secret.expose(),
                    &w.created_at,
                ],
            )
            .await?;
            Ok(())
        })
    }

    async fn list_webhooks(&self, account_id: Option<&str>) -> Result<Vec<WebhookRow>, DbError> {
        if account_id.is_some_and(|a| has_nul(&[a])) {
            return Ok(Vec::new());
        }
        on_conn!(self, |c| {
            Ok(query(
                c,
                &format!(
                    "SELECT {COLUMNS} FROM webhooks WHERE $1::TEXT IS NULL OR account_id = $1
                     ORDER BY created_at, id"
                ),
                &[&account_id],
            )
            .await?
            .iter()
            .map(webhook)
            .collect())
        })
    }

    /// Removes a subscription (its undelivered events go with it: ON DELETE
    /// CASCADE); it as it was. Its batches go first, before its row is
    /// locked: a claim expanding one holds the batch, then takes the
    /// subscription's row for the events' foreign key, so the other order
    /// would deadlock with it.
    async fn delete_webhook(&self, id: &str) -> Result<Option<WebhookRow>, DbError> {
        if has_nul(&[id]) {
            return Ok(None);
        }
        in_tx!(self, |tx| {
            execute(
                &tx,
                "DELETE FROM webhook_event_batches WHERE webhook_id = $1",
                &[&id],
            )
            .await?;
            Ok(query_opt(
                &tx,
                &format!("DELETE FROM webhooks WHERE id = $1 RETURNING {COLUMNS}"),
                &[&id],
            )
            .await?
            .map(|r| webhook(&r)))
        })
    }

    async fn claim_events(
        &self,
        now: i64,
        lease_until: i64,
        budget: &Budget,
    ) -> Result<Vec<OutboxEvent>, DbError> {
        in_tx!(self, |tx| claim(&tx, now, lease_until, budget, self.node)
            .await)
    }

    async fn event_done(&self, seq: i64) -> Result<(), DbError> {
        on_conn!(self, |c| done(c, seq).await)
    }

    async fn event_failed(&self, seq: i64, retry_at: i64, error: &str) -> Result<(), DbError> {
        on_conn!(self, |c| {
            execute(
                c,
                "UPDATE webhook_events SET next_at = $2, last_error = $3 WHERE seq = $1",
                &[&seq, &retry_at, &error],
            )
            .await?;
            Ok(())
        })
    }

    /// Whether a claim at `now` within `budget` would take any event (a read:
    /// the sender claims, which writes, only then).
    async fn any_due_events(&self, now: i64, budget: &Budget) -> Result<bool, DbError> {
        on_conn!(self, |c| Ok(!candidates(c, now, budget, false)
            .await?
            .is_empty()))
    }

    async fn pending_events(&self) -> Result<u64, DbError> {
        on_conn!(self, |c| {
            let n: i64 = query_one(
                c,
                "SELECT (SELECT COUNT(*) FROM webhook_events)
                     + (SELECT coalesce(sum(events), 0) FROM webhook_event_batches)::BIGINT",
                &[],
            )
            .await?
            .get(0);
            Ok(unsigned(n))
        })
    }
}
