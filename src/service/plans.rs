//! Plans in the database (docs/decisions.md, "Plans in the database"): what
//! a node writes there at start, what every node reads back and enforces,
//! and the start-up check that no account is on a plan nobody knows.

use crate::config::{Config, Plan, Plans};
use crate::db::{DbError, MetaStore};

/// A plan a config changed in the database: what it was, what it is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    pub(crate) before: Plan,
    pub(crate) after: Plan,
}

impl Change {
    /// "max_file_size 10000000 -> 20000000, uploads 1000 -> 5000".
    pub(crate) fn describe(&self) -> String {
        let (a, b) = (&self.before, &self.after);
        let mut parts = Vec::new();
        let mut diff = |what: &str, x: String, y: String| {
            if x != y {
                parts.push(format!("{what} {x} -> {y}"));
            }
        };
        diff(
            "max_file_size",
            a.max_file_size.to_string(),
            b.max_file_size.to_string(),
        );
        diff("storage", a.storage.to_string(), b.storage.to_string());
        diff(
            "bandwidth",
            a.bandwidth.to_string(),
            b.bandwidth.to_string(),
        );
        diff("uploads", a.uploads.to_string(), b.uploads.to_string());
        diff(
            "rate_limit",
            a.rate_limit.to_string(),
            b.rate_limit.to_string(),
        );
        diff(
            "rate_window",
            humantime::format_duration(a.rate_window).to_string(),
            humantime::format_duration(b.rate_window).to_string(),
        );
        diff(
            "concurrent_uploads",
            a.concurrent_uploads.to_string(),
            b.concurrent_uploads.to_string(),
        );
        diff(
            "open_uploads",
            a.open_uploads.to_string(),
            b.open_uploads.to_string(),
        );
        diff(
            "public_share",
            a.public_share.fraction().to_string(),
            b.public_share.fraction().to_string(),
        );
        parts.join(", ")
    }
}

/// Writes the config's plans to the database: the built-in plans where the
/// database has none of that name, and (with `apply`) every plan the config
/// names in `[plans.*]`, over what the database has. Gives the plans in
/// force afterwards (the database's, all of them) and what `apply` changed.
pub(crate) async fn sync(
    meta: &dyn MetaStore,
    config: &Config,
    apply: bool,
    now: i64,
) -> Result<(Plans, Vec<Change>), DbError> {
    let mut changes = Vec::new();
    for plan in config.plans.iter() {
        let named = config.configured_plans.contains(&plan.name);
        let only_new = !(apply && named);
        if let Some(before) = meta
            .put_plan(&plan.name, &plan.spec(), only_new, now)
            .await?
        {
            let before = Plan::from_spec(&plan.name, &before).map_err(DbError::Invalid)?;
            changes.push(Change {
                before,
                after: plan.clone(),
            });
        }
    }
    Ok((load(meta).await?, changes))
}

/// The plans in the database.
pub(crate) async fn load(meta: &dyn MetaStore) -> Result<Plans, DbError> {
    let stored = meta.plans().await?;
    let plans = stored
        .iter()
        .map(|p| Plan::from_spec(&p.name, &p.spec))
        .collect::<Result<Vec<_>, _>>()
        .map_err(DbError::Invalid)?;
    Ok(Plans::from_list(plans))
}

/// The accounts on plans that `plans` lacks, as one message naming them
/// (None when every account's plan is known).
pub(crate) async fn unknown_in_use(
    meta: &dyn MetaStore,
    plans: &Plans,
) -> Result<Option<String>, DbError> {
    let unknown: Vec<String> = meta
        .plan_uses()
        .await?
        .into_iter()
        .filter(|u| plans.get(&u.plan).is_none())
        .map(|u| {
            let others = u.accounts.saturating_sub(1);
            let more = if others == 0 {
                String::new()
            } else {
                format!(" and {others} more")
            };
            format!("plan {:?} (account {:?}{more})", u.plan, u.example)
        })
        .collect();
    if unknown.is_empty() {
        return Ok(None);
    }
    Ok(Some(format!(
        "accounts are on plans neither the database nor this config defines: {}; \
         define them under [plans.NAME] in the config (then `filestore admin plan apply`), \
         or move the accounts with `filestore admin account set ID --plan PLAN` \
         (plans known: {})",
        unknown.join(", "),
        plans.names().join(", ")
    )))
}
