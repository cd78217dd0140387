//! The blob deletion queue and the upload guards on PostgreSQL
//! ([`BlobRepo`]): scheduling and claiming deletions, guards of uploads in
//! flight, and the expiry of the guards of nodes that are gone.

use super::outbox::release_dead_claims;
use super::{execute, query, DbError, PgStore, NODE_LOCK};
use crate::db::model::{DELETION_LEASE_MS, UPLOAD_GUARD_MS};
use crate::db::store::BlobRepo;
use async_trait::async_trait;
use deadpool_postgres::{GenericClient, Transaction};
use std::sync::PoisonError;
use std::time::{Duration, Instant};

/// How long a node's database session must have been gone before other
/// nodes take it for dead and collect its uploads' blobs: a live node whose
/// connection dropped (a database restart, a network blip) takes its lock
/// again within seconds, and its uploads in flight go on.
const DEAD_NODE_GRACE: Duration = Duration::from_secs(30);

/// Queues a blob for deletion, due at `due` (or earlier if queued so).
pub(super) async fn schedule<C: GenericClient>(c: &C, key: &str, due: i64) -> Result<(), DbError> {
    schedule_by(c, key, due, None).await
}

/// Queues a blob for deletion as [`schedule`] does; with an `owner`, the
/// node whose request is deleting it now: should that node die first, its
/// death makes the blob due at once, as it does its upload guards.
pub(super) async fn schedule_by<C: GenericClient>(
    c: &C,
    key: &str,
    due: i64,
    owner: Option<i32>,
) -> Result<(), DbError> {
    execute(
        c,
        "INSERT INTO blob_deletions (blob_key, due_at, owner) VALUES ($1, $2, $3)
         ON CONFLICT (blob_key)
         DO UPDATE SET due_at = LEAST(blob_deletions.due_at, $2), owner = $3",
        &[&key, &due, &owner],
    )
    .await?;
    Ok(())
}

/// Forgets a queued blob; false when it was not queued.
pub(super) async fn unqueue<C: GenericClient>(c: &C, key: &str) -> Result<bool, DbError> {
    Ok(execute(c, "DELETE FROM blob_deletions WHERE blob_key = $1", &[&key]).await? == 1)
}

/// A query of the nodes holding their session lock on this database (the
/// running ones), the lock's first key ([`NODE_LOCK`]) the statement's
/// parameter `param`.
fn live_nodes(param: &str) -> String {
    format!(
        "SELECT objid::BIGINT FROM pg_locks
         WHERE locktype = 'advisory' AND classid::BIGINT = {param} AND objsubid = 2
           AND granted
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    )
}

/// Makes due now the upload guards whose node holds no session lock any
/// more (it crashed or stopped); they stop being guards (`owner` NULL), so
/// a late commit of such an upload is refused rather than losing its blob.
/// The same for the blobs such a node's DELETEs were deleting.
async fn expire_dead_guards<C: GenericClient>(c: &C, now: i64) -> Result<usize, DbError> {
    let sql = format!(
        "UPDATE blob_deletions SET due_at = LEAST(due_at, $1), owner = NULL
         WHERE owner IS NOT NULL AND owner::BIGINT NOT IN ({})",
        live_nodes("$2")
    );
    let n = execute(c, &sql, &[&now, &i64::from(NODE_LOCK)]).await?;
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}

/// Claims due blobs: their rows are moved a lease ahead, skipping rows
/// another node is claiming, so two nodes never take the same blob and a
/// node that dies leaves its claims to be taken again after the lease. A
/// queued blob a file still references is dropped from the queue instead.
async fn claim_due(
    tx: &Transaction<'_>,
    now: i64,
    max: u32,
) -> Result<Vec<(String, u32)>, DbError> {
    execute(
        tx,
        "DELETE FROM blob_deletions b WHERE due_at <= $1
         AND EXISTS (SELECT 1 FROM files f WHERE f.blob_key = b.blob_key)",
        &[&now],
    )
    .await?;
    let rows = query(
        tx,
        "UPDATE blob_deletions SET due_at = $3 WHERE blob_key IN (
             SELECT blob_key FROM blob_deletions WHERE due_at <= $1
             ORDER BY due_at LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING blob_key, attempts",
        &[&now, &i64::from(max), &(now + DELETION_LEASE_MS)],
    )
    .await?;
    Ok(rows
        .iter()
        .map(|r| (r.get(0), u32::try_from(r.get::<_, i32>(1)).unwrap_or(0)))
        .collect())
}

