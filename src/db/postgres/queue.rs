//! The blob deletion queue and the usage counters on PostgreSQL.

use super::{execute, query, query_opt, signed, unsigned, DbError};
use crate::db::model::{BandwidthCount, UsageCounters, DELETION_LEASE_MS, UPLOAD_GUARD_MS};
use deadpool_postgres::{GenericClient, Transaction};

/// Registers the blob an upload of node `node` is about to write.
pub(crate) async fn guard_upload<C: GenericClient>(
    c: &C,
    blob_key: &str,
    now: i64,
    node: i32,
) -> Result<(), DbError> {
    execute(
        c,
        "INSERT INTO blob_deletions (blob_key, due_at, owner) VALUES ($1, $2, $3)",
        &[&blob_key, &(now + UPLOAD_GUARD_MS), &node],
    )
    .await?;
    Ok(())
}

/// A query of the nodes holding their session lock on this database (the
/// running ones), the lock's first key ([`super::NODE_LOCK`]) the
/// statement's parameter `param`.
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
pub(crate) async fn expire_dead_guards<C: GenericClient>(
    c: &C,
    now: i64,
) -> Result<usize, DbError> {
    let sql = format!(
        "UPDATE blob_deletions SET due_at = LEAST(due_at, $1), owner = NULL
         WHERE owner IS NOT NULL AND owner::BIGINT NOT IN ({})",
        live_nodes("$2")
    );
    let n = execute(c, &sql, &[&now, &i64::from(super::NODE_LOCK)]).await?;
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}

/// The nodes that own upload guards (or deletions) but hold no session
/// lock now.
pub(crate) async fn guard_owners_gone<C: GenericClient>(c: &C) -> Result<Vec<i32>, DbError> {
    let sql = format!(
        "SELECT DISTINCT owner FROM blob_deletions
         WHERE owner IS NOT NULL AND owner::BIGINT NOT IN ({})",
        live_nodes("$1")
    );
    let rows = query(c, &sql, &[&i64::from(super::NODE_LOCK)]).await?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// Makes due now the upload guards of `nodes` that still hold no session
/// lock, as [`expire_dead_guards`] does.
pub(crate) async fn expire_guards_of<C: GenericClient>(
    c: &C,
    nodes: &[i32],
    now: i64,
) -> Result<usize, DbError> {
    let sql = format!(
        "UPDATE blob_deletions SET due_at = LEAST(due_at, $1), owner = NULL
         WHERE owner = ANY($3) AND owner::BIGINT NOT IN ({})",
        live_nodes("$2")
    );
    let n = execute(c, &sql, &[&now, &i64::from(super::NODE_LOCK), &nodes]).await?;
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}

/// Claims due blobs: their rows are moved a lease ahead, skipping rows
/// another node is claiming, so two nodes never take the same blob and a
/// node that dies leaves its claims to be taken again after the lease. A
/// queued blob a file still references is dropped from the queue instead.
pub(crate) async fn claim_due(
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

pub(crate) async fn failed<C: GenericClient>(
    c: &C,
    blob_key: &str,
    retry_at: i64,
    error: &str,
) -> Result<(), DbError> {
    execute(
        c,
        "UPDATE blob_deletions SET attempts = attempts + 1, due_at = $2, last_error = $3
         WHERE blob_key = $1",
        &[&blob_key, &retry_at, &error],
    )
    .await?;
    Ok(())
}

pub(crate) async fn prune_idempotency<C: GenericClient>(
    c: &C,
    before: i64,
) -> Result<usize, DbError> {
    let n = execute(
        c,
        "DELETE FROM idempotency_keys WHERE created_at < $1",
        &[&before],
    )
    .await?;
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}

/// The account's stored bytes and the period's counters, in one statement
/// (one snapshot of both tables).
pub(crate) async fn usage<C: GenericClient>(
    c: &C,
    account_id: &str,
    period: &str,
) -> Result<UsageCounters, DbError> {
    let row = query_opt(
        c,
        "SELECT a.storage_bytes, COALESCE(u.upload_count, 0), COALESCE(u.bandwidth_bytes, 0)
         FROM accounts a LEFT JOIN usage_periods u
           ON u.account_id = a.id AND u.period = $2
         WHERE a.id = $1",
        &[&account_id, &period],
    )
    .await?;
    Ok(row
        .map(|r| UsageCounters {
            storage_bytes: unsigned(r.get(0)),
            upload_count: unsigned(r.get(1)),
            bandwidth_bytes: unsigned(r.get(2)),
        })
        .unwrap_or_default())
}

/// Adds the bytes sent, in key order: two nodes flushing at once lock the
/// rows in one order (no deadlock).
pub(crate) async fn add_bandwidth(
    tx: &Transaction<'_>,
    mut counts: Vec<BandwidthCount>,
) -> Result<(), DbError> {
    counts.sort_by(|a, b| (&a.account_id, &a.period).cmp(&(&b.account_id, &b.period)));
    for b in &counts {
        execute(
            tx,
            "INSERT INTO usage_periods (account_id, period, bandwidth_bytes)
             VALUES ($1, $2, $3)
             ON CONFLICT (account_id, period)
             DO UPDATE SET bandwidth_bytes = usage_periods.bandwidth_bytes + $3",
            &[&b.account_id, &b.period, &signed(b.bytes)?],
        )
        .await?;
    }
    Ok(())
}
