//! Whose an upload is, and how many an account may hold open.
//!
//! An upload records the key that created it: that key, or any secret key
//! of its account, may continue, read or end it; to any other key (another
//! public key of the account, another account's) it does not exist (404),
//! so a key learns nothing of uploads it cannot use. The account's secret
//! keys list its incomplete uploads, and may end any of them (a reservation
//! a public key left behind). Incomplete uploads at once are bounded by the
//! plan's `open_uploads`, checked in the transaction that creates one.

use super::{unexpired, Caller};
use crate::config::Plan;
use crate::db::UploadRow;
use crate::domain::tus as rules;
use crate::error::ApiError;
use crate::service::upload::{storage_exceeded, uploads_exceeded};
use crate::service::App;

/// The most uploads one listing gives (newest first): more than any
/// built-in plan lets an account hold open.
pub(crate) const LIST_MAX: u32 = 1000;

fn no_such() -> ApiError {
    ApiError::NotFound("no such upload".into())
}

/// 404 unless `caller` may use `row`.
pub(super) fn check(row: &UploadRow, caller: &Caller) -> Result<(), ApiError> {
    if rules::may_use(
        row.created_by.as_deref(),
        &caller.key_id,
        !caller.public_key,
    ) {
        Ok(())
    } else {
        Err(no_such())
    }
}

/// The upload, if `caller` may use it (404 otherwise) and it has not
/// expired (410).
pub(crate) async fn owned(app: &App, caller: &Caller, id: &str) -> Result<UploadRow, ApiError> {
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
pub(crate) async fn list(app: &App, caller: &Caller) -> Result<Vec<UploadRow>, ApiError> {
    let now = app.clock.now_ms();
    Ok(app
        .meta
        .open_uploads(&caller.account.id, now, LIST_MAX)
        .await?)
}

/// Refuses a creation before any work in the blob store when the account
/// already holds its plan's incomplete uploads, its month's uploads or its
/// storage (counting what incomplete uploads reserve). Uploads at once may
/// pass this together: the transaction that creates the upload checks again.
pub(super) async fn precheck(
    app: &App,
    caller: &Caller,
    length: u64,
    plan: &Plan,
    period: &str,
) -> Result<(), ApiError> {
    let account = &caller.account;
    let now = app.clock.now_ms();
    let held = app.meta.commitments(&account.id, period, now).await?;
    let used = account.storage_bytes.saturating_add(held.reserved_bytes);
    if used.saturating_add(length) > plan.storage {
        return Err(storage_exceeded(used, plan.storage));
    }
    let count = held.upload_count.saturating_add(held.pending_uploads);
    if count >= plan.uploads {
        return Err(uploads_exceeded(app, count, plan));
    }
    if held.pending_uploads >= plan.open_uploads {
        let open = app.meta.open_uploads(&account.id, now, LIST_MAX).await?;
        let next_expiry = open.iter().map(|u| u.expires_at).min().unwrap_or(now);
        return Err(open_exceeded(app, held.pending_uploads, next_expiry, plan));
    }
    Ok(())
}

/// 429 for one incomplete upload too many: it may be retried once the first
/// of the `open` ones expires at `next_expiry` (ms), unless it completes or
/// is ended sooner.
pub(super) fn open_exceeded(app: &App, open: u64, next_expiry: i64, plan: &Plan) -> ApiError {
    let now = app.clock.now_ms();
    let wait = (next_expiry.saturating_sub(now) + 999) / 1000;
    ApiError::RateLimited {
        message: format!(
            "too many incomplete resumable uploads ({open} of {}): complete or end one first",
            plan.open_uploads
        ),
        limit: plan.open_uploads,
        reset: now / 1000 + wait,
        now: now / 1000,
    }
}