#[async_trait]
impl BlobRepo for PgStore {
    /// Registers the blob an upload of this node is about to write.
    async fn guard_upload(&self, blob_key: &str, now: i64) -> Result<(), DbError> {
        on_conn!(self, |c| {
            execute(
                c,
                "INSERT INTO blob_deletions (blob_key, due_at, owner) VALUES ($1, $2, $3)",
                &[&blob_key, &(now + UPLOAD_GUARD_MS), &self.node],
            )
            .await?;
            Ok(())
        })
    }

    async fn schedule_blob_deletion(&self, blob_key: &str, due: i64) -> Result<(), DbError> {
        on_conn!(self, |c| schedule(c, blob_key, due).await)
    }

    async fn due_blobs(&self, now: i64, max: u32) -> Result<Vec<(String, u32)>, DbError> {
        in_tx!(self, |tx| claim_due(&tx, now, max).await)
    }

    async fn blob_deleted(&self, blob_key: &str) -> Result<bool, DbError> {
        on_conn!(self, |c| unqueue(c, blob_key).await)
    }

    async fn blob_deletion_failed(
        &self,
        blob_key: &str,
        retry_at: i64,
        error: &str,
    ) -> Result<(), DbError> {
        on_conn!(self, |c| {
            execute(
                c,
                "UPDATE blob_deletions SET attempts = attempts + 1, due_at = $2, last_error = $3
                 WHERE blob_key = $1",
                &[&blob_key, &retry_at, &error],
            )
            .await?;
            Ok(())
        })
    }

    /// Makes due the guards of nodes that are no longer running (their
    /// session advisory lock is gone): a crashed process's, this node's
    /// previous run's; never those of uploads in flight on live nodes.
    async fn expire_upload_guards(&self, now: i64) -> Result<usize, DbError> {
        on_conn!(self, |c| {
            release_dead_claims(c, now).await?;
            expire_dead_guards(c, now).await
        })
    }

    /// Makes due now the upload guards (and deletions) of the nodes that
    /// have held no session lock for `DEAD_NODE_GRACE`, as
    /// `expire_upload_guards` does for every node without one.
    async fn expire_dead_node_guards(&self, now: i64) -> Result<usize, DbError> {
        // The nodes that own upload guards (or deletions) but hold no
        // session lock now.
        let gone: Vec<i32> = on_conn!(self, |c| {
            let sql = format!(
                "SELECT DISTINCT owner FROM blob_deletions
                 WHERE owner IS NOT NULL AND owner::BIGINT NOT IN ({})",
                live_nodes("$1")
            );
            let rows = query(c, &sql, &[&i64::from(NODE_LOCK)]).await?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })?;
        let dead: Vec<i32> = {
            let mut seen = self.gone.lock().unwrap_or_else(PoisonError::into_inner);
            seen.retain(|node, _| gone.contains(node));
            let at = Instant::now();
            gone.iter()
                .filter(|node| seen.entry(**node).or_insert(at).elapsed() >= DEAD_NODE_GRACE)
                .copied()
                .collect()
        };
        if dead.is_empty() {
            return Ok(0);
        }
        // Those of them that still hold no session lock.
        on_conn!(self, |c| {
            let sql = format!(
                "UPDATE blob_deletions SET due_at = LEAST(due_at, $1), owner = NULL
                 WHERE owner = ANY($3) AND owner::BIGINT NOT IN ({})",
                live_nodes("$2")
            );
            let n = execute(c, &sql, &[&now, &i64::from(NODE_LOCK), &dead]).await?;
            Ok(usize::try_from(n).unwrap_or(usize::MAX))
        })
    }
}
