//! `filestore admin verify [--json] [--rate SIZE]` (CONTRACT §20): every
//! file's blob checked against its SHA-256 (`service::verify`), beside a
//! running `serve`; exit 0 when every file is there and whole, 1 when not.

use super::error::CliError;
use super::output::{stderr_line, Printer};
use crate::client::error::exit;
use crate::clock::Clock;
use crate::config::Config;
use crate::db::MetaStore;
use crate::service::admin::AdminError;
use crate::service::verify::{self, Report, VerifyError};
use crate::service::StartError;

/// `filestore admin verify`'s flags (`--json` is the global one).
#[derive(Debug, clap::Args)]
pub(crate) struct VerifyArgs {
    /// Read blobs at most this fast: a size a second (16MiB, 16MiB/s) or bytes a second
    /// (default: as fast as the store gives them)
    #[arg(long, value_name = "SIZE", value_parser = rate)]
    pub rate: Option<u64>,
}

/// `--rate`: bytes a second as a size (`16MiB`, `16MiB/s`) or a number.
pub(crate) fn rate(s: &str) -> Result<u64, String> {
    let t = s.trim();
    crate::config::parse_bytes(t.strip_suffix("/s").unwrap_or(t))
}

/// Runs it: the report on stdout (one JSON object with `--json`), the
/// exit status.
pub(crate) async fn run(
    meta: &dyn MetaStore,
    config: &Config,
    args: &VerifyArgs,
    out: Printer,
) -> Result<u8, CliError> {
    let store = crate::service::open_store(config).await?;
    let clock = Clock::new();
    let report = verify::verify(meta, &*store, args.rate.unwrap_or(0), || clock.now_ms())
        .await
        .map_err(|e| match e {
            VerifyError::Db(e) => CliError::Admin(AdminError::Db(e)),
            VerifyError::Store(e) => CliError::Start(StartError::Store(e)),
        })?;
    if out.is_json() {
        let value = serde_json::to_value(&report)
            .map_err(|e| crate::client::ClientError::Protocol(format!("cannot encode: {e}")))?;
        out.record(&value)?;
    } else {
        for line in lines(&report) {
            out.line(&line)?;
        }
    }
    if report.clean() {
        Ok(exit::OK)
    } else {
        stderr_line(&format!(
            "{} file(s) missing, {} damaged (marked: never served whole); \
             `filestore admin verify --repair-from BACKUP` puts them back",
            report.missing.len(),
            report.damaged.len()
        ));
        Ok(exit::OTHER)
    }
}

fn lines(r: &Report) -> Vec<String> {
    let mut out: Vec<String> = r
        .missing
        .iter()
        .map(|f| format!("missing   {}  {}", f.id, f.path))
        .chain(
            r.damaged
                .iter()
                .map(|f| format!("damaged   {}  {}", f.id, f.path)),
        )
        .chain(r.orphaned.iter().map(|o| format!("orphaned  {}", o.blob)))
        .collect();
    out.push(format!(
        "{} files, {} bytes checked: {} missing, {} damaged, {} orphaned blob(s)",
        r.files,
        r.bytes,
        r.missing.len(),
        r.damaged.len(),
        r.orphaned.len()
    ));
    out
}
