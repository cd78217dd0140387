//! The account row's lock, which every check of an account's quota takes
//! first (the commit, the creation of an upload, a stranger's slot): below
//! `accounts` and `strangers`, which both use it.

use super::{query_opt, unsigned, DbError};
use deadpool_postgres::Transaction;

/// Locks the account row for the rest of the transaction (every check of a
/// quota of this account, on any node, waits here); its stored bytes. `FOR
/// NO KEY UPDATE`, as `filestore_commit` (migration 0018) and
/// every `UPDATE` of its counters take it: the foreign keys of rows
/// written meanwhile (an idempotency key's) check the row without waiting
/// for it. (`FOR UPDATE` made such an insert wait on a request holding the
/// row while that request waited on the insert's: a deadlock.)
pub(super) async fn lock_account(tx: &Transaction<'_>, account_id: &str) -> Result<u64, DbError> {
    let row = query_opt(
        tx,
        "SELECT storage_bytes FROM accounts WHERE id = $1 FOR NO KEY UPDATE",
        &[&account_id],
    )
    .await?
    .ok_or_else(|| DbError::Invalid(format!("account {account_id} vanished")))?;
    Ok(unsigned(row.get(0)))
}
