//! The strangers' share on PostgreSQL (`domain::quota::Share`): what an
//! account's public keys and upload tokens hold together, read and counted
//! in the transactions that admit them, under the account row's lock, so
//! that it holds across nodes; and their upload bodies arriving at once
//! ([`SlotRepo`]), one row each in `stranger_slots` (migration 0017).

use super::account_lock::lock_account;
use super::{execute, query_one, query_opt, unsigned, DbError, PgStore, NODE_LOCK};
use crate::db::store::SlotRepo;
use crate::domain::ids::upload_token_of;
use crate::domain::quota::Holdings;
use async_trait::async_trait;
use deadpool_postgres::{GenericClient, Transaction};

/// Whether an upload's creator (`created_by`) is a stranger of the
/// account: an upload token (`ut_…`) or a public key. SQL over a row of
/// `tus_uploads` (as `u`).
pub(super) const BY_STRANGER: &str = "(u.created_by LIKE 'ut!_%' ESCAPE '!' OR u.created_by IN
     (SELECT id FROM api_keys WHERE account_id = u.account_id AND kind = 'public'))";

/// What the account's strangers hold, as the share reads it: their uploads
/// in the period, and the bytes and number of their incomplete resumable
/// uploads unexpired at the time (each counts as one upload too). ($1
/// account, $2 period, $3 time.)
fn strangers_sql() -> String {
    format!(
        "SELECT COALESCE((SELECT stranger_uploads FROM usage_periods
                           WHERE account_id = $1 AND period = $2), 0)::BIGINT,
             COALESCE(SUM(u.length), 0)::BIGINT, COUNT(*)
         FROM tus_uploads u
         WHERE u.account_id = $1 AND u.completed_at IS NULL AND u.expires_at > $3
           AND {BY_STRANGER}"
    )
}

/// What the account's strangers hold at `now` in `period` (see [`strangers_sql`]).
pub(super) async fn strangers<C: GenericClient>(
    c: &C,
    account_id: &str,
    period: &str,
    now: i64,
) -> Result<Holdings, DbError> {
    let row = query_one(c, &strangers_sql(), &[&account_id, &period, &now]).await?;
    let (made, reserved, open) = (
        unsigned(row.get(0)),
        unsigned(row.get(1)),
        unsigned(row.get(2)),
    );
    Ok(Holdings {
        used: reserved,
        uploads: made.saturating_add(open),
        open,
    })
}

/// Whether `key_id` (an upload's creator) is a stranger of its account: an
/// upload token, or a public key.
pub(super) async fn is_stranger<C: GenericClient>(c: &C, key_id: &str) -> Result<bool, DbError> {
    if upload_token_of(Some(key_id)).is_some() {
        return Ok(true);
    }
    let sql = "SELECT 1 FROM api_keys WHERE id = $1 AND kind = 'public'";
    Ok(query_opt(c, sql, &[&key_id]).await?.is_some())
}

/// The nodes alive now: those whose session holds their advisory lock
/// (`node::hold_node_lock`; `$2` is [`NODE_LOCK`]), as the upload leases
/// tell them (`uploads::lease_upload`).
const LIVE_NODES: &str = "SELECT objid::BIGINT FROM pg_locks
     WHERE locktype = 'advisory' AND classid::BIGINT = $2 AND objsubid = 2 AND granted
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())";

/// Takes slot `id` for `node` if the account's strangers have fewer than
/// `max` bodies arriving on live nodes: under the account row's lock, so
/// two nodes taking the last one at once take it once. The rows of dead
/// nodes go first.
async fn take(
    tx: &Transaction<'_>,
    (account_id, id): (&str, &str),
    node: i32,
    max: u64,
    now: i64,
) -> Result<bool, DbError> {
    lock_account(tx, account_id).await?;
    let lock = i64::from(NODE_LOCK);
    execute(
        tx,
        &format!(
            "DELETE FROM stranger_slots
             WHERE account_id = $1 AND node::BIGINT NOT IN ({LIVE_NODES})"
        ),
        &[&account_id, &lock],
    )
    .await?;
    let held: i64 = query_one(
        tx,
        "SELECT COUNT(*) FROM stranger_slots WHERE account_id = $1",
        &[&account_id],
    )
    .await?
    .get(0);
    if unsigned(held) >= max {
        return Ok(false);
    }
    execute(
        tx,
        "INSERT INTO stranger_slots (id, account_id, node, taken_at) VALUES ($1, $2, $3, $4)",
        &[&id, &account_id, &node, &now],
    )
    .await?;
    Ok(true)
}

#[async_trait]
impl SlotRepo for PgStore {
    fn counts_slots(&self) -> bool {
        true
    }

    async fn take_slot(
        &self,
        account_id: &str,
        id: &str,
        max: u64,
        now: i64,
    ) -> Result<bool, DbError> {
        let (_turn, deadline) = self.turn(account_id).await?;
        let node = self.node;
        in_tx!(self, deadline, |tx| take(
            &tx,
            (account_id, id),
            node,
            max,
            now
        )
        .await)
    }

    async fn free_slot(&self, id: &str) -> Result<(), DbError> {
        on_conn!(self, |c| {
            execute(c, "DELETE FROM stranger_slots WHERE id = $1", &[&id]).await?;
            Ok(())
        })
    }
}
