//! `filestore admin verify [--json] [--rate SIZE] [--repair-from SRC]`
//! (CONTRACT §20): every file's blob checked against its SHA-256
//! (`service::verify`), beside a running `serve`; with `--repair-from`, the
//! files missing or damaged put back from a backup (`service::repair`).
//! Exit 0 when every file is there and whole (after the repair), 1 when not.

use super::error::CliError;
use super::output::{stderr_line, Printer};
use crate::backup::{BackupError, Source};
use crate::client::error::exit;
use crate::clock::Clock;
use crate::config::Config;
use crate::db::MetaStore;
use crate::service::admin::AdminError;
use crate::service::verify::{self, FileRef, Report, VerifyError};
use crate::service::{repair, StartError};
use std::fmt::Write as _;

/// `filestore admin verify`'s flags (`--json` is the global one).
#[derive(Debug, clap::Args)]
pub(crate) struct VerifyArgs {
    /// Read blobs at most this fast: a size a second (16MiB, 16MiB/s) or bytes a second
    /// (default: as fast as the store gives them)
    #[arg(long, value_name = "SIZE", value_parser = rate)]
    pub rate: Option<u64>,
    /// Put back the files found missing or damaged from the backups in SRC (a directory or
    /// s3://BUCKET/PREFIX, as `admin backup` wrote them) and clear their marks; exit 0 when
    /// all were repaired
    #[arg(long, value_name = "SRC")]
    pub repair_from: Option<String>,
    /// The S3-compatible store of an s3:// SRC (default: AWS)
    #[arg(long, value_name = "URL", requires = "repair_from")]
    pub endpoint: Option<String>,
}

/// `--rate`: bytes a second as a size (`16MiB`, `16MiB/s`) or a number.
pub(crate) fn rate(s: &str) -> Result<u64, String> {
    let t = s.trim();
    crate::config::parse_bytes(t.strip_suffix("/s").unwrap_or(t))
}

fn failed(e: VerifyError) -> CliError {
    match e {
        VerifyError::Db(e) => CliError::Admin(AdminError::Db(e)),
        VerifyError::Store(e) => CliError::Start(StartError::Store(e)),
        VerifyError::Source(m) => CliError::Backup(BackupError::Repo(m)),
    }
}

/// Runs it: the report on stdout (one JSON object with `--json`), the
/// exit status.
pub(crate) async fn run(
    meta: &dyn MetaStore,
    config: &Config,
    args: &VerifyArgs,
    out: Printer,
) -> Result<u8, CliError> {
    // A SRC that holds no backup is refused before anything is read.
    let source = match &args.repair_from {
        Some(src) => Some(Source::open(src, args.endpoint.as_deref(), &config.storage).await?),
        None => None,
    };
    let store = crate::service::open_store(config).await?;
    let clock = Clock::new();
    let mut report = verify::verify(meta, &*store, args.rate.unwrap_or(0), || clock.now_ms())
        .await
        .map_err(failed)?;
    if let Some(source) = &source {
        // Spooled beside the local store's blobs, as serve spools uploads.
        let dir = config.data_dir.join("tmp");
        crate::private_dir::create(&dir).map_err(|e| BackupError::io(&dir, e))?;
        let fetch = |sha256: String, size: u64| {
            let dir = dir.clone();
            async move {
                source
                    .fetch(&sha256, size, &dir)
                    .await
                    .map_err(|e| e.to_string())
            }
        };
        repair::repair(meta, &*store, &mut report, fetch)
            .await
            .map_err(failed)?;
    }
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
        return Ok(exit::OK);
    }
    let (missing, damaged) = (report.missing.len(), report.damaged.len());
    stderr_line(&match &source {
        None => format!(
            "{missing} file(s) missing, {damaged} damaged (marked: never served whole); \
             `filestore admin verify --repair-from BACKUP` puts them back"
        ),
        Some(s) => format!(
            "{missing} file(s) missing, {damaged} damaged not repaired: {} holds no \
             matching bytes of them",
            s.describe()
        ),
    });
    Ok(exit::OTHER)
}

fn lines(r: &Report) -> Vec<String> {
    let named = |what: &str, files: &[FileRef]| -> Vec<String> {
        files
            .iter()
            .map(|f| format!("{what:<9} {}  {}", f.id, f.path))
            .collect()
    };
    let repaired = r.repaired.as_deref().unwrap_or_default();
    let mut out = named("repaired", repaired);
    out.extend(named("missing", &r.missing));
    out.extend(named("damaged", &r.damaged));
    out.extend(r.orphaned.iter().map(|o| format!("orphaned  {}", o.blob)));
    let mut summary = format!(
        "{} files, {} bytes checked: {} missing, {} damaged, {} orphaned blob(s)",
        r.files,
        r.bytes,
        r.missing.len(),
        r.damaged.len(),
        r.orphaned.len()
    );
    if r.repaired.is_some() {
        let _ = write!(summary, "; {} repaired", repaired.len());
    }
    out.push(summary);
    out
}
