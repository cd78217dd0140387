//! The TOML file's layer: `[server]`, `[storage]`, `[database]`, `[images]`, `[console]`, `[webhooks]` and `[plans]`
//! as they are read, before the environment and the flags are laid over them.

use super::plans::{self, opt_bytes, opt_duration, parse_bytes, PlanOverride};
use crate::domain::secret::Secret;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    #[serde(default)]
    pub server: ServerSection,
    #[serde(default)]
    pub storage: StorageConfig,
    #[serde(default)]
    pub plans: BTreeMap<String, PlanOverride>,
    #[serde(default)]
    pub database: DatabaseSection,
    #[serde(default)]
    pub images: super::images::ImagesSection,
    #[serde(default)]
    pub s3: S3Section,
    #[serde(default)]
    pub console: super::console::ConsoleSection,
    #[serde(default)]
    pub webhooks: super::webhooks::WebhooksSection,
}

/// The S3 door (`[s3]`, CONTRACT §18): off unless `listen` is set.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct S3Section {
    /// Address of the S3 listener.
    pub listen: Option<String>,
    /// The region clients sign for (default `us-east-1`).
    pub region: Option<String>,
    /// The address clients use (default `http://<listen>`).
    pub url: Option<String>,
    /// Virtual-host style (`BUCKET.DOMAIN`) when set.
    pub domain: Option<String>,
}

/// Where the metadata lives (`[database]`): SQLite in the data dir when no
/// URL is set, else the PostgreSQL database the URL names (several `serve`
/// nodes may share it).
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct DatabaseSection {
    /// `postgres://user:password@host:port/dbname` (no TLS yet).
    pub url: Option<Secret>,
    /// A file holding `url` (instead of the value itself: it may hold a password).
    pub url_file: Option<PathBuf>,
    /// Deadline of every database call (PostgreSQL); past it, 503.
    #[serde(default, deserialize_with = "opt_duration")]
    pub statement_timeout: Option<Duration>,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ServerSection {
    pub listen: Option<String>,
    pub base_url: Option<String>,
    pub cdn_url: Option<String>,
    pub data_dir: Option<PathBuf>,
    pub default_plan: Option<String>,
    /// Secret for signed URLs; generated once and kept in the database when unset.
    pub signing_secret: Option<Secret>,
    /// A file holding `signing_secret` (instead of the value itself).
    pub signing_secret_file: Option<PathBuf>,
    /// How often expired files and failed blob deletions are processed.
    #[serde(default, deserialize_with = "opt_duration")]
    pub reap_interval: Option<Duration>,
    /// Largest total size of a request's headers (bytes) before 431.
    pub max_header_bytes: Option<usize>,
    /// A request whose headers have not all arrived by then is closed.
    #[serde(default, deserialize_with = "opt_duration")]
    pub header_timeout: Option<Duration>,
    /// A request body that sends no byte for this long is ended.
    #[serde(default, deserialize_with = "opt_duration")]
    pub body_timeout: Option<Duration>,
    /// A keep-alive connection with no request for this long is closed.
    #[serde(default, deserialize_with = "opt_duration")]
    pub idle_timeout: Option<Duration>,
    /// On SIGINT/SIGTERM, requests in flight get this long, then the process exits.
    #[serde(default, deserialize_with = "opt_duration")]
    pub shutdown_timeout: Option<Duration>,
    /// Connections served at once; the next ones wait in the accept queue.
    pub max_connections: Option<usize>,
    /// The most memory the process may take (its peak RSS), whatever
    /// clients send: download buffers are sized from it (default: 1 GiB or
    /// half the machine's memory, the smaller).
    #[serde(default, deserialize_with = "opt_bytes")]
    pub memory_budget: Option<u64>,
    /// A download that has sent nothing for this long is closed.
    #[serde(default, deserialize_with = "opt_duration")]
    pub stall_timeout: Option<Duration>,
    /// Slowest average an upload body may keep (bytes per second, or a size
    /// like `"1KiB"`, with or without `/s`); 0 turns it off.
    #[serde(default, deserialize_with = "opt_rate")]
    pub min_upload_rate: Option<u64>,
    /// Address of the Prometheus `/metrics` listener (off when unset).
    pub metrics_listen: Option<String>,
    /// `text` (default) or `json` log lines.
    pub log_format: Option<LogFormat>,
}

/// How log lines are written (`server.log_format`, `--log-format`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines (colour only on a terminal).
    #[default]
    Text,
    /// One JSON object a line.
    Json,
}

