//! The usage record, and bandwidth accounting for the CDN route.

use super::App;
use crate::api::{Usage, UsageLimits};
use crate::clock::period_of;
use crate::db::{accounts, usage, Account};
use crate::error::ApiError;

pub async fn record(app: &App, account: &Account) -> Result<Usage, ApiError> {
    let period = period_of(app.clock.now());
    let (acc, key) = (account.id.clone(), period.key.clone());
    let (storage, (uploads, bandwidth)) = app
        .db
        .run(move |c| {
            let storage = accounts::get(c, &acc)?
                .map(|a| a.storage_bytes)
                .unwrap_or(0);
            Ok((storage, usage::of_period(c, &acc, &key)?))
        })
        .await?;
    let plan = app.plan_of(account);
    Ok(Usage {
        storage_bytes: storage,
        bandwidth_bytes: bandwidth,
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

/// Adds bytes sent by the CDN to the account's current period.
pub async fn add_bandwidth(app: &App, account_id: &str, bytes: u64) {
    if bytes == 0 {
        return;
    }
    let (acc, key) = (account_id.to_string(), period_of(app.clock.now()).key);
    if let Err(e) = app
        .db
        .run(move |c| usage::add_bandwidth(c, &acc, &key, bytes))
        .await
    {
        tracing::error!(error = %e, "bandwidth not recorded");
    }
}
