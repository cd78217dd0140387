//! Flags every subcommand accepts, before or after its name (clap `global`).

use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Clone, Default, Args)]
pub struct GlobalArgs {
    /// Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]
    #[arg(long, global = true, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    /// Machine-readable output: one JSON record, or JSON Lines for many
    #[arg(long, global = true)]
    pub json: bool,

    /// No progress and no informational output
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// Server URL for client commands [env: FILESTORE_URL]
    #[arg(long, global = true, value_name = "URL")]
    pub server: Option<String>,

    /// API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]
    #[arg(long, global = true, value_name = "KEY")]
    pub api_key: Option<String>,

    /// Client profile in the config file [env: FILESTORE_PROFILE]
    #[arg(long, global = true, value_name = "NAME")]
    pub profile: Option<String>,
}