impl std::str::FromStr for LogFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            other => Err(format!("log_format {other:?}: use \"text\" or \"json\"")),
        }
    }
}

/// Blob store settings (`[storage]`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StorageConfig {
    #[serde(default)]
    pub backend: BackendKind,
    pub bucket: Option<String>,
    pub endpoint: Option<String>,
    pub region: Option<String>,
    #[serde(default)]
    pub prefix: String,
    #[serde(default)]
    pub force_path_style: bool,
    pub access_key_id: Option<Secret>,
    pub secret_access_key: Option<Secret>,
    /// A file holding `secret_access_key` (instead of the value itself).
    pub secret_access_key_file: Option<PathBuf>,
    /// Files up to this size keep their bytes in the metadata database
    /// instead of the blob store (default 128 KiB; 0 turns it off).
    #[serde(default, deserialize_with = "opt_bytes")]
    pub inline_max: Option<u64>,
    /// Free space the local store keeps on its volume: an upload that would
    /// leave less is refused with 507 (default: 1 GiB or 5 % of the volume,
    /// the smaller).
    #[serde(default, deserialize_with = "opt_bytes")]
    pub min_free_space: Option<u64>,
    /// Bytes a second the background scrub re-reads blobs at, checking
    /// them against their SHA-256 (default 16 MiB/s; 0 turns it off).
    #[serde(default, deserialize_with = "opt_scrub_rate")]
    pub scrub_rate: Option<u64>,
}

/// `storage.scrub_rate` unless set.
pub(crate) const DEFAULT_SCRUB_RATE: u64 = 16 << 20;

impl StorageConfig {
    /// The scrub's rate in bytes a second; 0: no scrub.
    pub fn scrub_rate(&self) -> u64 {
        self.scrub_rate.unwrap_or(DEFAULT_SCRUB_RATE)
    }
}

/// Where blobs live (`storage.backend`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// A directory under the data dir.
    #[default]
    Local,
    /// An S3-compatible bucket.
    S3,
}

impl std::str::FromStr for BackendKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "local" => Ok(BackendKind::Local),
            "s3" => Ok(BackendKind::S3),
            other => Err(format!(
                "storage.backend {other:?}: use \"local\" or \"s3\""
            )),
        }
    }
}

impl Default for StorageConfig {
    fn default() -> Self {
        Self {
            backend: BackendKind::Local,
            bucket: None,
            endpoint: None,
            region: None,
            prefix: String::new(),
            force_path_style: false,
            access_key_id: None,
            secret_access_key: None,
            secret_access_key_file: None,
            inline_max: None,
            min_free_space: None,
            scrub_rate: None,
        }
    }
}
/// A rate: bytes per second as an integer, or a size (`"1KiB"`, `"2MB/s"`).
pub(super) fn parse_rate(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let t = t.strip_suffix("/s").unwrap_or(t);
    parse_bytes(t).map_err(|e| format!("min_upload_rate: {e}"))
}

/// `storage.scrub_rate`: as [`parse_rate`] (`"16MiB/s"`, `"16MiB"`, bytes; 0 off).
fn opt_scrub_rate<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    plans::opt_count(d, |s: &str| {
        let t = s.trim();
        parse_bytes(t.strip_suffix("/s").unwrap_or(t)).map_err(|e| format!("scrub_rate: {e}"))
    })
}

fn opt_rate<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    plans::opt_count(d, parse_rate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted() {
        let s = StorageConfig {
            secret_access_key: Some(Secret::new("hunter2")),
            access_key_id: Some(Secret::new("AKIA")),
            ..Default::default()
        };
        let shown = format!("{s:?}");
        assert!(!shown.contains("hunter2") && !shown.contains("AKIA"));
    }
}
