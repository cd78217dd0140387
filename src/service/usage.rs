//! The usage record.

use super::{bandwidth, App};
use crate::api::{Usage, UsageLimits};
use crate::clock::period_of;
use crate::db::{accounts, usage, Account};
use crate::error::ApiError;

pub(crate) async fn record(app: &App, account: &Account) -> Result<Usage, ApiError> {
    let period = period_of(app.clock.now());
    let (acc, key) = (account.id.clone(), period.key.clone());
    let read = app.db.run(move |c| {
        let storage = accounts::get(c, &acc)?
            .map(|a| a.storage_bytes)
            .unwrap_or(0);
        Ok((storage, usage::of_period(c, &acc, &key)?))
    });
    let ((storage, (uploads, bandwidth)), unflushed) =
        bandwidth::read_with_unflushed(app, &account.id, &period.key, read).await?;
    let plan = app.plan_of(account);
    Ok(Usage {
        storage_bytes: storage,
        bandwidth_bytes: bandwidth + unflushed,
        upload_count: uploads,
        period_start: period.start_date,
        plan: Some(plan.name.clone()),
        limits: Some(UsageLimits {
            storage_bytes: plan.storage,
            bandwidth_bytes: plan.bandwidth,
            upload_count: plan.uploads,
        }),
    })
}
