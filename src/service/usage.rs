//! The usage record: stored bytes, what incomplete resumable uploads
//! reserve, the period's counters and the plan's limits.

use super::{bandwidth, App};
use crate::clock::period_of;
use crate::db::Account;
use crate::service::error::ServiceError;

/// Where an account stands in its billing period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Standing {
    pub storage_bytes: u64,
    /// Held by incomplete resumable uploads.
    pub reserved_bytes: u64,
    /// Sent this period, what this node has not yet written included.
    pub bandwidth_bytes: u64,
    pub upload_count: u64,
    /// `YYYY-MM-DD`, the period's first day.
    pub period_start: String,
    pub plan: String,
    pub limits: Limits,
}

/// The plan's limits a usage record shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    pub storage_bytes: u64,
    pub bandwidth_bytes: u64,
    pub upload_count: u64,
}

pub(crate) async fn standing(app: &App, account: &Account) -> Result<Standing, ServiceError> {
    let period = period_of(app.clock.now());
    let read = app.meta.usage(&account.id, &period.key);
    let (counters, unflushed) =
        bandwidth::read_with_unflushed(app, &account.id, &period.key, read).await?;
    let plan = app.plan_of(account);
    let held = app
        .meta
        .commitments(&account.id, &period.key, app.clock.now_ms())
        .await?;
    Ok(Standing {
        storage_bytes: counters.storage_bytes,
        reserved_bytes: held.reserved_bytes,
        bandwidth_bytes: counters.bandwidth_bytes + unflushed,
        upload_count: counters.upload_count,
        period_start: period.start_date,
        plan: plan.name.clone(),
        limits: Limits {
            storage_bytes: plan.storage,
            bandwidth_bytes: plan.bandwidth,
            upload_count: plan.uploads,
        },
    })
}
