//! The binary's one error type: what any command fails with, with its
//! stable code and exit status (docs/decisions.md, "Command line"). `main` prints it as one line
//! `error: <code>: <message>` and exits with [`CliError::exit_code`].

use crate::client::error::exit;
use crate::client::ClientError;
use crate::config::ConfigError;
use crate::db::DbError;
use crate::service::admin::AdminError;
use crate::service::StartError;

#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    /// A client command's failure (and a closed stdout, for every command).
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The server's configuration was refused.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// An `admin` command was refused or failed.
    #[error(transparent)]
    Admin(#[from] AdminError),
    /// `serve` could not open its data dir, database or blob store.
    #[error(transparent)]
    Start(#[from] StartError),
    /// `admin backup` or `admin restore` failed (a target not empty, bytes
    /// that do not match their SHA-256 named).
    #[error(transparent)]
    Backup(#[from] crate::backup::BackupError),
    /// `serve` could not bind its address.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: String,
        source: std::io::Error,
    },
}

impl From<DbError> for CliError {
    fn from(e: DbError) -> Self {
        CliError::Admin(AdminError::Db(e))
    }
}

impl CliError {
    /// Standard output was closed by its reader: the command succeeded.
    pub(crate) fn is_broken_pipe(&self) -> bool {
        matches!(self, CliError::Client(ClientError::BrokenPipe))
    }

    /// The machine-readable code of the error line.
    pub(crate) fn code(&self) -> &str {
        match self {
            CliError::Client(e) => e.code(),
            CliError::Config(_) => "config",
            CliError::Admin(AdminError::NotFound(_)) => "not_found",
            CliError::Admin(AdminError::Invalid(_)) => "invalid",
            CliError::Admin(AdminError::Db(_)) | CliError::Start(_) | CliError::Backup(_) => {
                "failed"
            }
            CliError::Listen { .. } => "listen",
        }
    }

    /// The human-readable message of the error line.
    pub(crate) fn message(&self) -> String {
        match self {
            CliError::Client(e) => e.message().to_string(),
            other => other.to_string(),
        }
    }

    /// The process's exit status.
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            CliError::Client(ClientError::BrokenPipe) => exit::OK,
            CliError::Client(e) => e.exit_code(),
            CliError::Config(_) | CliError::Admin(AdminError::Invalid(_)) => exit::USAGE,
            CliError::Admin(AdminError::NotFound(_)) => exit::NOT_FOUND,
            CliError::Admin(AdminError::Db(_))
            | CliError::Start(_)
            | CliError::Listen { .. }
            | CliError::Backup(_) => exit::OTHER,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_its_code_and_status() {
        let io = || std::io::Error::other("x");
        let cases: Vec<(CliError, &str, u8)> = vec![
            (ClientError::BrokenPipe.into(), "broken_pipe", exit::OK),
            (ClientError::usage("u").into(), "usage", exit::USAGE),
            (
                ConfigError::Invalid("c".into()).into(),
                "config",
                exit::USAGE,
            ),
            (
                AdminError::NotFound("n".into()).into(),
                "not_found",
                exit::NOT_FOUND,
            ),
            (
                AdminError::Invalid("i".into()).into(),
                "invalid",
                exit::USAGE,
            ),
            (
                StartError::Dir {
                    path: "/d".into(),
                    source: io(),
                }
                .into(),
                "failed",
                exit::OTHER,
            ),
            (
                CliError::Listen {
                    addr: "a".into(),
                    source: io(),
                },
                "listen",
                exit::OTHER,
            ),
        ];
        for (e, code, status) in cases {
            assert_eq!((e.code(), e.exit_code()), (code, status), "{e:?}");
            assert!(!e.message().is_empty());
        }
    }
}
