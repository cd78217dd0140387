//! The usage record: stored bytes, what incomplete resumable uploads
//! reserve, the period's counters and the plan's limits; as a server
//! answers it (`GET /v1/usage`) and as an operator reads it from the store
//! (`admin account usage`).

use super::{bandwidth, App};
use crate::clock::{period_of, Clock};
use crate::config::{Config, Plan, Plans};
use crate::db::{Account, DbError, MetaStore, UsageCounters};
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

impl Standing {
    fn of(
        counters: &UsageCounters,
        unflushed: u64,
        reserved_bytes: u64,
        period_start: String,
        plan: &Plan,
    ) -> Standing {
        Standing {
            storage_bytes: counters.storage_bytes,
            reserved_bytes,
            bandwidth_bytes: counters.bandwidth_bytes + unflushed,
            upload_count: counters.upload_count,
            period_start,
            plan: plan.name.clone(),
            limits: Limits {
                storage_bytes: plan.storage,
                bandwidth_bytes: plan.bandwidth,
                upload_count: plan.uploads,
            },
        }
    }
}

/// The plan in force for `account` among `plans`: its own; one that is
/// gone takes the default plan (start-up refuses to run with such
/// accounts, so this is a plan removed since).
pub(crate) fn plan_for(plans: &Plans, config: &Config, account: &Account) -> Plan {
    plans
        .get(&account.plan)
        .or_else(|| plans.get(&config.default_plan))
        .or_else(|| config.plans.get(&config.default_plan))
        .cloned()
        .expect("the default plan is in the config")
}

pub(crate) async fn standing(app: &App, account: &Account) -> Result<Standing, ServiceError> {
    let period = period_of(app.clock.now());
    let read = app.meta.usage(&account.id, &period.key);
    let (counters, unflushed) =
        bandwidth::read_with_unflushed(app, &account.id, &period.key, read).await?;
    let held = app
        .meta
        .commitments(&account.id, &period.key, app.clock.now_ms())
        .await?;
    Ok(Standing::of(
        &counters,
        unflushed,
        held.reserved_bytes,
        period.start_date,
        &app.plan_of(account),
    ))
}

/// `account`'s standing read straight from the store, by a process that
/// serves nothing (`admin account usage`): the bandwidth a running server
/// counted in its last second and has not written yet is not in it.
pub(crate) async fn standing_in_store(
    meta: &dyn MetaStore,
    config: &Config,
    account: &Account,
    clock: &Clock,
) -> Result<Standing, DbError> {
    let period = period_of(clock.now());
    let counters = meta.usage(&account.id, &period.key).await?;
    let held = meta
        .commitments(&account.id, &period.key, clock.now_ms())
        .await?;
    let plans = super::plans::load(meta).await?;
    Ok(Standing::of(
        &counters,
        0,
        held.reserved_bytes,
        period.start_date,
        &plan_for(&plans, config, account),
    ))
}
