//! Flags every subcommand accepts, before or after its name (clap `global`).
//! Each subcommand's help shows them under a heading that says who uses
//! them: `serve`/`admin` read the server flags, the clients the client ones.

use clap::Args;
use std::path::PathBuf;

/// Help heading of the flags only `serve` and `admin` read.
const SERVER: &str = "Server options (serve, admin)";
/// Help heading of the flags only the client commands read.
const CLIENT: &str = "Client options (every command but serve, admin and completions)";

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

/// The client flags as `serve` and `admin` take them: left out of their
/// help, and refused when given ([`refuse_client_flags`]), before or after
/// the subcommand's name. A subcommand that defines a flag itself does not
/// get the global one; these are global within `admin`, so that `admin
/// account list --server X` is refused as `admin --server X …` is.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct IgnoredClientFlags {
    #[arg(long, global = true, hide = true, value_name = "URL")]
    pub server: Option<String>,
    #[arg(long, global = true, hide = true, value_name = "KEY")]
    pub api_key: Option<String>,
    #[arg(long, global = true, hide = true, value_name = "NAME")]
    pub profile: Option<String>,
}

/// `--json` and `--quiet` as `serve` takes them: left out of its help, and
/// refused when given (it writes no results; its logs go to stderr, their
/// form set by --log-format).
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct IgnoredOutputFlags {
    #[arg(long, hide = true)]
    pub json: bool,
    #[arg(short, long, hide = true)]
    pub quiet: bool,
}

/// The usage error of a client flag given to `serve` or `admin` (before the
/// subcommand's name, `g`, or after it, `own`), which work on the data dir
/// or the database directly, not through a server.
pub(crate) fn refuse_client_flags(
    command: &str,
    g: &GlobalArgs,
    own: &IgnoredClientFlags,
) -> Result<(), crate::client::ClientError> {
    let given = [
        ("--server", g.server.is_some() || own.server.is_some()),
        ("--api-key", g.api_key.is_some() || own.api_key.is_some()),
        ("--profile", g.profile.is_some() || own.profile.is_some()),
    ];
    match given.iter().find(|(_, given)| *given) {
        Some((flag, _)) => Err(crate::client::ClientError::usage(format!(
            "{flag} is for the client commands: `filestore {command}` works on the data dir \
or the database directly (--data-dir, --config, FILESTORE_DATABASE_URL), not through a server"
        ))),
        None => Ok(()),
    }
}

/// The usage error of `--json` or `--quiet` given to `serve`.
pub(crate) fn refuse_output_flags(
    g: &GlobalArgs,
    own: &IgnoredOutputFlags,
) -> Result<(), crate::client::ClientError> {
    let flag = if g.json || own.json {
        "--json"
    } else if g.quiet || own.quiet {
        "--quiet"
    } else {
        return Ok(());
    };
    Err(crate::client::ClientError::usage(format!(
        "{flag} is for the client and admin commands: `filestore serve` prints no results, \
and its logs go to stderr (--log-format json for JSON lines, RUST_LOG for the level)"
    )))
}
