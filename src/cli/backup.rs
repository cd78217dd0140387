//! `filestore admin backup` and `admin restore` (the work is `crate::backup`'s).

use super::error::CliError;
use super::globals::GlobalArgs;
use super::output::Printer;
use crate::client::ClientError;
use crate::config::Config;
use crate::domain::secret::Secret;

#[derive(Debug, clap::Args)]
pub(crate) struct BackupArgs {
    /// A directory, or s3://BUCKET/PREFIX (standard AWS credentials); it holds many backups
    #[arg(value_name = "DEST")]
    dest: String,
    /// The S3-compatible store of an s3:// DEST (default: AWS)
    #[arg(long, value_name = "URL")]
    endpoint: Option<String>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct RestoreArgs {
    /// A directory or s3://BUCKET/PREFIX holding backups (the newest is restored)
    #[arg(value_name = "SRC")]
    src: String,
    /// Restore into this PostgreSQL database (empty) instead of the data dir's SQLite
    #[arg(long, value_name = "URL")]
    database: Option<String>,
    /// The S3-compatible store of an s3:// SRC (default: AWS)
    #[arg(long, value_name = "URL")]
    endpoint: Option<String>,
}

fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| ClientError::io("starting the async runtime", e))?)
}

pub(crate) fn backup(args: &BackupArgs, config: &Config, g: &GlobalArgs) -> Result<(), CliError> {
    if config.database_url.is_none() && !config.data_dir.is_dir() {
        return Err(crate::config::ConfigError::Invalid(format!(
            "data dir {} does not exist (a typo? `filestore serve` creates it on its first start)",
            config.data_dir.display()
        ))
        .into());
    }
    let s = runtime()?.block_on(crate::backup::backup(
        config,
        &args.dest,
        args.endpoint.as_deref(),
    ))?;
    let human = format!(
        "backup {} of {} files ({} bytes) in {}: {} new blobs ({} bytes) copied in {} s",
        s.id, s.files, s.bytes, args.dest, s.new_blobs, s.new_bytes, s.seconds
    );
    emit(g, &s, &human)
}

pub(crate) fn restore(
    args: RestoreArgs,
    mut config: Config,
    g: &GlobalArgs,
) -> Result<(), CliError> {
    if let Some(url) = args.database {
        config.database_url = Some(Secret::new(url));
    }
    let r = runtime()?.block_on(crate::backup::restore(
        &config,
        &args.src,
        args.endpoint.as_deref(),
    ))?;
    let human = format!(
        "restored backup {} of {}: {} files ({} bytes) in {} s",
        r.backup, args.src, r.files, r.bytes, r.seconds
    );
    emit(g, &r, &human)
}

fn emit<T: serde::Serialize>(g: &GlobalArgs, value: &T, human: &str) -> Result<(), CliError> {
    let out = Printer::new(g.json);
    if out.is_json() {
        let value = serde_json::to_value(value)
            .map_err(|e| ClientError::Protocol(format!("cannot encode record: {e}")))?;
        out.record(&value)?;
    } else {
        out.line(human)?;
    }
    Ok(())
}
