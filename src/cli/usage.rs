//! `filestore usage`: storage, bandwidth and uploads of the billing period;
//! with quotas and percentages when the server reports the plan's limits,
//! and the storage that incomplete resumable uploads reserve when they do.

use super::context::{Ctx, NetArgs};
use super::format;
use crate::api::Usage;
use crate::client::ClientError;

/// Show the account's usage this billing period
#[derive(Debug, clap::Args)]
#[command(after_help = super::exit_codes::EXIT_CODES_SHORT, after_long_help = super::exit_codes::EXIT_CODES_LONG)]
pub(crate) struct UsageArgs {
    #[command(flatten)]
    pub net: NetArgs,
}

/// Runs the command; gives the exit status.
pub(crate) async fn run(args: UsageArgs, ctx: &Ctx) -> Result<u8, ClientError> {
    let client = ctx.client(&args.net)?;
    let fetched = client.usage().await?;
    if ctx.out.is_json() {
        // The record exactly as the server sent it (its fields, its order).
        ctx.out.record(&fetched.raw)?;
        return Ok(0);
    }
    for line in lines(&fetched.record) {
        ctx.out.line(&line)?;
    }
    Ok(0)
}

/// The human report: plan (when reported), period, and each counter with
/// its quota and percentage when the server reports the plan's limits.
pub(crate) fn lines(u: &Usage) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(plan) = &u.plan {
        out.push(format!("{:<10} {plan}", "plan"));
    }
    out.push(format!("{:<10} since {}", "period", u.period_start));
    let limits = u.limits.as_ref();
    let sized = |n| format::bytes(n);
    let counted = |n: u64| n.to_string();
    out.push(measure(
        "storage",
        u.storage_bytes,
        limits.map(|l| l.storage_bytes),
        &sized,
    ));
    if u.reserved_bytes > 0 {
        out.push(format!(
            "{:<10} {} by incomplete resumable uploads",
            "reserved",
            sized(u.reserved_bytes)
        ));
    }
    out.push(measure(
        "bandwidth",
        u.bandwidth_bytes,
        limits.map(|l| l.bandwidth_bytes),
        &sized,
    ));
    out.push(measure(
        "uploads",
        u.upload_count,
        limits.map(|l| l.upload_count),
        &counted,
    ));
    out
}

/// One line: `storage    1.20 MB of 1.00 GB (0.1%)`, or without the quota.
/// A limit of [`UNLIMITED`](crate::config::UNLIMITED) is none.
fn measure(label: &str, used: u64, limit: Option<u64>, show: &dyn Fn(u64) -> String) -> String {
    match limit {
        Some(of) if of >= crate::config::UNLIMITED => {
            format!("{label:<10} {} (no limit)", show(used))
        }
        Some(of) => format!(
            "{label:<10} {} of {} ({})",
            show(used),
            show(of),
            format::percent(used, of)
        ),
        None => format!("{label:<10} {}", show(used)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::UsageLimits;

    fn usage(plan: Option<&str>, limits: Option<UsageLimits>) -> Usage {
        Usage {
            storage_bytes: 1_500_000,
            reserved_bytes: 0,
            bandwidth_bytes: 0,
            upload_count: 1,
            period_start: "2025-01-01T00:00:00Z".into(),
            plan: plan.map(str::to_string),
            limits,
        }
    }

    #[test]
    fn with_plan_and_limits() {
        let u = usage(
            Some("free"),
            Some(UsageLimits {
                storage_bytes: 1_000_000_000,
                bandwidth_bytes: 10_000_000_000,
                upload_count: 4,
            }),
        );
        assert_eq!(
            lines(&u),
            [
                "plan       free",
                "period     since 2025-01-01T00:00:00Z",
                "storage    1.50 MB of 1.00 GB (0.1%)",
                "bandwidth  0 B of 10.00 GB (0.0%)",
                "uploads    1 of 4 (25.0%)",
            ]
        );
    }

    #[test]
    fn limits_are_optional() {
        let mut u = usage(None, None);
        u.reserved_bytes = 2_000;
        assert_eq!(
            lines(&u),
            [
                "period     since 2025-01-01T00:00:00Z",
                "storage    1.50 MB",
                "reserved   2.00 kB by incomplete resumable uploads",
                "bandwidth  0 B",
                "uploads    1",
            ]
        );
        // A server without the additions still decodes.
        let raw = serde_json::json!({
            "storage_bytes": 1, "bandwidth_bytes": 2, "upload_count": 3,
            "period_start": "2025-01-01T00:00:00Z"
        });
        let u: Usage = serde_json::from_value(raw).unwrap();
        assert_eq!((u.plan, u.limits, u.reserved_bytes), (None, None, 0));
    }

    #[test]
    fn an_unlimited_quota_says_no_limit() {
        let l = UsageLimits {
            storage_bytes: crate::config::UNLIMITED,
            bandwidth_bytes: crate::config::UNLIMITED,
            upload_count: crate::config::UNLIMITED,
        };
        let out = lines(&usage(Some("owner"), Some(l)));
        assert_eq!(out[2], "storage    1.50 MB (no limit)");
        assert_eq!(out[4], "uploads    1 (no limit)");
    }
}
