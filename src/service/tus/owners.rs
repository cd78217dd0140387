//! Whose an upload is, and how many an account may hold open.
//!
//! An upload records the key that created it: that key, or any secret key
//! of its account, may continue, read or end it; to any other key (another
//! public key of the account, another account's) it does not exist (404),
//! so a key learns nothing of uploads it cannot use. The account's secret
//! keys list its incomplete uploads, and may end any of them (a reservation
//! a public key left behind). Incomplete uploads at once are bounded by the
//! plan's `open_uploads`, checked in the transaction that creates one; and
//! those created by the account's strangers (public keys and upload tokens,
//! all together) by their share of it, and of the reservations and the
//! month's uploads (`domain::quota::Share`), in the same transaction. An
//! upload a stranger created lives 10 minutes without a byte
//! (`domain::tus::idle_expiry`): its reservation goes with it.

use crate::config::Plan;
use crate::db::UploadRow;
use crate::domain::quota::Ask;
use crate::domain::tus as rules;
use crate::service::error::ServiceError;
use crate::service::refusals::refused;
use crate::service::App;

pub(crate) use crate::service::caller::Caller;

/// 410 for an upload whose time is up.
pub(super) fn unexpired(app: &App, row: UploadRow) -> Result<UploadRow, ServiceError> {
    if row.expires_at <= app.clock.now_ms() {
        return Err(ServiceError::Gone("the upload has expired".into()));
    }
    Ok(row)
}

/// The most uploads one listing gives (newest first): more than any
/// built-in plan lets an account hold open.
pub(crate) const LIST_MAX: u32 = 1000;

fn no_such() -> ServiceError {
    ServiceError::NotFound("no such upload".into())
}

/// 404 unless `caller` may use `row`.
pub(super) fn check(row: &UploadRow, caller: &Caller) -> Result<(), ServiceError> {
    if rules::may_use(
        row.created_by.as_deref(),
        &caller.key.id,
        caller.is_secret(),
    ) {
        Ok(())
    } else {
        Err(no_such())
    }
}

/// The upload, if `caller` may use it (404 otherwise) and it has not
/// expired (410).
pub(crate) async fn owned(app: &App, caller: &Caller, id: &str) -> Result<UploadRow, ServiceError> {
    let row = app
        .meta
        .upload(&caller.account.id, id)
        .await?
        .ok_or_else(no_such)?;
    check(&row, caller)?;
    unexpired(app, row)
}

/// The account's incomplete, unexpired uploads, newest first (at most
/// [`LIST_MAX`]); the route admits secret keys only.
pub(crate) async fn list(app: &App, caller: &Caller) -> Result<Vec<UploadRow>, ServiceError> {
    let now = app.clock.now_ms();
    Ok(app
        .meta
        .open_uploads(&caller.account.id, now, LIST_MAX)
        .await?)
}

/// Refuses a creation before any work in the blob store when the account
/// already holds its plan's incomplete uploads, its month's uploads or its
/// storage (counting what incomplete uploads reserve), or, for a stranger,
/// when the account's strangers hold their share of one of those. Uploads at once may
/// pass this together: the transaction that creates the upload checks again.
pub(super) async fn precheck(
    app: &App,
    caller: &Caller,
    length: u64,
    plan: &Plan,
    period: &str,
) -> Result<(), ServiceError> {
    let account = &caller.account;
    let now = app.clock.now_ms();
    let held = app.meta.commitments(&account.id, period, now).await?;
    let holdings = held.holdings(account.storage_bytes);
    let ask = Ask::resumable(length);
    let admitted = if caller.key.kind.is_stranger() {
        let theirs = app.meta.strangers(&account.id, period, now).await?;
        plan.quota()
            .admit_stranger(plan.public_share, holdings, theirs, ask)
    } else {
        plan.quota().admit(holdings, ask)
    };
    match admitted {
        Ok(()) => Ok(()),
        Err(refusal) => Err(refused(app, refusal, plan, &account.id).await),
    }
}
