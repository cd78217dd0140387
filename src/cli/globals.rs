//! Flags every subcommand accepts, before or after its name (clap `global`).
//! Each subcommand's help shows them under a heading that says who uses
//! them: `serve`/`admin` read the server flags, the clients the client ones.

use clap::Args;
use std::path::PathBuf;

/// Help heading of the flags only `serve` and `admin` read.
const SERVER: &str = "Server options (serve, admin)";
/// Help heading of the flags only the client commands read.
const CLIENT: &str =
    "Client options (login, upload, list, get, download, sign, token, delete, usage, health)";

#[derive(Debug, Clone, Default, Args)]
pub(crate) struct GlobalArgs {
    /// Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]
    #[arg(long, global = true, value_name = "FILE", help_heading = SERVER)]
    pub config: Option<PathBuf>,

    /// Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]
    #[arg(long, global = true, value_name = "DIR", help_heading = SERVER)]
    pub data_dir: Option<PathBuf>,

    /// Machine-readable output: one JSON record, or JSON Lines for many
    #[arg(long, global = true)]
    pub json: bool,

    /// No progress and no informational output
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// Server URL for client commands [env: FILESTORE_URL]
    #[arg(long, global = true, value_name = "URL", help_heading = CLIENT)]
    pub server: Option<String>,

    /// API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]
    #[arg(long, global = true, value_name = "KEY", help_heading = CLIENT)]
    pub api_key: Option<String>,

    /// Client profile in the config file [env: FILESTORE_PROFILE]
    #[arg(long, global = true, value_name = "NAME", help_heading = CLIENT)]
    pub profile: Option<String>,
}

/// The client flags as `serve` and `admin` take them: still accepted where
/// they were (they mean nothing there), but left out of their help. A
/// subcommand that defines a flag itself does not get the global one.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct IgnoredClientFlags {
    #[arg(long, hide = true, value_name = "URL")]
    pub server: Option<String>,
    #[arg(long, hide = true, value_name = "KEY")]
    pub api_key: Option<String>,
    #[arg(long, hide = true, value_name = "NAME")]
    pub profile: Option<String>,
}
