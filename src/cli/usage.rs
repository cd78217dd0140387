//! `filestore usage`: storage, bandwidth and uploads of the billing period;
//! with quotas and percentages when the server reports the plan's limits.

use super::context::{Ctx, NetArgs};
use super::format;
use crate::client::ClientError;
use serde_json::Value;

/// Show the account's usage this billing period
#[derive(Debug, clap::Args)]
#[command(after_help = super::EXIT_CODES_SHORT, after_long_help = super::EXIT_CODES_LONG)]
pub struct UsageArgs {
    #[command(flatten)]
    pub net: NetArgs,
}

/// Runs the command; gives the exit status.
pub async fn run(args: UsageArgs, ctx: &Ctx) -> Result<u8, ClientError> {
    let client = ctx.client(&args.net)?;
    let fetched = client.usage().await?;
    if ctx.out.is_json() {
        ctx.out.record(&fetched.raw)?;
        return Ok(0);
    }
    let u = &fetched.record;
    let limits = Limits::from_raw(&fetched.raw);
    if let Some(plan) = fetched.raw.get("plan").and_then(Value::as_str) {
        ctx.out.line(&format!("{:<10} {plan}", "plan"))?;
    }
    ctx.out
        .line(&format!("{:<10} since {}", "period", u.period_start))?;
    let sized = |n| format::bytes(n);
    let counted = |n: u64| n.to_string();
    ctx.out
        .line(&measure("storage", u.storage_bytes, limits.storage, &sized))?;
    ctx.out.line(&measure(
        "bandwidth",
        u.bandwidth_bytes,
        limits.bandwidth,
        &sized,
    ))?;
    ctx.out.line(&measure(
        "uploads",
        u.upload_count,
        limits.uploads,
        &counted,
    ))?;
    Ok(0)
}

/// One line: `storage    1.20 MB of 1.00 GB (0.1%)`, or without the quota.
fn measure(label: &str, used: u64, limit: Option<u64>, show: &dyn Fn(u64) -> String) -> String {
    match limit {
        Some(of) => format!(
            "{label:<10} {} of {} ({})",
            show(used),
            show(of),
            format::percent(used, of)
        ),
        None => format!("{label:<10} {}", show(used)),
    }
}

/// Quotas, from the usage record's `limits` object (`storage_bytes`,
/// `bandwidth_bytes`, `upload_count`); absent from servers that do not report them.
#[derive(Debug, Default, PartialEq, Eq)]
struct Limits {
    storage: Option<u64>,
    bandwidth: Option<u64>,
    uploads: Option<u64>,
}

impl Limits {
    fn from_raw(raw: &Value) -> Limits {
        let pick = |name: &str| {
            raw.get("limits")
                .and_then(|l| l.get(name))
                .and_then(Value::as_u64)
        };
        Limits {
            storage: pick("storage_bytes"),
            bandwidth: pick("bandwidth_bytes"),
            uploads: pick("upload_count"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_optional() {
        assert_eq!(Limits::from_raw(&serde_json::json!({})), Limits::default());
        let l = Limits::from_raw(&serde_json::json!({
            "limits": {"storage_bytes": 10, "upload_count": 5}
        }));
        assert_eq!(
            l,
            Limits {
                storage: Some(10),
                bandwidth: None,
                uploads: Some(5)
            }
        );
    }

    #[test]
    fn lines() {
        let show = |n: u64| n.to_string();
        assert_eq!(
            measure("uploads", 1, Some(4), &show),
            "uploads    1 of 4 (25.0%)"
        );
        assert_eq!(measure("uploads", 1, None, &show), "uploads    1");
    }
}
