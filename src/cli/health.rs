//! `filestore health [--wait [--timeout 60s]]`: the server's health report;
//! exit 0 only when it is ok, so CI can wait for a server to come up.

use super::context::Ctx;
use super::format;
use crate::api::Health;
use crate::client::{Client, ClientError, Fetched};
use crate::domain::backoff::Backoff;
use std::time::{Duration, Instant};

/// Check the server's health (exit 0 only when ok)
#[derive(Debug, clap::Args)]
#[command(after_help = super::exit_codes::EXIT_CODES_SHORT, after_long_help = super::exit_codes::EXIT_CODES_LONG)]
pub(crate) struct HealthArgs {
    /// Keep asking until the server is ok (or --timeout passes)
    #[arg(long)]
    pub wait: bool,

    /// How long --wait waits: 90, 60s, 1m30s, 1.5h... (at most 365d)
    #[arg(long, value_name = "DURATION", default_value = "60s",
          value_parser = format::wait_duration)]
    pub timeout: Duration,
}

/// Runs the command; gives the exit status.
pub(crate) async fn run(args: HealthArgs, ctx: &Ctx) -> Result<u8, ClientError> {
    let client = ctx.anonymous_client()?;
    let start = Instant::now();
    // The parser caps the timeout at a year; never overflow whatever it is.
    let deadline = start
        .checked_add(args.timeout)
        .or_else(|| start.checked_add(Duration::from_secs(format::MAX_WAIT_SECS)))
        .unwrap_or(start);
    let pauses = Backoff::new(Duration::from_millis(200), Duration::from_secs(2));
    let mut attempt = 0;
    loop {
        let pause = pauses.step(attempt);
        attempt += 1;
        let remaining = deadline.saturating_duration_since(Instant::now());
        let result = check(&client, remaining.max(Duration::from_millis(100))).await;
        // Waiting goes on until the deadline itself, the last pause cut short.
        let left = deadline.saturating_duration_since(Instant::now());
        let last = !args.wait || left.is_zero();
        match result {
            Ok(f) if f.record.status == "ok" => {
                print(ctx, &f)?;
                return Ok(0);
            }
            Ok(f) if last => {
                print(ctx, &f)?;
                return Err(ClientError::Api {
                    status: 503,
                    code: "degraded".into(),
                    message: format!("server is {}: {}", f.record.status, failing(&f.record)),
                });
            }
            Err(e) if last => {
                return Err(if args.wait {
                    e.context(format!(
                        "not healthy after {}",
                        humantime::format_duration(args.timeout)
                    ))
                } else {
                    e
                })
            }
            _ => {}
        }
        tokio::time::sleep(pause.min(left)).await;
    }
}

/// One health request, given up after `limit`.
async fn check(client: &Client, limit: Duration) -> Result<Fetched<Health>, ClientError> {
    match tokio::time::timeout(limit, client.health()).await {
        Ok(result) => result,
        Err(_) => Err(ClientError::Network(format!(
            "no answer within {}",
            humantime::format_duration(limit)
        ))),
    }
}

/// The checks that are not ok: `storage=error`.
fn failing(h: &Health) -> String {
    let bad: Vec<String> = h
        .checks
        .iter()
        .filter(|(_, c)| c.status != "ok")
        .map(|(name, c)| match &c.error {
            Some(e) => format!("{name}={} ({e})", c.status),
            None => format!("{name}={}", c.status),
        })
        .collect();
    if bad.is_empty() {
        "no failing check reported".into()
    } else {
        bad.join(", ")
    }
}

fn print(ctx: &Ctx, f: &Fetched<Health>) -> Result<(), ClientError> {
    if ctx.out.is_json() {
        return ctx.out.record(&f.raw);
    }
    ctx.out.line(&f.record.status)?;
    for (name, c) in &f.record.checks {
        ctx.out
            .line(&format!("  {name:<10} {:<6} {} ms", c.status, c.latency_ms))?;
    }
    Ok(())
}
