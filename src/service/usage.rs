//! The usage record: stored bytes, what incomplete resumable uploads
//! reserve, the period's counters and the plan's limits.

use super::{bandwidth, App};
use crate::api::{Usage, UsageLimits};
use crate::clock::period_of;
use crate::db::Account;
use crate::service::error::ServiceError;

pub(crate) async fn record(app: &App, account: &Account) -> Result<Usage, ServiceError> {
    let period = period_of(app.clock.now());
    let read = app.meta.usage(&account.id, &period.key);
    let (counters, unflushed) =
        bandwidth::read_with_unflushed(app, &account.id, &period.key, read).await?;
    let plan = app.plan_of(account);
    let held = app
        .meta
        .commitments(&account.id, &period.key, app.clock.now_ms())
        .await?;
    Ok(Usage {
        storage_bytes: counters.storage_bytes,
        reserved_bytes: held.reserved_bytes,
        bandwidth_bytes: counters.bandwidth_bytes + unflushed,
        upload_count: counters.upload_count,
        period_start: period.start_date,
        plan: Some(plan.name.clone()),
        limits: Some(UsageLimits {
            storage_bytes: plan.storage,
            bandwidth_bytes: plan.bandwidth,
            upload_count: plan.uploads,
        }),
    })
}
