//! Why a configuration was refused.

use std::path::PathBuf;

/// A configuration that cannot be used: the command line reports it as a
/// usage error (exit 2) with the message.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config {}: {source}", path.display())]
    Parse {
        path: PathBuf,
        source: toml::de::Error,
    },
    #[error("{setting} {}: {source}", path.display())]
    SecretFile {
        setting: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// A value out of range, a missing companion setting, an unknown name.
    #[error("{0}")]
    Invalid(String),
}

impl From<String> for ConfigError {
    fn from(message: String) -> Self {
        ConfigError::Invalid(message)
    }
}

impl From<&str> for ConfigError {
    fn from(message: &str) -> Self {
        ConfigError::Invalid(message.to_string())
    }
}
