//! An operator's look at one account and its end (`admin account usage`,
//! `admin account delete`), straight on the metadata store like the rest of
//! `admin`: safe while servers run on it, and seen by them at once.

use super::admin::{find_account, AdminError};
use super::usage::{standing_in_store, Standing};
use crate::clock::Clock;
use crate::config::Config;
use crate::db::{Account, MetaStore, Removed};

/// The account `id_or_name` and where it stands this billing period.
pub(crate) async fn usage(
    meta: &dyn MetaStore,
    config: &Config,
    id_or_name: &str,
    clock: &Clock,
) -> Result<(Account, Standing), AdminError> {
    let account = find_account(meta, id_or_name).await?;
    let standing = standing_in_store(meta, config, &account, clock).await?;
    Ok((account, standing))
}

/// Removes `account` and everything of it (`MetaStore::delete_account`):
/// its keys and upload tokens are refused from the next request on, its
/// files are 404 at once, and every running server's collector deletes
/// their blobs at its next pass.
pub(crate) async fn delete(
    meta: &dyn MetaStore,
    account: &Account,
    now: i64,
) -> Result<Removed, AdminError> {
    meta.delete_account(&account.id, now)
        .await?
        .ok_or_else(|| AdminError::NotFound(format!("no account {:?}", account.id)))
}
