//! The layers over the file: the environment (`FILESTORE_*`) and the
//! command-line flags.

use super::file::LogFormat;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Flags that override the file and the environment (`serve` and `admin`).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub config: Option<PathBuf>,
    pub listen: Option<String>,
    pub data_dir: Option<PathBuf>,
    pub base_url: Option<String>,
    pub cdn_url: Option<String>,
    pub metrics_listen: Option<String>,
    /// `--s3-listen`: the S3 door's address.
    pub s3_listen: Option<String>,
    pub log_format: Option<LogFormat>,
}
/// The environment, as a value (so tests need not touch the process's).
#[derive(Debug, Clone, Default)]
pub struct Env(BTreeMap<String, String>);

impl Env {
    pub fn empty() -> Env {
        Env::default()
    }
    pub fn from_process() -> Env {
        Env(std::env::vars()
            .filter(|(k, _)| k.starts_with("FILESTORE_"))
            .collect())
    }
    #[must_use]
    pub fn with(mut self, k: &str, v: &str) -> Env {
        self.0.insert(k.to_string(), v.to_string());
        self
    }
    pub(super) fn get(&self, k: &str) -> Option<String> {
        self.0.get(k).filter(|v| !v.is_empty()).cloned()
    }
}
