//! The errors of the plan's limits, as every upload path words them: one
//! place for the messages and the 413/429 a refusal of the quota rule
//! (`domain::quota`) becomes.

use super::App;
use crate::clock::period_of;
use crate::config::Plan;
use crate::domain::policy::UploadPolicy;
use crate::domain::quota::{Refusal, ShareOf};
use crate::domain::units::human_bytes;
use crate::service::error::ServiceError;

/// The error of a refusal of the quota rule. An `OpenUploads` refusal says
/// when the first incomplete upload expires (a read, on refusal only).
pub(crate) async fn refused(
    app: &App,
    refusal: Refusal,
    plan: &Plan,
    account_id: &str,
) -> ServiceError {
    match refusal {
        Refusal::Storage { used } => storage_exceeded(used, plan.storage),
        Refusal::Uploads { count } => uploads_exceeded(app, count, plan),
        Refusal::OpenUploads { open } => {
            let message = format!(
                "too many incomplete resumable uploads ({open} of {}): complete or end one first",
                plan.open_uploads
            );
            open_refused(app, account_id, plan.open_uploads, message).await
        }
        Refusal::Strangers { of, held, max } => {
            strangers_refused(app, of, (held, max), account_id).await
        }
    }
}

/// 429 for a stranger (a public key or an upload token) past the share of
/// a limit the account's strangers hold together (`held` of `max`); the
/// account's own keys go on. Retried at the month's end for uploads, when
/// the strangers' first incomplete upload expires for the others (a read,
/// on refusal only; it is at most 10 minutes after its last byte).
async fn strangers_refused(
    app: &App,
    of: ShareOf,
    (held, max): (u64, u64),
    account_id: &str,
) -> ServiceError {
    let whose = "this account's public keys and upload tokens";
    let message = match of {
        ShareOf::Uploads => {
            let now = app.clock.now();
            return ServiceError::RateLimited {
                message: format!(
                    "monthly upload limit reached for {whose} ({held} of the {max} they may \
                     make together this period)"
                ),
                limit: max,
                reset: period_of(now).next_start.timestamp(),
                now: now.timestamp(),
            };
        }
        ShareOf::Reserved => format!(
            "{whose} reserve {} with incomplete resumable uploads, their share of the storage \
             ({}): complete or end one first",
            human_bytes(held),
            human_bytes(max)
        ),
        ShareOf::OpenUploads => format!(
            "too many incomplete resumable uploads made with {whose} ({held} of the {max} they \
             may hold together): complete or end one first"
        ),
    };
    expiry_refused(app, account_id, true, max, message).await
}

/// The largest file a caller may upload: its policy's `max_size` within the
/// plan's ([`size_limit`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SizeLimit {
    pub(crate) max: u64,
    /// Whether the policy's `max_size` binds, not the plan's.
    by_policy: bool,
}

impl SizeLimit {
    /// The 413 of a larger file, in the words of whichever binds (made only
    /// when a file is refused: most requests never need it).
    pub(crate) fn refusal(self) -> ServiceError {
        if self.by_policy {
            ServiceError::FileTooLarge(format!(
                "file exceeds the upload policy's maximum size of {}",
                human_bytes(self.max)
            ))
        } else {
            ServiceError::OverPlanFileSize(format!(
                "file exceeds the plan's maximum file size of {}",
                human_bytes(self.max)
            ))
        }
    }
}

/// The largest file a caller may upload: its policy's `max_size` within the
/// plan's.
pub(crate) fn size_limit(plan_max: u64, policy: &UploadPolicy) -> SizeLimit {
    let max = policy.max_size(plan_max);
    SizeLimit {
        max,
        by_policy: max < plan_max,
    }
}

/// The refusal of an upload token used up or revoked since its request
/// was admitted (counted exactly in the transaction that creates the file
/// or the resumable upload).
pub(crate) fn token_spent() -> ServiceError {
    ServiceError::Unauthorized("this upload token is used up or revoked".into())
}

pub(crate) fn storage_exceeded(used: u64, quota: u64) -> ServiceError {
    ServiceError::StorageLimitExceeded(format!(
        "upload would exceed the storage quota ({} of {} used)",
        human_bytes(used),
        human_bytes(quota)
    ))
}

pub(crate) fn uploads_exceeded(app: &App, count: u64, plan: &Plan) -> ServiceError {
    let now = app.clock.now();
    ServiceError::RateLimited {
        message: format!(
            "monthly upload limit reached ({count} of {} this period)",
            plan.uploads
        ),
        limit: plan.uploads,
        reset: period_of(now).next_start.timestamp(),
        now: now.timestamp(),
    }
}

/// 429 for one incomplete upload too many (`message`, of `limit`): it may
/// be retried once the account's first incomplete upload expires (a read,
/// on refusal only), unless one completes or is ended sooner.
pub(crate) async fn open_refused(
    app: &App,
    account_id: &str,
    limit: u64,
    message: String,
) -> ServiceError {
    expiry_refused(app, account_id, false, limit, message).await
}

/// 429 (`message`, of `limit`) retried when the first incomplete upload
/// of the account (of its strangers only, with `strangers`) expires.
async fn expiry_refused(
    app: &App,
    account_id: &str,
    strangers: bool,
    limit: u64,
    message: String,
) -> ServiceError {
    let now = app.clock.now_ms();
    let next_expiry = match app
        .meta
        .next_upload_expiry(account_id, now, strangers)
        .await
    {
        Ok(at) => at,
        Err(e) => return e.into(),
    };
    let wait = (next_expiry.saturating_sub(now) + 999) / 1000;
    ServiceError::RateLimited {
        message,
        limit,
        reset: now / 1000 + wait,
        now: now / 1000,
    }
}

/// The type a file starting with `head` is stored as when the policy checks
/// types (None: it does not, and the name and declared type decide), or
/// the policy's refusal (415).
pub(crate) fn sniffed_type(
    policy: &UploadPolicy,
    head: &[u8],
    declared: Option<&str>,
) -> Result<Option<String>, ServiceError> {
    policy
        .type_of(head, declared)
        .map_err(ServiceError::UnsupportedMediaType)
}
